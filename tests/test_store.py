"""The store (docs/architecture.md, "The store"): schema, append-only tables, hash
chains, atomic settlement, deployments, and how the CLI reports a database it cannot use.

The tests that take `store` run on both backends (tests/backends.py: a real SQLite file
in `tmp_path`, a new database of the test PostgreSQL server); what only SQLite has (its
pragmas, migrations table, files, paths) runs on real SQLite files. CLI cases run the
installed console script in a real subprocess (exit code always asserted, never a
traceback).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
from contextlib import contextmanager
from pathlib import Path

import pytest
from backends import any_store_fixture, pg_server_fixture  # noqa: F401
from helpers import clean_env as shared_env
from helpers import gmtool_command, public_key

from gmtool.audit.chain import verify_event_chains
from gmtool.audit.coins import verify_balances
from gmtool.store import configs, ledger
from gmtool.store import hands as hand_store
from gmtool.store import tables as table_store
from gmtool.store.db import Store, StoreError, connect, resolve_path
from gmtool.store.schema import APPEND_ONLY, KNOWN, SCHEMA_VERSION

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "rules"
QQ = RULES / "qq-showhand.toml"
CLI_TIMEOUT_S = 60


def clean_env(**extra: str) -> dict[str, str]:
    return shared_env(**{"GMTOOL_USER": "tester", **extra})


def gmtool(
    *args: str | Path, cwd: Path | None = None, env: dict | None = None, expect: int | None = 0
) -> subprocess.CompletedProcess:
    """Run the CLI; assert the exit code (unless `expect` is None) and no traceback."""
    run = subprocess.run(
        [*gmtool_command(), *map(str, args)],
        cwd=cwd,
        env=env or clean_env(),
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
    )
    assert "Traceback" not in run.stdout + run.stderr, run.stdout + run.stderr
    if expect is not None:
        assert run.returncode == expect, (run.returncode, run.stdout, run.stderr)
    return run


@pytest.fixture
def sqlite_store(tmp_path: Path):
    """A new SQLite store (what only SQLite has: its pragmas, its migrations table)."""
    with connect(tmp_path / "store.db", create=True) as opened:
        yield opened


@pytest.fixture
def store(any_store):
    """A new store of each backend (tests/backends.py): the test runs once per backend."""
    return any_store


@contextmanager
def _unguarded(store: Store, *triggers: str):
    """A write transaction without the append-only guards, as an attacker with the
    database could make one: SQLite's `triggers` dropped; on PostgreSQL (as its
    superuser) triggers off for the transaction (`session_replication_role`)."""
    if store.dialect == "sqlite":
        for trigger in triggers:
            store.conn.execute(f"DROP TRIGGER {trigger}")
    with store.write():
        if store.dialect == "postgresql":
            store.conn.execute("SET LOCAL session_replication_role = replica")
        yield


def qq_config() -> tuple[dict, str]:
    from gmtool.rules.compile import compile_file

    return compile_file(QQ), QQ.read_text(encoding="utf-8")


# -- db init, schema version, migrations ---------------------------------------------------


def test_db_init_twice_is_safe(tmp_path: Path) -> None:
    db = tmp_path / "g.db"
    first = gmtool("db", "init", "--db", db)
    assert f"schema version {SCHEMA_VERSION}" in first.stdout
    with connect(db) as opened:
        ledger.grant(opened, "ann", 500, "opening_balance")
    second = gmtool("db", "init", "--db", db)
    assert f"schema version {SCHEMA_VERSION}" in second.stdout
    with connect(db) as opened:  # nothing was recreated or lost
        assert ledger.coins(opened, "ann") == 500
        assert opened.one("SELECT COUNT(*) FROM _sqlite_migrations")[0] == len(KNOWN)


def test_migrations_are_recorded_with_the_schema_version(sqlite_store: Store) -> None:
    store = sqlite_store
    rows = store.all("SELECT migration_set, name, applied_at FROM _sqlite_migrations ORDER BY id")
    assert [(r["migration_set"], r["name"]) for r in rows] == [("gmtool", n) for n in KNOWN]
    assert all(r["applied_at"] for r in rows)
    assert SCHEMA_VERSION == len(KNOWN) >= 1
    assert {
        "players",
        "tables",
        "seats",
        "configs",
        "deployments",
        "hands",
        "events",
        "ledger",
        "gm_users",
        "gm_actions",
        "gm_commands",
    } <= set(store.db.table_names())


def test_store_pragmas_wal_and_busy_timeout(sqlite_store: Store) -> None:
    store = sqlite_store
    assert store.one("PRAGMA journal_mode")[0] == "wal"
    assert store.one("PRAGMA busy_timeout")[0] >= 1000
    assert store.one("PRAGMA foreign_keys")[0] == 1


def test_a_newer_schema_is_refused_with_exit_2(tmp_path: Path) -> None:
    db = tmp_path / "newer.db"
    gmtool("db", "init", "--db", db)
    with sqlite3.connect(db) as conn:
        conn.execute(
            "INSERT INTO _sqlite_migrations (migration_set, name, applied_at) VALUES "
            "('gmtool', 'm999_from_the_future', '2099-01-01')"
        )
    run = gmtool("deploy", "history", "--db", db, expect=2)
    assert "newer" in run.stderr
    with pytest.raises(StoreError, match="newer"):
        connect(db)


def test_an_older_store_is_migrated_on_open_and_keeps_its_chains(tmp_path: Path) -> None:
    """A store written by the previous schema version is brought up to date when opened;
    its events still verify (migrations fill what later versions record with each write)."""
    assert len(KNOWN) >= 2, "a previous schema version exists (m002_chain_heads)"
    import sqlite_utils

    from gmtool.canonical import ZERO_HASH, chain_hash
    from gmtool.store.schema import migrations

    db = tmp_path / "old.db"
    conn = sqlite3.connect(db)
    migrations.apply(sqlite_utils.Database(conn), stop_before="m002_chain_heads")
    head = ZERO_HASH
    for seq in (1, 2, 3):  # events as the previous version wrote them
        payload = json.dumps({"player": f"p{seq}"}, separators=(",", ":"))
        at = f"2026-01-01T00:00:0{seq}.000000+00:00"
        digest = chain_hash(head, hand_store.event_record("t1", None, seq, "join", payload, at))
        conn.execute(
            "INSERT INTO events (table_id, hand_id, seq, type, payload, created_at, "
            "prev_hash, hash) VALUES ('t1', NULL, ?, 'join', ?, ?, ?, ?)",
            (seq, payload, at, head, digest),
        )
        head = digest
    conn.commit()
    conn.close()

    with connect(db) as opened:
        applied = [r[0] for r in opened.all("SELECT name FROM _sqlite_migrations ORDER BY id")]
        assert applied == list(KNOWN)
        assert list(verify_event_chains(opened)) == []
        log = hand_store.TableLog(opened, "t1")
        assert (log.seq, log.head) == (3, head)
        log.append(None, [{"type": "leave", "player": "p1"}])
        assert list(verify_event_chains(opened)) == []
    run = gmtool("db", "init", "--db", db)
    assert f"schema version {SCHEMA_VERSION}" in run.stdout


# -- databases the CLI cannot use: one clear message, exit 2 --------------------------------


def _foreign_sqlite(path: Path) -> Path:
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE recipes (name TEXT, minutes INTEGER)")
        conn.execute("INSERT INTO recipes VALUES ('soup', 20)")
    return path


def _corrupt(path: Path) -> Path:
    path.write_bytes(bytes((i * 197 + 13) % 256 for i in range(20_000)))  # random-looking
    return path


def _folder(path: Path) -> Path:
    path.mkdir()
    return path


def _missing(path: Path) -> Path:
    return path


BAD_DATABASES = {
    "non-gmtool sqlite": _foreign_sqlite,
    "corrupt": _corrupt,
    "folder": _folder,
    "missing": _missing,
}
READING_COMMANDS = {
    "deploy history": ["deploy", "history"],
    "deploy": ["deploy", str(QQ)],
    "house run": ["house", "run", "--duration", "1"],
}


@pytest.mark.parametrize("kind", BAD_DATABASES)
@pytest.mark.parametrize("command", READING_COMMANDS)
def test_an_unusable_database_gives_one_message_and_exit_2(
    tmp_path: Path, kind: str, command: str
) -> None:
    db = BAD_DATABASES[kind](tmp_path / "bad.db")
    run = gmtool(*READING_COMMANDS[command], "--db", db, expect=2)
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), run.stderr
    assert str(db.name) in lines[0]
    if kind == "missing":
        assert not db.exists()  # a reading command never creates a database


@pytest.mark.parametrize("kind", ["non-gmtool sqlite", "corrupt", "folder"])
def test_db_init_refuses_a_file_that_is_not_a_gmtool_store(tmp_path: Path, kind: str) -> None:
    """`db init` may create a database or upgrade a gmtool one, never take over another
    application's SQLite file (its tables would be mixed with the store's)."""
    db = BAD_DATABASES[kind](tmp_path / "bad.db")
    run = gmtool("db", "init", "--db", db, expect=2)
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), run.stderr
    if kind == "non-gmtool sqlite":
        with sqlite3.connect(db) as conn:
            names = {
                r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            }
        assert names == {"recipes"}


def test_connect_errors_are_store_errors(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="db init"):
        connect(tmp_path / "missing.db")
    with pytest.raises(StoreError, match="folder"):
        connect(_folder(tmp_path / "dir.db"))
    with pytest.raises(StoreError, match="not a database"):
        connect(_corrupt(tmp_path / "corrupt.db"))
    with pytest.raises(StoreError, match="not a gmtool database"):
        connect(_foreign_sqlite(tmp_path / "foreign.db"))


# -- append-only tables -----------------------------------------------------------------------


def _one_row_each(store: Store) -> None:
    from gmtool.store import gm

    log = hand_store.TableLog(store, "t1")
    log.append(None, [{"type": "join", "player": "ann"}])
    ledger.grant(store, "ann", 100, "opening_balance")
    with store.write():
        gm.log_action(store, "gm", "adjust", "ann", "test", {"ok": True})


@pytest.mark.parametrize("table", APPEND_ONLY)
@pytest.mark.parametrize("change", ["UPDATE {t} SET id = id", "DELETE FROM {t}"])
def test_append_only_tables_refuse_update_and_delete(store: Store, table: str, change: str) -> None:
    _one_row_each(store)
    before = [tuple(r) for r in store.all(f"SELECT * FROM {table}")]
    assert before
    with pytest.raises((sqlite3.DatabaseError, StoreError), match="append-only"):
        with store.write():  # (SQLite's trigger error as it is; PostgreSQL's, as a StoreError)
            store.conn.execute(change.format(t=table))
    assert [tuple(r) for r in store.all(f"SELECT * FROM {table}")] == before


def test_append_only_holds_for_another_connection(tmp_path: Path) -> None:
    """The triggers live in the file: a plain sqlite3 connection is refused too."""
    db = tmp_path / "g.db"
    with connect(db, create=True) as opened:
        _one_row_each(opened)
    with sqlite3.connect(db) as conn:
        for table in APPEND_ONLY:
            with pytest.raises(sqlite3.DatabaseError, match="append-only"):
                conn.execute(f"DELETE FROM {table}")


# -- the per-table hash chain -----------------------------------------------------------------


def _chained_events(store: Store) -> None:
    for table in ("t1", "t2"):
        log = hand_store.TableLog(store, table)
        for n in range(3):
            log.append(
                None,
                [
                    {"type": "join", "player": f"p{n}", "coins": 100 * n},
                    {"type": "ante", "player": f"p{n}", "amount": 5},
                ],
            )


def _tamper(store: Store, *statements: str) -> None:
    """What an attacker with the database could do: lift the guard, change rows."""
    with _unguarded(store, "events_no_update", "events_no_delete"):
        for sql in statements:
            store.conn.execute(sql)


def test_chain_of_appended_events_verifies(store: Store) -> None:
    _chained_events(store)
    assert list(verify_event_chains(store)) == []
    rows = store.all("SELECT seq, prev_hash, hash FROM events WHERE table_id = 't1' ORDER BY seq")
    assert [r["seq"] for r in rows] == [1, 2, 3, 4, 5, 6]
    assert all(r["prev_hash"] == before["hash"] for before, r in zip(rows, rows[1:]))
    # a new log object picks the chain up where it ended
    log = hand_store.TableLog(store, "t1")
    assert (log.seq, log.head) == (6, rows[-1]["hash"])
    log.append(None, [{"type": "leave", "player": "p0"}])
    assert list(verify_event_chains(store)) == []


def test_chain_detects_an_edited_payload(store: Store) -> None:
    _chained_events(store)
    _tamper(
        store,
        "UPDATE events SET payload = replace(payload, '\"amount\":5', "
        "'\"amount\":500') WHERE table_id = 't1' AND seq = 4",
    )
    problems = list(verify_event_chains(store))
    assert [(p.kind, p.table) for p in problems] == [("event_hash", "t1")]
    assert "event 4" in problems[0].detail


def test_chain_detects_a_deleted_event(store: Store) -> None:
    _chained_events(store)
    _tamper(store, "DELETE FROM events WHERE table_id = 't2' AND seq = 3")
    problems = list(verify_event_chains(store))
    assert {p.kind for p in problems} >= {"chain_gap", "chain_link"}
    assert {p.table for p in problems} == {"t2"}


def test_chain_detects_deleted_events_at_its_end(store: Store) -> None:
    """A chain alone cannot see its last events deleted; the recorded head can."""
    _chained_events(store)
    _tamper(store, "DELETE FROM events WHERE table_id = 't1' AND seq >= 5")
    problems = list(verify_event_chains(store))
    assert [(p.kind, p.table) for p in problems] == [("chain_truncated", "t1")], problems
    with _unguarded(store):  # (SQLite's guard is gone) a whole chain deleted is seen too
        store.conn.execute("DELETE FROM events WHERE table_id = 't2'")
    assert "t2" in {p.table for p in verify_event_chains(store)}


def test_gm_log_detects_deleted_actions_at_its_end(store: Store) -> None:
    from gmtool.audit.chain import verify_gm_log
    from gmtool.store import gm

    for n in range(3):
        with store.write():
            gm.log_action(store, "gm", "adjust", f"p{n}", "test", {"ok": True})
    assert list(verify_gm_log(store)) == []
    with _unguarded(store, "gm_actions_no_delete"):
        store.conn.execute("DELETE FROM gm_actions WHERE id = 3")
    assert list(verify_gm_log(store))


def test_chain_detects_swapped_events(store: Store) -> None:
    _chained_events(store)
    _tamper(
        store,
        "UPDATE events SET seq = -1 WHERE table_id = 't1' AND seq = 2",
        "UPDATE events SET seq = 2 WHERE table_id = 't1' AND seq = 3",
        "UPDATE events SET seq = 3 WHERE table_id = 't1' AND seq = -1",
    )
    problems = list(verify_event_chains(store))
    assert problems and {p.table for p in problems} == {"t1"}
    assert "chain_link" in {p.kind for p in problems}


def test_chain_detects_rows_swapped_whole_between_positions(store: Store) -> None:
    """Swapping every column but the position (as if rows were moved) breaks the links."""
    _chained_events(store)
    columns = "type, payload, created_at, prev_hash, hash"
    a = store.one(f"SELECT {columns} FROM events WHERE table_id = 't2' AND seq = 2")
    b = store.one(f"SELECT {columns} FROM events WHERE table_id = 't2' AND seq = 5")
    with _unguarded(store, "events_no_update"):
        for row, seq in ((b, 2), (a, 5)):
            store.conn.execute(
                "UPDATE events SET type = ?, payload = ?, created_at = ?, "
                "prev_hash = ?, hash = ? WHERE table_id = 't2' AND seq = ?",
                (*row, seq),
            )
    kinds = {p.kind for p in verify_event_chains(store)}
    assert "chain_link" in kinds


# -- a settlement lands atomically ------------------------------------------------------------


def _running_hand(store: Store) -> tuple[hand_store.TableLog, int]:
    compiled, text = qq_config()
    configs.deploy(store, compiled, text, None, "tester")
    table_store.open_table(store, "qq-1", "qq-showhand", "junior", "stud5", os.getpid())
    for name in ("ann", "bob", "cat"):
        ledger.grant(store, name, 10_000, "opening_balance")
    log = hand_store.TableLog(store, "qq-1")
    hand_id = hand_store.begin_hand(
        store,
        log,
        1,
        compiled["config_id"],
        "junior",
        "ann",
        100,
        [{"player": p, "coins": 10_000} for p in ("ann", "bob", "cat")],
        "c" * 64,
        "hmac-sha256-fy-v1",
        [{"type": "hand_started", "config_id": compiled["config_id"]}],
    )
    log.append(
        hand_id, [{"type": "ante", "player": p, "amount": 100} for p in ("ann", "bob", "cat")]
    )
    return log, hand_id


def _settlement(entries: list[tuple[str, int]]) -> dict:
    return {
        "entries": [
            {"player": p, "delta": d, "reason": "won" if d > 0 else "lost"} for p, d in entries
        ],
        "results": {p: "win" if d > 0 else "loss" for p, d in entries},
        "winners": [p for p, d in entries if d > 0],
        "score": {},
    }


def _snapshot(store: Store) -> dict:
    return {
        "ledger": [tuple(r) for r in store.all("SELECT * FROM ledger ORDER BY id")],
        "players": [tuple(r) for r in store.all("SELECT * FROM players ORDER BY name")],
        "hands": [tuple(r) for r in store.all("SELECT * FROM hands ORDER BY id")],
        "events": [tuple(r) for r in store.all("SELECT * FROM events ORDER BY id")],
    }


def test_a_failed_settlement_writes_nothing(store: Store) -> None:
    """A ledger row for an unknown player fails the settlement half-way: the earlier
    ledger rows, balances, events and the hand's end are all rolled back."""
    log, hand_id = _running_hand(store)
    before = _snapshot(store)
    head = (log.seq, log.head)
    bad = _settlement([("ann", 200), ("bob", -100), ("nobody", -100)])  # unknown player last
    with pytest.raises(StoreError, match="nobody"):
        hand_store.settle_hand(
            store, log, hand_id, [{"type": "hand_ended", "winners": ["ann"]}], bad, "ab" * 32
        )
    assert _snapshot(store) == before
    assert store.one("SELECT outcome FROM hands WHERE id = ?", (hand_id,))[0] == "running"
    assert (log.seq, log.head) == head
    assert (
        store.one("SELECT hash FROM events WHERE table_id = 'qq-1' ORDER BY seq DESC LIMIT 1")[0]
        == log.head
    )
    # the same log then settles the hand properly, and everything verifies
    good = _settlement([("ann", 200), ("bob", -100), ("cat", -100)])
    hand_store.settle_hand(
        store, log, hand_id, [{"type": "hand_ended", "winners": ["ann"]}], good, "ab" * 32
    )
    assert store.one("SELECT outcome FROM hands WHERE id = ?", (hand_id,))[0] == "settled"
    assert [ledger.coins(store, p) for p in ("ann", "bob", "cat")] == [10_200, 9_900, 9_900]
    assert list(verify_event_chains(store)) == [] and list(verify_balances(store)) == []


