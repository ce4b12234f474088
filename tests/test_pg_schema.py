"""The store's schema on PostgreSQL (issue 26, item 1, first step), on the real server:
`gmtool db init` makes the same tables, columns, indexes and append-only triggers as on
SQLite, registers the first operator with the same evidence, is safe to run twice (and
twice at once), and refuses a database that is not gmtool's or is newer; the database
itself refuses every UPDATE, DELETE and TRUNCATE of evidence, even to the tables' owner.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from conftest import OPERATOR, Gmtool
from helpers import clean_env, gmtool_command
from postgres import Databases, databases, url_of

from gmtool.store import pg_schema, schema
from gmtool.store.pg_roles import EVIDENCE

SQLITE_TYPES = {
    "INTEGER": "bigint",
    "TEXT": "text",
    "BLOB": "bytea",
    "REAL": "double precision",
    "": "text",
}


@pytest.fixture(scope="module")
def server() -> Iterator[Databases]:
    yield from databases("schema")


@pytest.fixture(scope="module")
def pg_store(server: Databases, gm: Gmtool) -> str:
    """A PostgreSQL store made by `gmtool db init` (its first operator registered)."""
    url = url_of(server.new())
    gm("db", "init", "--db", url, "--as", OPERATOR)
    return url


@pytest.fixture(scope="module")
def sqlite_store(tmp_path_factory: pytest.TempPathFactory, gm: Gmtool) -> Path:
    db = tmp_path_factory.mktemp("schema") / "twin.db"
    gm("db", "init", "--db", db, "--as", OPERATOR)
    return db


def _pg(url: str) -> psycopg.Connection:
    return psycopg.connect(url, autocommit=True)


def _pg_columns(url: str) -> dict[str, dict[str, tuple[str, bool]]]:
    with _pg(url) as conn:
        rows = conn.execute(
            "SELECT table_name, column_name, data_type, is_nullable FROM "
            "information_schema.columns WHERE table_schema = 'public'"
        ).fetchall()
    tables: dict[str, dict[str, tuple[str, bool]]] = {}
    for table, column, kind, nullable in rows:
        tables.setdefault(table, {})[column] = (kind, nullable == "NO")
    return tables


def _sqlite_columns(db: Path) -> dict[str, dict[str, tuple[str, bool]]]:
    conn = sqlite3.connect(db)
    try:
        names = [
            r[0]
            for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if not r[0].startswith("sqlite_")
        ]
        tables = {}
        for name in names:
            tables[name] = {
                column: (SQLITE_TYPES[kind.upper()], bool(not_null or pk))
                for _, column, kind, not_null, _, pk in conn.execute(f"PRAGMA table_info({name})")
            }
        return tables
    finally:
        conn.close()


def test_the_same_tables_and_columns_on_both_backends(pg_store: str, sqlite_store: Path) -> None:
    """Every table and column of the SQLite schema, with its type and NOT NULL, and no
    other (but each backend's own migration bookkeeping)."""
    on_pg = _pg_columns(pg_store)
    on_sqlite = _sqlite_columns(sqlite_store)
    assert on_sqlite.pop("_sqlite_migrations")
    assert on_pg.pop(pg_schema.MIGRATIONS_TABLE)
    assert set(on_pg) == set(on_sqlite)
    for table, columns in on_sqlite.items():
        assert on_pg[table] == columns, table


def test_the_same_indexes_and_triggers_on_both_backends(pg_store: str, sqlite_store: Path) -> None:
    conn = sqlite3.connect(sqlite_store)
    try:
        sqlite_indexes = {
            r[0]
            for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")
            if not r[0].startswith("sqlite_autoindex") and "_sqlite_migrations" not in r[0]
        }
        sqlite_triggers = {
            r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")
        }
    finally:
        conn.close()
    with _pg(pg_store) as pg:
        pg_indexes = {
            r[0]
            for r in pg.execute("SELECT indexname FROM pg_indexes WHERE schemaname = 'public'")
            if not r[0].endswith("_pkey")
        }
        pg_triggers = {
            r[0] for r in pg.execute("SELECT tgname FROM pg_trigger WHERE NOT tgisinternal")
        }
    assert pg_indexes == sqlite_indexes
    # PostgreSQL adds a TRUNCATE trigger beside each table's UPDATE and DELETE ones
    truncates = {name for name in pg_triggers if name.endswith("_no_truncate")}
    assert pg_triggers - truncates == sqlite_triggers
    assert {name.removesuffix("_no_truncate") for name in truncates} == set(EVIDENCE)


def test_the_same_migrations_by_the_same_names(pg_store: str) -> None:
    assert pg_schema.KNOWN == schema.KNOWN
    with _pg(pg_store) as pg:
        applied = [r[0] for r in pg.execute("SELECT name FROM _gmtool_migrations ORDER BY name")]
    assert applied == list(schema.KNOWN)


def test_db_init_registers_the_first_operator_with_its_evidence(pg_store: str) -> None:
    """As on SQLite: the GM user and the GM action, chained and in the evidence log, the
    request bound to the store's id."""
    with _pg(pg_store) as pg:
        user = pg.execute("SELECT name, role, key FROM gm_users").fetchall()
        action = pg.execute("SELECT id, actor, action, hash, request FROM gm_actions").fetchall()
        log = pg.execute("SELECT idx, kind, body FROM log ORDER BY idx").fetchall()
        head = pg.execute("SELECT name, seq, hash FROM chain_heads").fetchall()
        store_id = pg.execute("SELECT value FROM meta WHERE key = 'store_id'").fetchone()[0]
        state = pg.execute("SELECT size FROM log_state").fetchone()[0]
    assert [(name, role) for name, role, _ in user] == [(OPERATOR, "operator")]
    assert [(a[0], a[1], a[2]) for a in action] == [(1, OPERATOR, "users_add")]
    assert [(idx, kind) for idx, kind, _ in log] == [(0, "gm_user"), (1, "gm_action")]
    assert json.loads(log[1][2])["hash"] == action[0][3]
    assert head == [("gm_actions", 1, action[0][3])]
    assert f'"store":"{store_id}"' in action[0][4]
    assert state == 2


def test_db_init_twice_changes_nothing(pg_store: str, gm: Gmtool) -> None:
    with _pg(pg_store) as pg:
        before = pg.execute("SELECT COUNT(*) FROM log").fetchone()[0]
    run = gm("db", "init", "--db", pg_store, "--as", OPERATOR)
    assert f"gmtool store ready (schema version {len(pg_schema.KNOWN)})" in run.stdout
    with _pg(pg_store) as pg:
        assert pg.execute("SELECT COUNT(*) FROM log").fetchone()[0] == before


def test_two_db_inits_at_once_make_the_schema_once(server: Databases) -> None:
    url = url_of(server.new())
    runs = [
        subprocess.Popen(
            [*gmtool_command(), "db", "init", "--db", url, "--as", OPERATOR],
            env=clean_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = [run.communicate(timeout=120) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], outputs
    with _pg(url) as pg:
        applied = pg.execute("SELECT COUNT(*) FROM _gmtool_migrations").fetchone()[0]
        assert applied == len(pg_schema.KNOWN)
        assert pg.execute("SELECT COUNT(*) FROM gm_users").fetchone()[0] == 1
        assert pg.execute("SELECT COUNT(*) FROM gm_actions").fetchone()[0] == 1


def _some_evidence(pg: psycopg.Connection) -> None:
    """One row in each evidence table that has none after `db init` (as the owner)."""
    pg.execute("INSERT INTO players (name) VALUES ('ann') ON CONFLICT DO NOTHING")
    pg.execute(
        "INSERT INTO events (table_id, seq, type, payload, prev_hash, hash) VALUES "
        "('t1', 1, 'deal', '{}', 'a', 'b') ON CONFLICT DO NOTHING"
    )
    pg.execute(
        "INSERT INTO ledger (player, delta, reason) SELECT 'ann', 5, 'opening' WHERE NOT "
        "EXISTS (SELECT 1 FROM ledger)"
    )
    pg.execute(
        "INSERT INTO witnesses (id, change, type, location, at) VALUES (1, 'add', 'folder', "
        "'w', 'now') ON CONFLICT DO NOTHING"
    )
    pg.execute("INSERT INTO log_nodes VALUES (9, 9, '\\x00') ON CONFLICT DO NOTHING")


@pytest.mark.parametrize("table", EVIDENCE)
@pytest.mark.parametrize(
    "change", ["UPDATE {} SET {} = {}", "DELETE FROM {}", "TRUNCATE {} CASCADE"]
)
def test_evidence_is_append_only_even_for_its_owner(pg_store: str, table: str, change: str) -> None:
    """docs/evidence.md: evidence rows are never changed or removed; on PostgreSQL the
    database refuses it to the tables' owner too (a superuser here), TRUNCATE included."""
    with _pg(pg_store) as pg:
        _some_evidence(pg)
        column = pg.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = %s AND "
            "table_schema = current_schema() "
            "ORDER BY ordinal_position LIMIT 1",
            (table,),
        ).fetchone()[0]
        statement = change.format(table, column, column)
        assert pg.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] > 0, table
        with pytest.raises(psycopg.errors.IntegrityConstraintViolation, match="append-only"):
            pg.execute(statement)


def test_db_init_refuses_another_applications_database(server: Databases, gm: Gmtool) -> None:
    url = url_of(server.new())
    with _pg(url) as pg:
        pg.execute("CREATE TABLE invoices (id BIGINT PRIMARY KEY)")
    run = gm("db", "init", "--db", url, "--as", OPERATOR, expect=2)
    assert "is not a gmtool database" in run.stderr, run.stderr
    with _pg(url) as pg:
        tables = pg.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
        ).fetchall()
    assert tables == [("invoices",)]


