"""Stores that a refused command must leave as they were (issue 13, found by an outside
probe): an empty file given as --db, a store `db init` made given to the demo, a store
another process is writing, keys a refused host start would leave behind, and the busy
timeout's own setting."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import clean_env, gmtool_command, public_key

CLI_TIMEOUT_S = 300


def _run(*args, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*gmtool_command(), *map(str, args)],
        capture_output=True,
        text=True,
        env=clean_env(**(env or {})),
        timeout=CLI_TIMEOUT_S,
        check=False,
    )


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize(
    "command",
    [
        ["players", "adjust", "bot-001", "5", "--reason", "t", "--as", "alice"],
        ["house", "run", "--hands", "1"],
        ["gm", "users", "add", "alice", "--role", "operator", "--as", "alice"],
    ],
)
def test_an_empty_file_given_as_the_store_stays_empty(tmp_path: Path, command) -> None:
    db = tmp_path / "empty.db"
    db.write_bytes(b"")
    run = _run(*command, "--db", db)
    assert run.returncode == 2 and "empty file" in run.stderr, run.stderr
    assert db.stat().st_size == 0 and sorted(p.name for p in tmp_path.iterdir()) == ["empty.db"]


def test_a_refused_host_start_leaves_no_key_or_witness(tmp_path: Path) -> None:
    db = tmp_path / "fresh.db"
    assert _run("db", "init", "--db", db).returncode == 0
    before = sorted(p.name for p in tmp_path.iterdir())
    run = _run("house", "run", "--db", db, "--system", "nope", "--hands", "1")
    assert run.returncode == 2, run.stderr
    run = _run("house", "run", "--db", db, "--hands", "1")  # nothing deployed
    assert run.returncode == 2, run.stderr
    after = sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(".host.lock"))
    assert after == before


def test_the_demo_does_not_replace_a_store_db_init_made(tmp_path: Path) -> None:
    db = tmp_path / "mine.db"
    assert _run("db", "init", "--db", db).returncode == 0
    before = _digest(db)
    run = _run("demo", "--db", db, "--duration", "1")
    assert run.returncode == 2 and "not the demo's" in run.stderr, run.stderr
    assert _digest(db) == before


def _holder(db: Path) -> subprocess.Popen:
    """Another process holding a write transaction on `db` until its stdin closes."""
    code = (
        "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
        "c.execute('BEGIN IMMEDIATE'); print('holding', flush=True); sys.stdin.read()"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", code, str(db)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout.readline().strip() == "holding"  # waits for the event, not a time
    return holder


def test_the_demo_does_not_replace_a_store_another_process_is_writing(tmp_path: Path) -> None:
    db = tmp_path / "demo.db"
    assert _run("demo", "--db", db, "--duration", "1").returncode == 0
    holder = _holder(db)
    try:
        before = _digest(db)
        run = _run("demo", "--db", db, "--duration", "1", env={"GMTOOL_BUSY_TIMEOUT_MS": "300"})
        assert run.returncode == 2 and "locked" in run.stderr, run.stderr
        assert _digest(db) == before
    finally:
        holder.communicate("")


def test_a_blocked_host_does_not_blame_itself(tmp_path: Path) -> None:
    db = tmp_path / "demo.db"
    assert _run("demo", "--db", db, "--duration", "1").returncode == 0
    holder = _holder(db)
    try:
        run = _run(
            "house", "run", "--db", db, "--hands", "1", env={"GMTOOL_BUSY_TIMEOUT_MS": "300"}
        )
    finally:
        holder.communicate("")
    assert run.returncode == 2 and "locked" in run.stderr, run.stderr
    assert "its host" not in run.stderr, run.stderr


@pytest.mark.parametrize("value", ["abc", "1e3", "-5", "99999999999999999999"])
def test_a_bad_busy_timeout_setting_is_refused(tmp_path: Path, value: str) -> None:
    db = tmp_path / "t.db"
    run = _run("db", "init", "--db", db, env={"GMTOOL_BUSY_TIMEOUT_MS": value})
    assert run.returncode == 2 and "GMTOOL_BUSY_TIMEOUT_MS" in run.stderr, run.stderr
    assert "Traceback" not in run.stderr


def test_nothing_to_check_is_not_ok(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    for args in (["rules", "validate", empty], ["rules", "validate", ""]):
        run = _run(*args)
        assert run.returncode == 2 and "ok" not in run.stdout, (args, run.stdout, run.stderr)


def test_a_blank_db_path_is_refused_and_creates_nothing(tmp_path: Path) -> None:
    run = subprocess.run(
        [*gmtool_command(), "db", "init", "--db", ""],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=CLI_TIMEOUT_S,
        check=False,
    )
    assert run.returncode == 2 and "blank" in run.stderr, run.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("amount", ["１００", "1_000", "1e3", "0x10", " 5"])
def test_an_amount_is_ascii_digits(tmp_path: Path, amount: str) -> None:
    db = tmp_path / "demo.db"
    assert _run("demo", "--db", db, "--duration", "1").returncode == 0
    demo_gm = {"GMTOOL_KEYS": str(tmp_path / "demo.db.gm-keys")}  # the demo's operator
    before = _digest(db)
    run = _run(
        "players",
        "adjust",
        "bot-001",
        amount,
        "--reason",
        "t",
        "--db",
        db,
        "--as",
        "demo",
        env=demo_gm,
    )
    assert run.returncode == 2 and "not a valid amount" in run.stderr, run.stderr
    assert _digest(db) == before


def test_the_demo_keeps_a_demo_store_that_gms_have_worked_in(tmp_path: Path) -> None:
    db = tmp_path / "demo.db"
    assert _run("demo", "--db", db, "--duration", "1").returncode == 0
    assert (
        _run(
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
            "--as",
            "demo",
            env={"GMTOOL_KEYS": str(tmp_path / "demo.db.gm-keys")},
        ).returncode
        == 0
    )
    before = _digest(db)
    run = _run("demo", "--db", db, "--duration", "1")
    assert run.returncode == 2 and "GM users" in run.stderr, run.stderr
    assert _digest(db) == before


def test_verify_never_opens_a_named_pipe_and_reads_deep_json(tmp_path: Path) -> None:
    import os

    pipe = tmp_path / "report.json"
    os.mkfifo(pipe)
    for args in (["verify", pipe], ["verify", pipe, "--key", pipe]):
        run = _run(*args)  # a regression hangs here, and the timeout fails it
        assert run.returncode == 2 and "not a regular file" in run.stderr, run.stderr
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    run = _run("verify", deep)
    assert run.returncode == 2 and "internal error" not in run.stderr, run.stderr
