"""A SQLite store moved to PostgreSQL (`gmtool db copy`) and audited there (issue 26).

The store is the session's host-made one (tests/conftest.py's `host_db`: ten tables of
every system played by a real host, GM kicks, a close, an adjustment), copied whole to a
new database on the test server (tests/postgres.py: an unreachable server fails these
tests, never skips them). Real `gmtool` processes, real databases, no mocks.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import psycopg
from backends import pg_server_fixture  # noqa: F401
from postgres import Databases, url_of

from gmtool.store import copy as copying


def _copy(gm, db: Path, server: Databases) -> str:
    url = url_of(server.new())
    gm("db", "copy", "--from", db, "--to", url)
    return url


def _sqlite_rows(db: Path, table: str) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        columns = [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]
        rows = conn.execute(f"SELECT {', '.join(columns)} FROM {table}").fetchall()
    finally:
        conn.close()
    return sorted(rows, key=repr)


def _pg_rows(url: str, table: str, columns: list[str]) -> list[tuple]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(f"SELECT {', '.join(columns)} FROM {table}").fetchall()
    return sorted(rows, key=repr)


def _columns(db: Path, table: str) -> list[str]:
    conn = sqlite3.connect(db)
    try:
        return [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]
    finally:
        conn.close()


def _pg_counts(url: str) -> dict[str, int]:
    with psycopg.connect(url) as conn:
        return {t: conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in copying.TABLES}


def test_copy_holds_every_row_as_it_is(host_copy: Path, gm, pg_server: Databases) -> None:
    url = _copy(gm, host_copy, pg_server)
    for table in copying.TABLES:
        rows = _sqlite_rows(host_copy, table)
        assert _pg_rows(url, table, _columns(host_copy, table)) == rows, table
        if table in ("events", "log", "hands", "ledger", "gm_actions", "players", "meta"):
            assert rows, f"the host's store holds no {table}: the copy proves nothing there"
    with psycopg.connect(url) as conn:  # new ids go past the copied ones
        for table in copying.IDENTITY:
            (top,) = conn.execute(f"SELECT COALESCE(MAX(id), 0) FROM {table}").fetchone()
            (next_id,) = conn.execute(
                f"SELECT nextval(pg_get_serial_sequence('{table}', 'id'))"
            ).fetchone()
            assert next_id == top + 1, table


def test_copy_refuses_a_destination_that_holds_rows(
    host_copy: Path, gm, pg_server: Databases
) -> None:
    url = _copy(gm, host_copy, pg_server)
    held = _pg_counts(url)
    run = gm("db", "copy", "--from", host_copy, "--to", url, expect=2)
    assert "is not empty" in run.stderr and "events (" in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and "Traceback" not in run.stderr
    assert _pg_counts(url) == held
    made = url_of(pg_server.new())  # a store `db init` made holds its first operator
    gm("db", "init", "--db", made, "--as", "boss")
    run = gm("db", "copy", "--from", host_copy, "--to", made, expect=2)
    assert "gm_users (1)" in run.stderr


def test_a_failed_copy_writes_nothing(host_copy: Path, gm, pg_server: Databases) -> None:
    """The last table copied holds a value PostgreSQL's column type refuses (an edit: a
    witness row naming GM action 'abc'): every row before it, in the same transaction,
    goes too; the database stays a new store that a copy may go into."""
    conn = sqlite3.connect(host_copy)
    with conn:
        conn.execute(
            "INSERT INTO witnesses (id, change, type, location, gm_action_id, at) VALUES "
            "(99, 'add', 'folder', 'elsewhere', 'abc', 'now')"
        )
    conn.close()
    url = url_of(pg_server.new())
    run = gm("db", "copy", "--from", host_copy, "--to", url, expect=2)
    assert "the copy failed and wrote nothing" in run.stderr and "Traceback" not in run.stderr
    assert {t: n for t, n in _pg_counts(url).items() if n} == {"meta": 1}
    conn = sqlite3.connect(host_copy)
    with conn:
        conn.execute("DROP TRIGGER witnesses_no_delete")
        conn.execute("DELETE FROM witnesses WHERE id = 99")
    conn.close()
    gm("db", "copy", "--from", host_copy, "--to", url)
    assert _pg_counts(url)["events"] == len(_sqlite_rows(host_copy, "events"))


def test_copy_needs_sqlite_then_postgresql(host_copy: Path, gm, pg_server: Databases) -> None:
    url = url_of(pg_server.new())
    run = gm("db", "copy", "--from", url, "--to", url, expect=2)
    assert "give the SQLite store" in run.stderr
    run = gm("db", "copy", "--from", host_copy, "--to", str(host_copy), expect=2)
    assert "give the new PostgreSQL database" in run.stderr
