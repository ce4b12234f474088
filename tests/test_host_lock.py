"""The host lock `<db>.host.lock` (house/lock.py): only a killed host leaves one behind.

An outside probe of issue 23 found the lock file left beside the store after every refused
`house run` (a store with nothing deployed, `--system nope`), looking as if a host had run
there; a third probe found it after a clean stop (SIGINT, SIGTERM) and after a start
refused when a lock file was already there, holding the stopped process's pid. A host that
stops, however its start or run ended, removes the file while it still holds the lock; a
killed host leaves it free (the console reads "no host since it exited"); a host that
locked a file removed meanwhile notices and locks the new one, so one host per database
holds.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import OPERATOR, Gmtool

from gmtool.house.lock import HostLock
from gmtool.store.db import StoreError


def _lock(db: Path) -> Path:
    return db.with_name(db.name + ".host.lock")


@pytest.mark.parametrize(
    "case", ["not a store", "nothing deployed", "unknown system", "bad option"]
)
def test_a_refused_house_run_leaves_no_lock_file(gm: Gmtool, tmp_path: Path, case: str) -> None:
    db = tmp_path / "live.db"
    args = ["house", "run", "--hands", "1", "--db", db]
    if case == "not a store":
        db.write_text("not an SQLite file\n")
    else:
        gm("db", "init", "--db", db, "--as", OPERATOR)
    if case == "unknown system":
        gm.deploy_all(db)
        args += ["--system", "nope"]
    if case == "bad option":
        args += ["--tables", "0"]
    run = gm(*args, expect=None)
    assert run.returncode in (1, 2), run.stdout + run.stderr
    assert "Traceback" not in run.stderr
    assert not _lock(db).exists(), case


def test_a_host_that_ran_removes_its_lock_file(gm: Gmtool, deployed_db: Path) -> None:
    from gmtool.house.lock import host_running

    gm("house", "run", "--hands", "2", "--tables", "1", "--speed", "100", "--db", deployed_db)
    assert not _lock(deployed_db).exists() and host_running(deployed_db) is False


@pytest.mark.parametrize("signal_name", ["SIGINT", "SIGTERM"])
def test_a_host_stopped_by_a_signal_removes_its_lock_file(
    deployed_db: Path, start_host, signal_name: str
) -> None:
    host = start_host(deployed_db, "--tables", "1", "--speed", "100")
    host.wait_for_line(r"hand \d+ started")
    assert _lock(deployed_db).exists()
    host.proc.send_signal(getattr(signal, signal_name))
    assert host.proc.wait(timeout=60) in (0, 130)
    assert not _lock(deployed_db).exists()


def test_a_start_refused_where_a_lock_file_was_removes_it(gm: Gmtool, deployed_db: Path) -> None:
    """A free lock file a killed host left, then a start refused (a damaged seed key)."""
    _lock(deployed_db).write_text("12345\n")
    deployed_db.with_name(deployed_db.name + ".seed.key").write_text("garbage\n")
    gm("house", "run", "--hands", "1", "--db", deployed_db, expect=2)
    assert not _lock(deployed_db).exists()


def test_a_second_lock_is_refused_while_the_first_is_held(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    with HostLock(db):
        assert _lock(db).read_text().strip() == str(os.getpid())
        with pytest.raises(StoreError, match="another host"):
            HostLock(db).acquire()
    assert not _lock(db).exists()  # removed by its holder as it stopped


def test_a_killed_holder_leaves_its_lock_file_free(tmp_path: Path) -> None:
    """The kernel frees the flock of a process that dies; the file stays, free."""
    from gmtool.house.lock import host_running

    db = tmp_path / "s.db"
    child = subprocess.Popen(
        [sys.executable, "-c", KILLED_HOLDER, str(db)], stdout=subprocess.PIPE, text=True
    )
    assert child.stdout.readline().strip() == "locked"
    assert host_running(db) is True
    child.kill()
    child.wait()
    assert _lock(db).exists() and host_running(db) is False
    HostLock(db).acquire().release()


KILLED_HOLDER = """
import signal, sys
from pathlib import Path
from gmtool.house.lock import HostLock
lock = HostLock(Path(sys.argv[1])).acquire()
print("locked", flush=True)
signal.pause()  # held until the test kills it
"""


def test_a_lock_file_removed_by_its_holder_is_not_trusted(tmp_path: Path) -> None:
    """The race the removal opens: B opens the file, A removes it and unlocks, B's flock
    then succeeds on a file no longer at the path. B must not count that as holding the
    store (a third host would lock a new file at the path): it locks the new file."""
    db = tmp_path / "s.db"
    first = HostLock(db).acquire()
    second = HostLock(db)
    early = os.open(second.path, os.O_RDWR)  # B opened the old file before A released
    first.abandon()
    assert not second._still_the_path(early)
    os.close(early)
    second.acquire()
    with pytest.raises(StoreError, match="another host"):
        HostLock(db).acquire()
    second.release()
