"""Least privilege in the database (issue 26, item 5), proved on the real server:
`gmtool db grant` makes the store's host, operator and support roles; support can only
read; operators append GM requests but no events or ledger rows; only hosts write events
and settlements; nobody updates or deletes evidence, nor disables what refuses it. Each
refusal is PostgreSQL's own, to a login role that is a member of the role."""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import psycopg
import pytest
from conftest import OPERATOR, Gmtool
from postgres import Databases, databases, url_of

from gmtool.store.pg_roles import EVIDENCE, EXPECTED_TABLES

Denied = psycopg.errors.InsufficientPrivilege
KINDS = ("host", "operator", "support")


class Store:
    """The module's PostgreSQL store: its URL, and a login role of each kind."""

    def __init__(self, database: str) -> None:
        self.database = database
        self.url = url_of(database)
        self.logins = {kind: f"{database}_{kind[0]}login" for kind in KINDS}

    def owner(self) -> psycopg.Connection:
        return psycopg.connect(self.url, autocommit=True)

    def as_(self, kind: str) -> psycopg.Connection:
        return psycopg.connect(url_of(self.database, self.logins[kind]), autocommit=True)


@pytest.fixture(scope="module")
def server() -> Iterator[Databases]:
    yield from databases("roles")


@pytest.fixture(scope="module")
def store(server: Databases, gm: Gmtool) -> Store:
    made = Store(server.new())
    gm("db", "init", "--db", made.url, "--as", OPERATOR)
    run = gm(
        "db",
        "grant",
        "--db",
        made.url,
        "--host",
        made.logins["host"],
        "--operator",
        made.logins["operator"],
        "--support",
        made.logins["support"],
    )
    for kind in KINDS:
        assert f"{made.database}_{kind}: {kind} ({made.logins[kind]})" in run.stdout, run.stdout
    with made.owner() as owner:  # a row in every table, for the changes below to aim at
        owner.execute("INSERT INTO players (name) VALUES ('ann')")
        owner.execute(
            "INSERT INTO configs (config_id, profile_id, compiled) VALUES ('c1', 'p', '{}')"
        )
        owner.execute("INSERT INTO deployments (config_id, active) VALUES ('c1', 1)")
        owner.execute(
            "INSERT INTO tables (id, profile_id, tier, status) VALUES ('t1', 'p', 'x', 'open')"
        )
        owner.execute("INSERT INTO seats (table_id, seat, player) VALUES ('t1', 0, 'ann')")
        owner.execute(
            "INSERT INTO hands (table_id, number, config_id, commitment, outcome) VALUES "
            "('t1', 1, 'c1', 'sha', 'running')"
        )
        owner.execute(
            "INSERT INTO events (table_id, hand_id, seq, type, payload, prev_hash, hash) "
            "VALUES ('t1', 1, 1, 'deal', '{}', 'a', 'b')"
        )
        owner.execute("INSERT INTO ledger (player, delta, reason) VALUES ('ann', 5, 'opening')")
        owner.execute(
            "INSERT INTO gm_commands (kind, table_id, status) VALUES ('kick', 't1', 'pending')"
        )
        owner.execute(
            "INSERT INTO witnesses (id, change, type, location, at) VALUES (1, 'add', "
            "'folder', 'w', 'now')"
        )
        owner.execute("INSERT INTO log_nodes VALUES (9, 9, '\\x00')")
    return made


def _first_column(conn: psycopg.Connection, table: str) -> str:
    return conn.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = %s AND "
        "table_schema = current_schema() ORDER BY "
        "ordinal_position LIMIT 1",
        (table,),
    ).fetchone()[0]


def _changes(conn: psycopg.Connection, table: str) -> list[str]:
    column = _first_column(conn, table)
    return [
        f"INSERT INTO {table} DEFAULT VALUES",
        f"UPDATE {table} SET {column} = {column}",
        f"DELETE FROM {table}",
        f"TRUNCATE {table} CASCADE",
    ]


@pytest.mark.parametrize("table", EXPECTED_TABLES)
def test_support_can_only_read(store: Store, table: str) -> None:
    """Support reads every table of the store and changes none."""
    with store.as_("support") as support:
        support.execute(f"SELECT * FROM {table}").fetchall()
        for change in _changes(support, table):
            with pytest.raises(Denied):
                support.execute(change)


