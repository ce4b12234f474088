"""A SQLite store moved to PostgreSQL (`gmtool db copy`) and audited there (issue 26).

The store is the session's host-made one (tests/conftest.py's `host_db`: ten tables of
every system played by a real host, GM kicks, a close, an adjustment), copied whole to a
new database on the test server (tests/postgres.py: an unreachable server fails these
tests, never skips them). Real `gmtool` processes, real databases, no mocks.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import psycopg
import pytest
from backends import pg_server_fixture  # noqa: F401
from helpers import recorded_witness
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
    with psycopg.connect(url) as conn:  # every table the schema has is copied
        made = {
            row[0]
            for row in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
            )
        }
    assert made == {*copying.TABLES, "_gmtool_migrations"}
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


# ---- the audit on the copy ----------------------------------------------------------
# A PostgreSQL store has no file, so nothing lies beside it: the host's verifier key and
# the witness folder (`<db>.checkpoint.pub`, the recorded `host.db.witness`, found beside
# a SQLite store) are given to both audits, the same paths. Then nothing in the report
# needs to differ between the backends, and the tests compare the reports whole.


def _audit(gm, where: str | Path, db: Path, *args: str) -> tuple[int, dict]:
    files = ("--key", str(db) + ".checkpoint.pub", "--witness", str(recorded_witness(db)))
    run = gm("audit", "--db", where, "--json", *files, *args, expect=None)
    assert "Traceback" not in run.stderr, run.stderr
    return run.returncode, json.loads(run.stdout)


def test_the_copy_audits_as_the_store_it_was_copied_from(
    host_copy: Path, gm, pg_server: Databases
) -> None:
    url = _copy(gm, host_copy, pg_server)
    code, on_sqlite = _audit(gm, host_copy, host_copy)
    assert code == 0 and on_sqlite["problems"] == [] and on_sqlite["hands_checked"] > 100
    assert on_sqlite["checkpoint"]["extended"] is True  # the signed log, checked
    assert _audit(gm, url, host_copy) == (0, on_sqlite)
    assert _audit(gm, url, host_copy, "--jobs", "2") == (0, on_sqlite)
    # the text report, line for line
    files = (
        "--key",
        str(host_copy) + ".checkpoint.pub",
        "--witness",
        str(recorded_witness(host_copy)),
    )
    text = [gm("audit", "--db", where, *files).stdout for where in (host_copy, url)]
    assert text[0] == text[1] and "ok" in text[0]


def test_the_copy_audits_from_a_checkpoint_as_the_store_does(
    host_copy: Path, gm, pg_server: Databases
) -> None:
    url = _copy(gm, host_copy, pg_server)
    signed = sorted(recorded_witness(host_copy).glob("*.checkpoint"))
    middle = signed[len(signed) // 2].name
    code, on_sqlite = _audit(gm, host_copy, host_copy, "--from-checkpoint", middle)
    assert code == 0 and on_sqlite["incremental"]["from"] == middle
    assert 0 < on_sqlite["hands_checked"]
    assert _audit(gm, url, host_copy, "--from-checkpoint", middle) == (0, on_sqlite)
    assert _audit(gm, url, host_copy, "--from-checkpoint", middle, "--jobs", "2") == (
        0,
        on_sqlite,
    )


def test_the_library_call_reports_what_the_command_prints(
    host_copy: Path, gm, pg_server: Databases
) -> None:
    from gmtool.ops.audit import audit
    from gmtool.store.db import open_location

    url = _copy(gm, host_copy, pg_server)
    with open_location(url, write=False, postgres=True) as store:
        report = audit(
            store,
            key=Path(str(host_copy) + ".checkpoint.pub"),
            witness=str(recorded_witness(host_copy)),
        )
    assert (0, report.as_json()) == _audit(gm, url, host_copy)


def _edit_sqlite(db: Path, statements: list[str], drop: tuple[str, ...]) -> None:
    """Run `statements` with the append-only guards set aside, then put back every guard
    but those named in `drop`."""
    conn = sqlite3.connect(db)
    with conn:
        guards = dict(conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'"))
        for name in guards:
            conn.execute(f"DROP TRIGGER {name}")
        for sql in statements:
            conn.execute(sql)
        for name, sql in guards.items():
            if name not in drop:
                conn.execute(sql)
    conn.close()


def _edit_postgres(url: str, statements: list[str], drop: tuple[str, ...]) -> None:
    """The same edits as a superuser (a session that fires no ordinary trigger), and the
    guards in `drop` dropped."""
    with psycopg.connect(url, autocommit=True) as conn:
        with conn.transaction():
            conn.execute("SET LOCAL session_replication_role = replica")
            for sql in statements:
                conn.execute(sql)
        for name in drop:
            conn.execute(f"DROP TRIGGER {name} ON {name.rsplit('_no_', 1)[0]}")


EDITS = [
    # an event's payload edited in place
    "UPDATE events SET payload = replace(payload, '\"reason\"', '\"reason2\"') WHERE id = "
    "(SELECT MIN(id) FROM events WHERE type = 'settlement')",
    # a ledger row's delta moved
    "UPDATE ledger SET delta = delta + 7 WHERE id = (SELECT MIN(id) FROM ledger WHERE "
    "hand_id IS NOT NULL AND delta != 0)",
    # a GM action's hash rewritten
    "UPDATE gm_actions SET hash = 'ff' || substr(hash, 3) WHERE id = 2",
]


def test_tampering_as_a_superuser_is_found_as_on_sqlite(
    host_copy: Path, gm, pg_server: Databases
) -> None:
    """The same edits, on SQLite by whoever writes the file, on PostgreSQL by a superuser,
    and a guard dropped on both: the same findings, in the same order."""
    url = _copy(gm, host_copy, pg_server)
    drop = ("events_no_update",)
    _edit_sqlite(host_copy, EDITS, drop)
    _edit_postgres(url, EDITS, drop)
    code, on_sqlite = _audit(gm, host_copy, host_copy)
    kinds = {problem["kind"] for problem in on_sqlite["problems"]}
    assert code == 1 and {"event_hash", "differs_from_log", "balance", "triggers"} <= kinds
    assert _audit(gm, url, host_copy) == (1, on_sqlite)
    assert _audit(gm, url, host_copy, "--jobs", "2") == (1, on_sqlite)


LOG_EDITS = [
    # a ledger row's record made to name another row (its index columns left: a stray)
    "UPDATE log SET body = replace(body, '\"id\":3,', '\"id\":4,') WHERE kind = 'ledger' "
    "AND nkey = 3",
    # a player's record saying another type (the row no longer matches it)
    'UPDATE log SET body = replace(body, \'"type":"bot"\', \'"type":"human"\') '
    "WHERE idx = (SELECT MIN(idx) FROM log WHERE kind = 'player' AND body LIKE "
    '\'%"type":"bot"%\')',
    # a hand's record logged twice: a later record of the same kind made to name hand 1
    "UPDATE log SET nkey = 1, body = replace(body, '\"id\":2,', '\"id\":1,') WHERE "
    "kind = 'hand' AND nkey = 2",
    # a record's body in other (equal) words: not its hash any more
    "UPDATE log SET body = body || ' ' WHERE idx = (SELECT MIN(idx) FROM log WHERE "
    "kind = 'gm_action')",
]


def test_edits_of_the_evidence_log_are_found_as_on_sqlite(
    host_copy: Path, gm, pg_server: Databases
) -> None:
    """Records edited so that their index and body disagree, a row and its record
    differ, a key is logged twice: read in Python on PostgreSQL where SQLite reads them in
    SQL (store/log_reads.py), with the same findings."""
    url = _copy(gm, host_copy, pg_server)
    _edit_sqlite(host_copy, LOG_EDITS, ())
    _edit_postgres(url, LOG_EDITS, ())
    code, on_sqlite = _audit(gm, host_copy, host_copy)
    details = " ".join(problem["detail"] for problem in on_sqlite["problems"])
    assert code == 1 and "ledger row 3" in details and "again (duplicated)" in details
    assert "type differs" in details or "differs from the evidence log" in details
    assert _audit(gm, url, host_copy) == (1, on_sqlite)


@pytest.mark.parametrize(
    "defuse",
    [
        "ALTER TABLE ledger DISABLE TRIGGER ledger_no_delete",
        "ALTER TABLE ledger ENABLE REPLICA TRIGGER ledger_no_delete",
        "DROP TRIGGER ledger_no_delete ON ledger; CREATE TRIGGER ledger_no_delete BEFORE "
        "DELETE ON ledger FOR EACH ROW WHEN (false) EXECUTE FUNCTION "
        "gmtool_append_only('ledger are append-only')",
        "DROP TRIGGER ledger_no_delete ON ledger; CREATE TRIGGER ledger_no_delete AFTER "
        "DELETE ON ledger FOR EACH ROW EXECUTE FUNCTION "
        "gmtool_append_only('ledger are append-only')",
    ],
)
def test_a_defused_guard_is_found_on_postgresql(
    host_copy: Path, gm, pg_server: Databases, defuse: str
) -> None:
    url = _copy(gm, host_copy, pg_server)
    with psycopg.connect(url, autocommit=True) as conn:
        for sql in defuse.split("; "):
            conn.execute(sql)
    code, report = _audit(gm, url, host_copy)
    assert code == 1 and [p["kind"] for p in report["problems"]] == ["triggers"]
    assert "ledger_no_delete were dropped or defused" in report["problems"][0]["detail"]


def test_a_guard_function_that_no_longer_raises_defuses_every_guard(
    host_copy: Path, gm, pg_server: Databases
) -> None:
    url = _copy(gm, host_copy, pg_server)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "CREATE OR REPLACE FUNCTION gmtool_append_only() RETURNS trigger LANGUAGE "
            "plpgsql AS $$ BEGIN RETURN NEW; END $$"
        )
    code, report = _audit(gm, url, host_copy)
    assert code == 1 and [p["kind"] for p in report["problems"]] == ["triggers"]
    detail = report["problems"][0]["detail"]
    assert "events_no_update" in detail and "witnesses_no_truncate" in detail


def test_row_ids_may_skip_on_postgresql_and_nowhere_else(
    host_copy: Path, gm, pg_server: Databases
) -> None:
    """Later events renumbered past a gap, in order: PostgreSQL's identity may skip, so
    there the audit accepts it; SQLite numbers rows without gaps, so there it is an edit."""
    url = _copy(gm, host_copy, pg_server)
    shift = ["UPDATE events SET id = id + 1000000 WHERE id > (SELECT MAX(id) / 2 FROM events)"]
    _edit_sqlite(host_copy, shift, ())
    _edit_postgres(url, shift, ())
    code, on_sqlite = _audit(gm, host_copy, host_copy)
    assert code == 1 and [p["kind"] for p in on_sqlite["problems"]] == ["event_row_id"]
    code, on_postgres = _audit(gm, url, host_copy)
    assert code == 0 and on_postgres == {**on_sqlite, "problems": []}


def test_an_audit_of_a_server_that_does_not_answer_says_so(gm) -> None:
    """One line, exit 2, the password masked (the URL's port is closed)."""
    run = gm("audit", "--db", "postgresql://gm:s3cret@127.0.0.1:1/casino", expect=2)
    assert "cannot use this PostgreSQL database" in run.stderr, run.stderr
    assert "s3cret" not in run.stdout + run.stderr and "Traceback" not in run.stderr


def test_a_witness_recorded_beside_the_old_file_is_named_until_given(
    host_copy: Path, gm, pg_server: Databases
) -> None:
    """The copy records its witness folder relative to the SQLite file it came from: on
    PostgreSQL that is no place, and the audit says so rather than guessing one."""
    url = _copy(gm, host_copy, pg_server)
    run = gm("audit", "--db", url, "--json", "--key", str(host_copy) + ".checkpoint.pub")
    assert "pass --witness FOLDER" in run.stderr and "host.db.witness" in run.stderr
    assert "checkpoint" not in json.loads(run.stdout)  # nothing was checked against one
    _, given = _audit(gm, url, host_copy)
    assert given["checkpoint"]["extended"] is True
