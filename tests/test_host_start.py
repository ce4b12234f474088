"""What a host start may do to a store (issue 23, items 1, 2 and 9).

- The host key (`<db>.key`) is the store's one key, so the host and the audit agree by
  construction: `house run --seed TEXT` on a store without a key file makes the key TEXT
  stands for the store's key; a `--seed` that stands for another key than the file's is
  refused before anything changes. A seed the audit finds not derived from the key is
  explained in plain words.
- A start that is refused changes nothing in the store: no closed table opened, no table
  left "open" for the console to show as gone, no crashed hand voided.
- A store on a read-only mount is refused in one plain message (exit 2).

Every command is the real console script in a subprocess, on real SQLite files.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest
from conftest import CLI_TIMEOUT_S, Gmtool
from helpers import clean_env, gmtool_command
from test_closed_tables import JUNIOR, close_junior, host_run, statuses

from gmtool.house.seeds import key_path, seed_key_path


def sql_dump(db: Path) -> list[str]:
    """Everything the store holds, as SQL (the same whatever SQLite's WAL holds or not)."""
    conn = sqlite3.connect(db)
    try:
        return list(conn.iterdump())
    finally:
        conn.close()


def one_error(run: subprocess.CompletedProcess) -> str:
    """The one `error: ...` line of a refused command: no traceback, no OS error number."""
    assert run.stdout == "" or "error" not in run.stdout, run.stdout
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), run.stderr
    assert "Errno" not in lines[0] and "Traceback" not in run.stderr, run.stderr
    return lines[0]


def qq_host(gm: Gmtool, db: Path, *extra: str, expect: int = 0) -> subprocess.CompletedProcess:
    return gm(
        "house",
        "run",
        "--db",
        db,
        "--system",
        "qq-showhand",
        "--tables",
        "2",
        "--hands",
        "2",
        "--speed",
        "1000",
        *extra,
        expect=expect,
    )


@pytest.fixture
def closed_db(deployed_db: Path, virtual_host) -> Path:
    """A store whose host an operator closed a table of (test_closed_tables.py)."""
    return close_junior(deployed_db, virtual_host)


# -- item 1: --seed and the store's host key -------------------------------------------------


def test_a_seed_for_another_key_than_the_stores_is_refused_before_anything_changes(
    deployed_db: Path, gm: Gmtool
) -> None:
    qq_host(gm, deployed_db)  # a real store's host: it makes the store's own seed key
    key, dump = seed_key_path(deployed_db).read_bytes(), sql_dump(deployed_db)
    message = one_error(qq_host(gm, deployed_db, "--seed", "X", expect=2))
    assert message.startswith("error: --seed 'X' stands for another host key than this store's")
    assert "anyone could work out every deck" in message, message  # it would be published
    assert seed_key_path(deployed_db).read_bytes() == key and sql_dump(deployed_db) == dump
    assert not key_path(deployed_db).exists()
    gm("audit", "--db", deployed_db)


def test_a_seed_on_a_store_without_a_key_becomes_its_key_so_the_audit_agrees(
    deployed_db: Path, gm: Gmtool
) -> None:
    first = qq_host(gm, deployed_db, "--seed", "X")
    assert first.stdout.splitlines()[0] == (
        f"host key: {key_path(deployed_db)} now holds the key --seed stands for; anyone who "
        "knows the seed text can work out every deck (demo and test stores only)"
    )
    written = key_path(deployed_db).read_text(encoding="ascii").strip()
    assert written == hashlib.sha256(b"X").hexdigest()
    assert "host key" not in qq_host(gm, deployed_db).stdout  # no --seed: the same key
    qq_host(gm, deployed_db, "--seed", "X")  # the seed of the store's key: accepted
    gm("audit", "--db", deployed_db)  # every hand, seeded or not, derives from the key