def test_operators_append_gm_requests(store: Store) -> None:
    """An operator's console queues a GM request, with its GM action and evidence record,
    and settles a command's fate; PostgreSQL hands out the id."""
    tag = secrets.token_hex(4)
    with store.as_("operator") as operator:
        command = operator.execute(
            "INSERT INTO gm_commands (kind, table_id, status, request) VALUES ('kick', 't1', "
            "'pending', %s) RETURNING id",
            (tag,),
        ).fetchone()[0]
        operator.execute("UPDATE gm_commands SET status = 'expired' WHERE id = %s", (command,))
        operator.execute(
            "INSERT INTO gm_actions (id, action, prev_hash, hash) VALUES (1000 + %s, 'kick', "
            "'a', %s)",
            (command, tag),
        )
        operator.execute(
            "INSERT INTO configs (config_id, profile_id, compiled) VALUES (%s, 'p', '{}')", (tag,)
        )


@pytest.mark.parametrize(
    "change",
    [
        "INSERT INTO events (table_id, seq, type, payload, prev_hash, hash) VALUES ('t1', 99, "
        "'deal', '{}', 'a', 'b')",
        "INSERT INTO ledger (player, delta, reason) VALUES ('ann', 1000000, 'minted')",
        "INSERT INTO hands (table_id, number, config_id, commitment, outcome) VALUES ('t1', 99, "
        "'c1', 'x', 'running')",
        "UPDATE hands SET outcome = 'settled', winners = 'ann'",
        "UPDATE players SET coins = coins + 1000000",
        "INSERT INTO players (name) VALUES ('mallory')",
        "UPDATE gm_commands SET kind = 'close'",  # a request is appended, not rewritten
        "DELETE FROM gm_commands",
        "DELETE FROM seats",
    ],
)
def test_operators_write_no_events_or_ledger_rows(store: Store, change: str) -> None:
    """Operators move no coins and play no hand: events, hands, ledger rows and balances
    are the hosts'."""
    with store.as_("operator") as operator, pytest.raises(Denied):
        operator.execute(change)


def test_hosts_write_events_and_settlements(store: Store) -> None:
    """A host plays: a hand starts, its events are written, it settles (its end, ledger
    rows, balances), seats change, a command's fate is recorded."""
    with store.as_("host") as host:
        hand = host.execute(
            "INSERT INTO hands (table_id, number, config_id, commitment, outcome) VALUES "
            "('t1', 2, 'c1', 'sha2', 'running') RETURNING id"
        ).fetchone()[0]
        host.execute(
            "INSERT INTO events (table_id, hand_id, seq, type, payload, prev_hash, hash) VALUES "
            "('t1', %s, 2, 'deal', '{}', 'b', 'c')",
            (hand,),
        )
        host.execute(
            "UPDATE hands SET outcome = 'settled', ended_at = 'now', winners = 'ann', seed = 's' "
            "WHERE id = %s",
            (hand,),
        )
        host.execute(
            "INSERT INTO ledger (hand_id, player, delta, reason) VALUES (%s, 'ann', 3, 'pot')",
            (hand,),
        )
        host.execute("UPDATE players SET coins = coins + 3, wins = wins + 1 WHERE name = 'ann'")
        host.execute("DELETE FROM seats WHERE table_id = 't1'")
        host.execute("INSERT INTO seats (table_id, seat, player) VALUES ('t1', 0, 'ann')")
        host.execute("UPDATE gm_commands SET status = 'taken' WHERE kind = 'kick'")


@pytest.mark.parametrize(
    "change",
    [
        "UPDATE hands SET commitment = 'another deck'",  # a hand's commitment is fixed
        "UPDATE players SET name = 'eve'",
        "INSERT INTO gm_commands (kind, table_id, status) VALUES ('kick', 't1', 'pending')",
        "INSERT INTO gm_users (name, role) VALUES ('host', 'operator')",
        "INSERT INTO configs (config_id, profile_id, compiled) VALUES ('c9', 'p', '{}')",
        "INSERT INTO deployments (config_id, active) VALUES ('c1', 1)",
        "UPDATE deployments SET active = 0",
    ],
)
def test_hosts_act_on_no_gm_request_they_were_not_given(store: Store, change: str) -> None:
    """A host neither makes GM requests nor deploys, and never rewrites a hand's start."""
    with store.as_("host") as host, pytest.raises(Denied):
        host.execute(change)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("table", EVIDENCE)