def test_db_init_refuses_a_newer_schema(server: Databases, gm: Gmtool) -> None:
    url = url_of(server.new())
    gm("db", "init", "--db", url, "--as", OPERATOR)
    with _pg(url) as pg:
        pg.execute(
            "INSERT INTO _gmtool_migrations VALUES ('gmtool', 'm999_from_the_future', 'now')"
        )
    run = gm("db", "init", "--db", url, "--as", OPERATOR, expect=2)
    assert "written by a newer gmtool" in run.stderr, run.stderr


def test_db_init_says_plainly_what_it_cannot_reach(server: Databases, gm: Gmtool) -> None:
    missing = gm("db", "init", "--db", url_of(server.tag + "_missing"), expect=2)
    assert "does not exist" in missing.stderr and "createdb" in missing.stderr
    closed = gm("db", "init", "--db", "postgresql://gm:pw@127.0.0.1:1/x", expect=2)
    assert "cannot use this PostgreSQL database" in closed.stderr
    assert "gm:***@" in closed.stderr and ":pw@" not in closed.stderr


def test_db_init_brings_an_older_schema_up_to_date(server: Databases, gm: Gmtool) -> None:
    """A store one migration behind (no witnesses yet) gets the missing one, once."""
    url = url_of(server.new())
    gm("db", "init", "--db", url, "--as", OPERATOR)
    with _pg(url) as pg:
        pg.execute("DROP TABLE witnesses")
        pg.execute("DELETE FROM _gmtool_migrations WHERE name = 'm005_witnesses'")
    gm("db", "init", "--db", url, "--as", OPERATOR)
    with _pg(url) as pg:
        assert pg.execute("SELECT COUNT(*) FROM witnesses").fetchone()[0] == 0
        names = [r[0] for r in pg.execute("SELECT name FROM _gmtool_migrations ORDER BY name")]
        triggers = pg.execute(
            "SELECT COUNT(*) FROM pg_trigger WHERE tgname LIKE 'witnesses_no_%'"
        ).fetchone()[0]
    assert names == list(schema.KNOWN) and triggers == 3