def test_a_seed_the_key_does_not_derive_is_explained_in_plain_words(
    host_copy: Path, gm: Gmtool
) -> None:
    key_path(host_copy).write_text(hashlib.sha256(b"another").hexdigest() + "\n")
    run = gm("audit", "--db", host_copy, "--json", expect=1)
    seeds = [p for p in json.loads(run.stdout)["problems"] if p["kind"] == "seed"]
    assert seeds, run.stdout
    hand = seeds[0]["hand"]
    assert seeds[0]["detail"].startswith(
        f"hand {hand} was not dealt from this store's host key (copy.db.key): its seed is "
        "not the one the key derives for "
    ), seeds[0]
    assert seeds[0]["detail"].endswith(
        "so nothing shows its deck was fixed by its table and number rather than chosen "
        "(a host with another key dealt it: `house run --seed` with another text, or a key "
        "file replaced since)"
    ), seeds[0]


# -- item 2: a refused start changes nothing -------------------------------------------------


def test_a_refused_host_start_changes_nothing_in_the_store(
    closed_db: Path, gm: Gmtool, tmp_path: Path
) -> None:
    """`--witness` naming a file: before, the start failed only at its first checkpoint,
    after opening every planned table (the closed one too) for the console to show as
    gone."""
    not_a_folder = tmp_path / "notadir"
    not_a_folder.write_text("")
    before, dump = statuses(gm, closed_db), sql_dump(closed_db)
    message = one_error(host_run(gm, closed_db, "--witness", str(not_a_folder), expect=2))
    # The store records the witness its first host signed into (issue 23 item 4): another
    # one is refused before anything else is looked at.
    assert message.startswith(f"error: --witness {not_a_folder} is not this store's witness")
    assert sql_dump(closed_db) == dump
    assert statuses(gm, closed_db) == before
    assert before[JUNIOR][0] == "closed" and all(host != "gone" for _, host in before.values())


def test_a_first_host_start_refused_for_its_witness_changes_nothing(
    deployed_db: Path, gm: Gmtool, tmp_path: Path
) -> None:
    """A store no host has started on records no witness yet: a `--witness` naming a file
    is refused before the store is touched (no witness recorded, no table opened)."""
    not_a_folder = tmp_path / "notadir"
    not_a_folder.write_text("")
    dump = sql_dump(deployed_db)
    message = one_error(host_run(gm, deployed_db, "--witness", str(not_a_folder), expect=2))
    assert message == (
        f"error: {not_a_folder} is not a folder: it cannot hold this store's signed checkpoints"
    )
    assert sql_dump(deployed_db) == dump


# -- item 9: a store on a read-only mount ---------------------------------------------------


def read_only(folder: Path, *args: str) -> subprocess.CompletedProcess:
    """The console run with `folder` mounted read-only (a bind mount in a mount namespace of
    its own: nothing outside the command sees it). Root needs only a mount namespace; any
    other user maps themselves to root in a user namespace of their own first."""
    namespace = ["unshare", "--mount", "--propagation", "private"]
    if os.geteuid() != 0:
        namespace[1:1] = ["--user", "--map-root-user"]
    script = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"'
    return subprocess.run(
        [*namespace, "sh", "-c", script, str(folder), *gmtool_command(), *args],
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
    )


def test_house_run_on_a_read_only_mount_says_so_in_plain_words(closed_db: Path) -> None:
    dump = sql_dump(closed_db)
    run = read_only(closed_db.parent, "house", "run", "--db", str(closed_db), "--hands", "1")
    assert run.returncode == 2, (run.returncode, run.stdout, run.stderr)
    assert one_error(run) == (
        f"error: {closed_db}: the store is on a read-only file system: the host writes every "
        "hand into it (and its lock, host key and checkpoints beside it). Run `gmtool house "
        "run` on a copy in writable storage; reading commands work where it is"
    )
    assert sql_dump(closed_db) == dump
    reading = read_only(closed_db.parent, "tables", "list", "--closed", "--db", str(closed_db))
    assert reading.returncode == 0 and JUNIOR in reading.stdout, reading.stderr


def test_no_bots_and_no_listen_is_a_usage_error_before_anything_changes(gm, tmp_path) -> None:
    """`--bots 0` leaves every seat to people: without `--listen` no one could sit."""
    db = tmp_path / "people.db"
    gm("db", "init", "--db", db)
    before = db.read_bytes()
    run = gm("house", "run", "--bots", "0", "--hands", "1", "--db", db, expect=2)
    assert "give --listen too" in run.stderr and "Traceback" not in run.stderr
    assert db.read_bytes() == before