def test_nobody_updates_or_deletes_evidence(store: Store, kind: str, table: str) -> None:
    """No role may UPDATE, DELETE or TRUNCATE an evidence table (the triggers would refuse
    it too, even to the owner: tests/test_pg_schema.py)."""
    with store.as_(kind) as conn:
        for change in _changes(conn, table)[1:]:
            with pytest.raises(Denied):
                conn.execute(change)


@pytest.mark.parametrize("kind", KINDS)
def test_nobody_disables_or_drops_what_refuses_it(store: Store, kind: str) -> None:
    with store.as_(kind) as conn:
        for change in (
            "ALTER TABLE events DISABLE TRIGGER events_no_update",
            "DROP TRIGGER ledger_no_delete ON ledger",
            "DROP FUNCTION gmtool_append_only CASCADE",
            "ALTER TABLE log OWNER TO CURRENT_USER",
        ):
            with pytest.raises((Denied, psycopg.errors.UndefinedFunction)):
                conn.execute(change)


def _grants(store: Store) -> list[tuple]:
    with store.owner() as owner:
        return owner.execute(
            "SELECT grantee, table_name, privilege_type FROM information_schema."
            "role_table_grants WHERE starts_with(grantee, %s) UNION ALL SELECT grantee, "
            "table_name || '.' || column_name, privilege_type FROM information_schema."
            "column_privileges WHERE starts_with(grantee, %s) ORDER BY 1, 2, 3",
            (store.database, store.database),
        ).fetchall()


def test_db_grant_again_grants_the_same(store: Store, gm: Gmtool) -> None:
    before = _grants(store)
    assert before
    run = gm("db", "grant", "--db", store.url)
    assert "no member named now" in run.stdout and "made login role" not in run.stdout
    assert _grants(store) == before


def test_db_grant_by_a_role_that_owns_nothing_is_refused(store: Store, gm: Gmtool) -> None:
    url = url_of(store.database, store.logins["operator"])
    before = _grants(store)
    run = gm("db", "grant", "--db", url, "--support", f"{store.database}_x", expect=2)
    assert "must run as a role that owns gmtool's tables" in run.stderr, run.stderr
    assert _grants(store) == before


def test_db_grant_refuses_a_role_name_it_cannot_make(store: Store, gm: Gmtool) -> None:
    run = gm("db", "grant", "--db", store.url, "--host", "Robert'); DROP", expect=2)
    assert "a login role is lower-case letters" in run.stderr
    run = gm("db", "grant", "--db", store.url, "--prefix", "x" * 60, expect=2)
    assert "too long" in run.stderr


@pytest.mark.parametrize(
    "kind, record, allowed",
    [
        ("operator", "gm_request", True),
        ("operator", "deployment", True),
        ("operator", "ledger", False),
        ("operator", "hand_end", False),
        ("operator", "opening", False),
        ("host", "events", True),
        ("host", "ledger", True),
        ("host", "gm_request", False),
        ("host", "deployment", False),
        ("host", "gm_user", False),
    ],
)
def test_each_role_appends_only_its_own_kinds_of_record(
    store: Store, kind: str, record: str, allowed: bool
) -> None:
    """A console cannot log a ledger record or a hand's end (the host's evidence), nor a
    host a GM's request: PostgreSQL's row-level security on the log refuses it."""
    idx = 1_000_000 + secrets.randbelow(10**9)
    append = "INSERT INTO log (idx, kind, body, leaf) VALUES (%s, %s, '{}', '\\x00')"
    with store.as_(kind) as conn:
        if allowed:
            conn.execute(append, (idx, record))
        else:
            with pytest.raises(Denied, match="row-level security"):
                conn.execute(append, (idx, record))


@pytest.mark.parametrize("kind", KINDS)
def test_every_role_reads_the_whole_log(store: Store, kind: str) -> None:
    with store.owner() as owner:
        everything = owner.execute("SELECT COUNT(*) FROM log").fetchone()[0]
    with store.as_(kind) as conn:
        assert conn.execute("SELECT COUNT(*) FROM log").fetchone()[0] == everything >= 2
