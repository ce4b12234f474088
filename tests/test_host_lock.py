"""The host lock `<db>.host.lock` (house/lock.py): a refused start leaves none behind.

An outside probe of issue 23 found the lock file left beside the store after every refused
`house run` (a store with nothing deployed, `--system nope`), looking as if a host had run
there. A start refused before it hosts now removes the file it made while it still holds
the lock; a host that ran leaves it, free (the console reads "no host since it exited");
a host that locked a file removed meanwhile notices and locks the new one, so one host per
database holds.
"""

from __future__ import annotations

import os
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


def test_a_host_that_ran_leaves_its_lock_file_free(gm: Gmtool, deployed_db: Path) -> None:
    from gmtool.house.lock import host_running

    gm("house", "run", "--hands", "2", "--tables", "1", "--db", deployed_db)
    assert _lock(deployed_db).exists() and host_running(deployed_db) is False


def test_a_second_lock_is_refused_while_the_first_is_held(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    with HostLock(db):
        assert _lock(db).read_text().strip() == str(os.getpid())
        with pytest.raises(StoreError, match="another host"):
            HostLock(db).acquire()
    assert _lock(db).exists()  # a host that ran leaves it (free)


def test_an_abandoned_start_removes_only_the_file_it_made(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    HostLock(db).acquire().abandon()
    assert not _lock(db).exists()
    HostLock(db).acquire().release()
    HostLock(db).acquire().abandon()  # the file was there before: it stays
    assert _lock(db).exists()


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