def test_a_reader_changes_nothing(pg_store: str) -> None:
    """A store opened for reading reads in read-only transactions: PostgreSQL itself
    refuses a write, and the store's own write() says it was opened for reading."""
    from gmtool.store import pg_open
    from gmtool.store.errors import StoreError

    with pg_open.connect(pg_store, write=False) as store:
        with store.snapshot():
            assert store.one("SELECT COUNT(*) AS n FROM gm_users")["n"] == 1
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            store.conn.execute("INSERT INTO players (name) VALUES (?)", ("eve",))
        with pytest.raises(StoreError, match="opened for reading"), store.write():
            pass


def test_a_write_is_one_transaction(pg_store: str) -> None:
    """What a write did is undone whole when it fails (here on a refused change)."""
    from gmtool.store import pg_open
    from gmtool.store.errors import StoreError

    with pg_open.connect(pg_store) as store:
        with pytest.raises(StoreError, match="append-only"), store.write() as conn:
            conn.execute("INSERT INTO players (name) VALUES (?)", ("rolled_back",))
            conn.execute("DELETE FROM log")
        assert store.one("SELECT 1 FROM players WHERE name = ?", ("rolled_back",)) is None


@pytest.mark.parametrize(
    "sqlite_sql, postgres_sql",
    [
        ("SELECT * FROM t WHERE a = ? AND b = ?", "SELECT * FROM t WHERE a = %s AND b = %s"),
        ("SELECT '?' || ? FROM t", "SELECT '?' || %s FROM t"),
        ("SELECT 1 WHERE x LIKE '5%' AND y = ?", "SELECT 1 WHERE x LIKE '5%%' AND y = %s"),
        ('SELECT "odd?name" FROM t', 'SELECT "odd?name" FROM t'),
    ],
)
def test_placeholders_are_all_that_is_translated(sqlite_sql: str, postgres_sql: str) -> None:
    from gmtool.store.pg import placeholders

    assert placeholders(sqlite_sql) == postgres_sql


def test_db_init_as_a_role_without_rights_says_whose_job_it_is(
    server: Databases, pg_store: str, gm: Gmtool
) -> None:
    """On a new database and on a made store alike: one plain message, exit 2."""
    database = pg_store.rsplit("/", 1)[1]
    login = f"{database}_nobody"
    with psycopg.connect(pg_store, autocommit=True) as owner:
        owner.execute(f'CREATE ROLE "{login}" LOGIN')
    for url in (url_of(database, login), url_of(server.new(), login)):
        run = gm("db", "init", "--db", url, "--as", OPERATOR, expect=2)
        assert "run `gmtool db init` as the role that owns" in run.stderr, run.stderr