def test_a_crash_inside_the_settlement_transaction_writes_nothing(
    store: Store, monkeypatch
) -> None:
    """An exception after the ledger rows (while tallies are written) rolls back all."""
    log, hand_id = _running_hand(store)
    before = _snapshot(store)

    def broken(*args, **kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(ledger, "record_results", broken)
    with pytest.raises(RuntimeError):
        hand_store.settle_hand(
            store,
            log,
            hand_id,
            [{"type": "hand_ended"}],
            _settlement([("ann", 200), ("bob", -100), ("cat", -100)]),
            "ab" * 32,
        )
    assert _snapshot(store) == before
    assert not store.conn.in_transaction


def test_a_settlement_is_seen_whole_or_not_at_all_by_another_connection(tmp_path: Path) -> None:
    db = tmp_path / "g.db"
    with connect(db, create=True) as writer, connect(db) as reader:
        log, hand_id = _running_hand(writer)
        reader_before = _snapshot(reader)
        with pytest.raises(StoreError):
            hand_store.settle_hand(
                writer,
                log,
                hand_id,
                [{"type": "hand_ended"}],
                _settlement([("ann", 100), ("ghost", -100)]),
                "ab" * 32,
            )
        assert _snapshot(reader) == reader_before


def test_void_returns_stakes_and_records_a_significant_event(store: Store) -> None:
    log, hand_id = _running_hand(store)
    hand_store.void_hand(store, log, hand_id, "crash_recovery", "ab" * 32, "test")
    row = store.one("SELECT outcome, seed, ended_at FROM hands WHERE id = ?", (hand_id,))
    assert (row["outcome"], row["seed"]) == ("voided", "ab" * 32) and row["ended_at"]
    last = store.one(
        "SELECT type, payload FROM events WHERE hand_id = ? ORDER BY seq DESC LIMIT 1", (hand_id,)
    )
    assert last["type"] == "hand_voided"
    assert json.loads(last["payload"])["reason"] == "crash_recovery"
    assert [ledger.coins(store, p) for p in ("ann", "bob", "cat")] == [10_000] * 3
    assert hand_store.unfinished_hands(store) == []


# -- deploy, history, rollback through the CLI -----------------------------------------------


@pytest.fixture
def deployed_db(tmp_path: Path) -> Path:
    db = tmp_path / "g.db"
    gmtool("db", "init", "--db", db)
    return db


def _changed_qq(tmp_path: Path) -> Path:
    changed = tmp_path / "qq-changed.toml"
    shutil.copy(QQ, changed)
    gmtool("rules", "set", changed, "tiers.junior.street_caps", "[300, 500, 1000, 1000]")
    gmtool("rules", "set", changed, "profile.version", "2")  # a change is a new version
    return changed


def _history(db: Path) -> list[dict]:
    return json.loads(gmtool("deploy", "history", "--json", "--db", db).stdout)


def _active(db: Path, tier: str) -> str | None:
    with connect(db) as opened:
        return configs.active_config_id(opened, "qq-showhand", tier)


def test_deploy_history_rollback(deployed_db: Path, tmp_path: Path) -> None:
    db = deployed_db
    first = gmtool("deploy", QQ, "--db", db)
    assert "deployed qq-showhand v1" in first.stdout
    changed = _changed_qq(tmp_path)
    gmtool(
        "gm",
        "users",
        "add",
        "alice",
        "--role",
        "operator",
        "--key",
        public_key("alice"),
        "--db",
        db,
    )  # tester, the first operator (`db init`), registers alice
    gmtool("deploy", changed, "--db", db, "--as", "alice")
    rows = _history(db)
    assert [(r["profile_id"], r["active"], r["deployed_by"]) for r in rows] == [
        ("qq-showhand", 1, "tester"),
        ("qq-showhand", 1, "alice"),
    ]
    old, new = rows[0]["config_id"], rows[1]["config_id"]
    assert old != new and all(r["deployed_at"] for r in rows)
    assert _active(db, "junior") == _active(db, "training") == new
    with connect(db) as opened:  # the profile text is stored with the compiled config
        text = opened.one("SELECT profile_text FROM configs WHERE config_id = ?", (new,))[0]
    assert text == changed.read_text(encoding="utf-8")

    run = gmtool("deploy", "rollback", "qq-showhand", "--db", db)
    assert new[:12] in run.stdout and old[:12] in run.stdout
    assert _active(db, "junior") == _active(db, "training") == old
    rows = _history(db)
    assert len(rows) == 3 and rows[1]["active"] == 0 and rows[2]["config_id"] == old
    text_history = gmtool("deploy", "history", "--db", db).stdout
    assert "qq-showhand" in text_history
    with connect(db) as opened:  # each row was made with the GM action that names it
        made = [
            json.loads(r[0])["deployment"]
            for r in opened.all(
                "SELECT outcome FROM gm_actions WHERE action IN ('deploy', 'rollback') ORDER BY id"
            )
        ]
    assert made == [row["id"] for row in rows]
    assert gmtool("audit", "--db", db).returncode == 0


def test_deploy_to_some_rooms_only(deployed_db: Path, tmp_path: Path) -> None:
    db = deployed_db
    gmtool("deploy", QQ, "--db", db)
    old = _active(db, "junior")
    run = gmtool(
        "deploy", _changed_qq(tmp_path), "--rooms", "junior", "--rooms", "middle", "--db", db
    )
    assert "junior, middle" in run.stdout
    new = _active(db, "junior")
    assert new != old and _active(db, "middle") == new
    assert _active(db, "training") == _active(db, "expert") == old
    assert _history(db)[-1]["rooms"] == ["junior", "middle"]


def test_deploy_to_an_unknown_room_is_refused(deployed_db: Path) -> None:
    run = gmtool("deploy", QQ, "--rooms", "penthouse", "--db", deployed_db, expect=2)
    assert "penthouse" in run.stderr and "junior" in run.stderr
    assert _history(deployed_db) == []


def test_rollback_with_nothing_before_is_refused(deployed_db: Path) -> None:
    gmtool("deploy", QQ, "--db", deployed_db)
    run = gmtool("deploy", "rollback", "qq-showhand", "--db", deployed_db, expect=2)
    assert "nothing to roll back" in run.stderr
    assert len(_history(deployed_db)) == 1


def test_deploy_an_invalid_or_missing_profile(deployed_db: Path, tmp_path: Path) -> None:
    gmtool("deploy", tmp_path / "nope.toml", "--db", deployed_db, expect=2)
    broken = tmp_path / "broken.toml"
    broken.write_text(
        QQ.read_text(encoding="utf-8").replace(
            'escape_policy = "forfeit_to_banker"', 'escape_policy = "vanish"'
        )
    )
    run = gmtool("deploy", broken, "--db", deployed_db, expect=None)
    assert run.returncode in (1, 2)
    assert _history(deployed_db) == []


# -- where the database is --------------------------------------------------------------------


def test_resolve_path_order(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("GMTOOL_DB", raising=False)
    assert resolve_path(None) == Path("gmtool.db")
    monkeypatch.setenv("GMTOOL_DB", str(tmp_path / "env.db"))
    assert resolve_path(None) == tmp_path / "env.db"
    assert resolve_path(str(tmp_path / "flag.db")) == tmp_path / "flag.db"


def test_cli_db_path_flag_then_env_then_cwd(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    env_db = tmp_path / "env.db"
    flag_db = tmp_path / "flag.db"
    env = clean_env(GMTOOL_DB=str(env_db))

    gmtool("db", "init", cwd=work, env=env)
    assert env_db.exists() and not (work / "gmtool.db").exists()
    gmtool("db", "init", "--db", flag_db, cwd=work, env=env)
    assert flag_db.exists()
    gmtool("deploy", QQ, cwd=work, env=env)  # goes to $GMTOOL_DB
    assert len(_history(env_db)) == 1 and _history(flag_db) == []

    gmtool("db", "init", cwd=work)  # neither: ./gmtool.db
    assert (work / "gmtool.db").exists()
    run = gmtool("deploy", "history", "--json", cwd=work)
    assert json.loads(run.stdout) == []
