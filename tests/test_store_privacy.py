"""Issue 24 point 7: a store readable by others (copied with umask 022: mode 0644) would
show the face-down cards of running hands to every user of the machine, through the
database file and its -wal. Before it hosts, `gmtool house run` makes the store's files
owner-only (database, -wal, -shm, the host's seed and checkpoint keys) and says so on
stderr; the -wal and -shm SQLite makes while hands run are then owner-only too. Real
files with real modes; run as root, the test also reads them as user `nobody`."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import OPERATOR, RULES, LiveHost

SECRETS = ("", "-wal", "-shm", ".key", ".seed.key", ".checkpoint.key")


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _secret_files(db: Path) -> list[Path]:
    return [p for s in SECRETS if (p := db.with_name(db.name + s)).exists()]


def _readable_by_nobody(path: Path) -> bool:
    """Whether user `nobody` can read `path` (the test runs as root; folders opened up)."""
    run = subprocess.run(
        ["head", "-c", "1", str(path)], user="nobody", capture_output=True, check=False
    )
    return run.returncode == 0


@pytest.fixture
def shared_folder() -> Iterator[Path]:
    """A folder every user may enter (pytest's own are private to its user), removed after
    the test: only the files' own modes stand between other users and the store."""
    folder = Path(tempfile.mkdtemp(prefix="gmtool-privacy-"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder)


def test_house_run_makes_a_store_readable_by_others_private_before_hosting(
    gm, shared_folder: Path
) -> None:
    db = shared_folder / "live.db"
    gm("db", "init", "--db", db, "--as", OPERATOR)
    gm("deploy", RULES / "qq-showhand.toml", "--db", db, "--as", OPERATOR)
    gm("house", "run", "--db", db, "--hands", "1", "--tables", "1", "--speed", "200")
    for path in _secret_files(db):  # as `cp` with umask 022 leaves a copy (and a group)
        path.chmod(0o644 if path == db else 0o640)
    wal = db.with_name(db.name + "-wal")
    wal.write_bytes(b"")  # a -wal left readable beside it too (SQLite reuses an empty one)
    wal.chmod(0o644)
    exposed = {p.name: _mode(p) for p in _secret_files(db)}
    assert {db.name, wal.name, f"{db.name}.seed.key", f"{db.name}.checkpoint.key"} <= set(exposed)
    if os.geteuid() == 0:
        assert _readable_by_nobody(db)

    host = LiveHost(db, "--tables", "2", "--speed", "20", "--system", "qq-showhand")
    try:
        host.wait_for_line(r"^hand \d+ started")
        warning = host.wait_for_line(r"made the store's files private").string
        for name, mode in exposed.items():
            assert f"{name} {mode:04o} -> {mode & 0o700:04o}" in warning, warning
        assert re.search(r"face-down cards", warning), warning
        running = _secret_files(db)
        assert {db.name + "-wal", db.name + "-shm"} <= {p.name for p in running}
        for path in running:  # while hands run: the -wal SQLite writes them into included
            assert _mode(path) & 0o077 == 0, (path.name, oct(_mode(path)))
            if os.geteuid() == 0:
                assert not _readable_by_nobody(path), path
        assert host.stop() == 0
    finally:
        host.kill()
    again = gm("house", "run", "--db", db, "--hands", "1", "--tables", "1", "--speed", "200")
    assert "private" not in again.stderr, again.stderr  # nothing to say a second time


def test_house_run_never_changes_the_mode_of_what_a_link_points_to(gm, shared_folder: Path) -> None:
    """A symbolic link in place of one of the store's files (planted by whoever may write
    its folder) is refused, not followed: a host run as root would otherwise take the
    group's and others' permissions from any file of the machine."""
    db = shared_folder / "live.db"
    gm("db", "init", "--db", db, "--as", OPERATOR)
    elsewhere = shared_folder / "not-the-stores.txt"
    elsewhere.write_text("a file of the machine\n")
    elsewhere.chmod(0o644)
    db.with_name(db.name + ".key").symlink_to(elsewhere)
    run = gm("house", "run", "--db", db, "--hands", "1", expect=2)
    assert "live.db.key: a symbolic link to a file other users may read" in run.stderr, run
    assert f"chmod go= {elsewhere.resolve()}" in run.stderr, run.stderr
    assert _mode(elsewhere) == 0o644  # untouched
    assert not (shared_folder / "live.db.witness").exists()  # refused before anything


def test_db_init_on_an_empty_file_makes_it_private(gm, tmp_path: Path) -> None:
    """Third outside probe of issue 23: `touch live.db; gmtool db init --db live.db` left
    the store 0644 (a new file is made 0600). An empty file given is the store's now."""
    db = tmp_path / "live.db"
    db.touch()
    db.chmod(0o644)
    gm("db", "init", "--db", db, "--as", OPERATOR)
    assert _mode(db) == 0o600
