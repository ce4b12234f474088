"""Least privilege on a PostgreSQL store (`gmtool db grant`): one group role each for the
hosts, the operators' consoles and support, and what each may do to each table.

- support reads, and nothing else;
- operators read, and append GM requests (`gm_commands`), GM actions, GM users and
  their keys, configs, deployments and witnesses, with their evidence records; they may
  settle a command's fate (expired, withdrawn), reopen a table and retire a deployment,
  and write their console's word while they wait for a command (`console_words`, not
  evidence); they write no event, hand, ledger row or player;
- hosts read, and write what playing does: tables, seats, players' balances and tallies,
  hands (a hand's end, never its commitment), events, ledger rows, the fates of GM
  commands and the evidence records of all of it; of a console's words they only delete
  the one a killed console left, once its command is withdrawn;
- nobody updates or deletes evidence: no role is granted UPDATE, DELETE or TRUNCATE on
  an append-only table, and the tables' triggers refuse them even to their owner
  (`store/pg_schema.py`);
- each role appends to the evidence log only the kinds of record its own writes make
  (row-level security on `log`, `LOG_KINDS`).

Roles are the cluster's, not one database's, so they are named after the store
(`<prefix>_host`, `<prefix>_operator`, `<prefix>_support`; the prefix is the database's
name unless given): the hosts of a staging store cannot write the production one.
Members are login roles (made when missing, without a password: set one before they
connect other than by trust); the tables' owner is whoever ran `gmtool db init` and is
none of these.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import psycopg
from psycopg import sql

from gmtool.errors import UsageError
from gmtool.store import schema
from gmtool.store.errors import StoreError
from gmtool.store.pg import WRITE_LOCK, PgStore, first_line

KINDS = ("host", "operator", "support")
MAX_NAME = 63  # PostgreSQL's NAMEDATALEN - 1
_NAME = re.compile(r"^[a-z_][a-z0-9_]*$")

EVIDENCE = ("log", "log_nodes", "meta", *schema.APPEND_ONLY, "witnesses")
LOG_WRITE = {  # the evidence log's appender: records, interior nodes, the tree's state
    "log": "INSERT",
    "log_nodes": "INSERT",
    "log_state": "INSERT, UPDATE (size, nodes)",
    "chain_heads": "INSERT, UPDATE (seq, hash)",
}
COMMAND_FATE = "UPDATE (status, acked_at, outcome, gm_action_id)"

# The evidence records each role may append to `log` (row-level security): what its own
# writes log (gmtool/evidence/records.py). Each record's row is checked by the audit; this
# keeps a console from appending a record of a host's kind (a ledger record, a hand) at all.
LOG_KINDS = {
    "host": (
        "events",
        "hand",
        "hand_end",
        "ledger",
        "player",
        "opening",
        "seed_key",
        "gm_action",  # a command's fate
        "witness",  # the first witness, recorded by the first host start
    ),
    "operator": ("gm_request", "gm_action", "gm_user", "config", "deployment", "retire", "witness"),
}

WRITES: dict[str, dict[str, str]] = {
    "support": {},
    "operator": {
        **LOG_WRITE,
        "gm_actions": "INSERT",
        "gm_commands": f"INSERT, {COMMAND_FATE}",
        "gm_users": "INSERT, UPDATE (role, key)",
        "configs": "INSERT",
        "deployments": "INSERT, UPDATE (active)",
        "witnesses": "INSERT",
        "tables": "UPDATE (status, closed_at, updated_at)",
        "console_words": "INSERT, UPDATE (note, written_at), DELETE",
    },
    "host": {
        **LOG_WRITE,
        "gm_actions": "INSERT",
        "gm_commands": COMMAND_FATE,
        "events": "INSERT",
        "ledger": "INSERT",
        "hands": "INSERT, UPDATE (ended_at, outcome, winners, seed)",
        "players": "INSERT, UPDATE (coins, score, wins, losses, draws, escapes, disconnects)",
        "tables": "INSERT, UPDATE (status, host_pid, closed_at, live, updated_at)",
        "seats": "INSERT, DELETE",
        "witnesses": "INSERT",
        "table_leases": "INSERT, UPDATE (host, token, expires)",
        "console_words": "DELETE",
        "host_addresses": "INSERT, UPDATE (address, expires), DELETE",
    },
}


@dataclass
class Granted:
    """What `grant` did: the group roles and, for each, the login roles made its members
    (`made`: login roles that did not exist before)."""

    roles: dict[str, str]
    members: dict[str, list[str]] = field(default_factory=dict)
    made: list[str] = field(default_factory=list)


def role_names(prefix: str) -> dict[str, str]:
    """The group role of each kind for a store whose roles start with `prefix`."""
    if not _NAME.match(prefix):
        raise UsageError(
            f"role prefix {prefix[:80]!r}: use lower-case letters, digits and _ (not first "
            "a digit), e.g. --prefix casino"
        )
    names = {kind: f"{prefix}_{kind}" for kind in KINDS}
    if max(len(name) for name in names.values()) > MAX_NAME:
        raise UsageError(
            f"role prefix {prefix[:80]!r} is too long: {prefix}_operator would pass "
            f"PostgreSQL's {MAX_NAME} characters; give a shorter --prefix"
        )
    return names


def default_prefix(store: PgStore) -> str:
    """The database's name, when it makes valid role names; else a UsageError asking for
    --prefix."""
    name = store.conn.execute("SELECT current_database()").fetchone()[0]
    if not _NAME.match(name) or len(name) + len("_operator") > MAX_NAME:
        raise UsageError(
            f"the database's name {name[:80]!r} does not make role names: give --prefix "
            "(lower-case letters, digits and _)"
        )
    return str(name)


def grant(store: PgStore, prefix: str, members: dict[str, list[str]]) -> Granted:
    """Create (or bring up to date) the store's three group roles, grant each what it may
    do to gmtool's tables (revoking anything else they held there first), and make the
    named login roles their members; one transaction, so a refusal changes nothing."""
    names = role_names(prefix)
    for kind, logins in members.items():
        for login in logins:
            if not _NAME.match(login) or len(login) > MAX_NAME:
                raise UsageError(
                    f"--{kind} {login[:80]!r}: a login role is lower-case letters, digits "
                    "and _ (not first a digit), at most 63 characters"
                )
    done = Granted(roles=names, members={kind: [] for kind in KINDS})
    raw = store.conn.raw
    try:
        with raw.transaction():
            raw.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
            tables = _gmtool_tables(store)
            for kind, role in names.items():
                _ensure_role(raw, role, login=False)
                _grant_tables(raw, role, tables, WRITES[kind])
            _log_policies(raw, names)
            for kind, logins in members.items():
                for login in logins:
                    if _ensure_role(raw, login, login=True):
                        done.made.append(login)
                    raw.execute(
                        sql.SQL("GRANT {} TO {}").format(
                            sql.Identifier(names[kind]), sql.Identifier(login)
                        )
                    )
                    done.members[kind].append(login)
    except psycopg.errors.InsufficientPrivilege as error:
        raise StoreError(
            f"{store.path}: {first_line(error)}: `gmtool db grant` must run as a role that "
            "owns gmtool's tables (the one that ran `gmtool db init`) and may create roles "
            "(CREATEROLE or superuser)"
        ) from None
    except psycopg.Error as error:
        raise StoreError(f"{store.path}: the grant failed: {first_line(error)}") from None
    return done


def _gmtool_tables(store: PgStore) -> list[str]:
    """gmtool's tables in the store's schema: those its migrations made (the bookkeeping
    table included); another application's tables in the same schema are left alone."""
    rows = store.conn.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = "
        "current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name"
    ).fetchall()
    known = set(EXPECTED_TABLES) | {"_gmtool_migrations"}
    return [r[0] for r in rows if r[0] in known]


EXPECTED_TABLES = (
    "players",
    "configs",
    "deployments",
    "tables",
    "seats",
    "hands",
    "events",
    "gm_users",
    "gm_actions",
    "ledger",
    "gm_commands",
    "chain_heads",
    "meta",
    "log",
    "log_nodes",
    "log_state",
    "witnesses",
    "table_leases",
    "console_words",
    "host_addresses",
)


def _ensure_role(raw: psycopg.Connection, role: str, login: bool) -> bool:
    """Create `role` if the cluster has none by that name; True if it was made here."""
    exists = raw.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone()
    if exists:
        return False
    raw.execute(
        sql.SQL("CREATE ROLE {} " + ("LOGIN" if login else "NOLOGIN")).format(sql.Identifier(role))
    )
    return True


def _grant_tables(
    raw: psycopg.Connection, role: str, tables: list[str], writes: dict[str, str]
) -> None:
    who = sql.Identifier(role)
    raw.execute(sql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(_schema(raw), who))
    for table in tables:
        name = sql.Identifier(table)
        raw.execute(sql.SQL("REVOKE ALL ON {} FROM {}").format(name, who))
        raw.execute(sql.SQL("GRANT SELECT ON {} TO {}").format(name, who))
        if table in writes:
            if table in EVIDENCE and any(w in writes[table] for w in ("UPDATE", "DELETE")):
                raise AssertionError(f"{table} is evidence: never granted {writes[table]}")
            raw.execute(sql.SQL("GRANT " + writes[table] + " ON {} TO {}").format(name, who))


def _log_policies(raw: psycopg.Connection, names: dict[str, str]) -> None:
    """Row-level security on `log`: everyone with SELECT reads every record; each role
    appends only the kinds of record its writes make (LOG_KINDS). The tables' owner is not
    held to it (`db init` registers the first operator as the owner)."""
    raw.execute("ALTER TABLE log ENABLE ROW LEVEL SECURITY")
    raw.execute("DROP POLICY IF EXISTS gmtool_reads ON log")
    raw.execute("CREATE POLICY gmtool_reads ON log FOR SELECT USING (true)")
    for kind, kinds in LOG_KINDS.items():
        policy = sql.Identifier(f"{names[kind]}_appends")
        raw.execute(sql.SQL("DROP POLICY IF EXISTS {} ON log").format(policy))
        raw.execute(
            sql.SQL("CREATE POLICY {} ON log FOR INSERT TO {} WITH CHECK (kind IN ({}))").format(
                policy,
                sql.Identifier(names[kind]),
                sql.SQL(", ").join(sql.Literal(k) for k in kinds),
            )
        )


def _schema(raw: psycopg.Connection) -> sql.Identifier:
    return sql.Identifier(raw.execute("SELECT current_schema()").fetchone()[0])
