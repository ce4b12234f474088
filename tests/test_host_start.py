"""What a host start may do to a store (issue 23, items 1, 2 and 9).

- The host key (`<db>.key`) is the store's one key, so the host and the audit agree by
  construction: `house run --seed TEXT` on a store without a key file makes the key TEXT
  stands for the store's key; a `--seed` that stands for another key than the file's is
  refused before anything changes. A seed the audit finds not derived from the key is
  explained in plain words.
- A start that is refused changes nothing in the store: no closed table opened, no table
  left "open" for the console to show as gone, no crashed hand voided.
- A store on a read-only mount is refused in one plain message (exit 2); so is a
  PostgreSQL database whose transactions are read-only, where reading commands work too.

Every command is the real console script in a subprocess, on real stores: each test
that involves one runs on both backends (`deployed_store`, tests/backends.py), where a
PostgreSQL store's host keeps its key files in its home (`home/<database>.key`, ...).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest
from backends import Located, deployed_store_fixture, pg_server_fixture  # noqa: F401
from conftest import CLI_TIMEOUT_S, Gmtool
from helpers import clean_env, gmtool_command
from postgres import Databases
from psycopg import sql
from test_closed_tables import JUNIOR, close_junior, host_run, statuses

from gmtool.house.seeds import key_path


def sql_dump(db: Path) -> list[str]:
    """Everything the store holds, as SQL (the same whatever SQLite's WAL holds or not)."""
    conn = sqlite3.connect(db)
    try:
        return list(conn.iterdump())
    finally:
        conn.close()


def contents(located: Located) -> list:
    """Everything the store holds: a SQLite file's SQL dump; every table of a PostgreSQL
    store's schema with its rows (in an order of their own)."""
    if not located.postgres:
        return sql_dump(Path(located.db))
    tables = located.rows(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = "
        "current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name"
    )
    return [
        (name, sorted(map(repr, located.rows(f'SELECT * FROM "{name}"')))) for (name,) in tables
    ]


def files(located: Located) -> Path:
    """Where the store's host keeps its files, named after it (`<where>.key`, ...)."""
    if not located.postgres:
        return Path(located.db)
    return located.home.resolve() / located.db.rsplit("/", 1)[1]


def key_files(located: Located) -> dict[str, bytes]:
    """The host's key files (the host key, seed keys, the checkpoint key), by name."""
    where = files(located)
    return {
        path.name: path.read_bytes()
        for path in where.parent.glob(f"{where.name}.*")
        if path.suffix in (".key", ".pub") and path.is_file()
    }


def audit_clean(gm: Gmtool, located: Located) -> None:
    """`gmtool audit` finds nothing (PostgreSQL: with the hosts' checkpoint key)."""
    key = [] if not located.postgres else ["--key", f"{files(located)}.checkpoint.pub"]
    report = gm.json("audit", "--db", located.db, *key, "--json", env=located.env())
    assert report["problems"] == [], report["problems"]


def one_error(run: subprocess.CompletedProcess) -> str:
    """The one `error: ...` line of a refused command: no traceback, no OS error number."""
    assert run.stdout == "" or "error" not in run.stdout, run.stdout
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), run.stderr
    assert "Errno" not in lines[0] and "Traceback" not in run.stderr, run.stderr
    return lines[0]


def qq_host(
    gm: Gmtool, located: Located, *extra: str, expect: int = 0
) -> subprocess.CompletedProcess:
    return gm(
        "house",
        "run",
        "--db",
        located.db,
        *located.host_args(),
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


@pytest.fixture
def closed_store(deployed_store: Located, virtual_host) -> Located:
    """`closed_db` on each backend: its host played two qq tables until an operator closed
    JUNIOR during a hand, and then stopped (test_closed_tables.py's `close_junior`)."""
    close_junior(deployed_store.db, virtual_host, **deployed_store.host_options())
    return deployed_store


# -- item 1: --seed and the store's host key -------------------------------------------------


def test_a_seed_for_another_key_than_the_stores_is_refused_before_anything_changes(
    deployed_store: Located, gm: Gmtool
) -> None:
    located = deployed_store
    qq_host(gm, located)  # a real store's host: it makes (and registers) its own seed key
    keys, dump = key_files(located), contents(located)
    assert any(".seed" in name for name in keys), keys
    message = one_error(qq_host(gm, located, "--seed", "X", expect=2))
    assert message.startswith("error: --seed 'X' stands for another host key than this store's")
    assert "anyone could work out every deck" in message, message  # it would be published
    named = message.split("than this store's (", 1)[1].split(",", 1)[0]
    assert named in keys, (named, keys)  # the key file it names is the one dealt from
    assert key_files(located) == keys and contents(located) == dump
    assert not key_path(files(located)).exists()
    audit_clean(gm, located)


def test_a_seed_on_a_store_without_a_key_becomes_its_key_so_the_audit_agrees(
    deployed_store: Located, gm: Gmtool
) -> None:
    located = deployed_store
    first = qq_host(gm, located, "--seed", "X")
    assert first.stdout.splitlines()[0] == (
        f"host key: {key_path(files(located))} now holds the key --seed stands for; anyone "
        "who knows the seed text can work out every deck (demo and test stores only)"
    )
    written = key_path(files(located)).read_text(encoding="ascii").strip()
    assert written == hashlib.sha256(b"X").hexdigest()
    plain = qq_host(gm, located)  # no --seed
    assert "host key" not in plain.stdout
    if located.postgres:
        # Each host of a shared store deals with a new secret key of its own (registered,
        # house/seed_source.py); from then on the store deals from secret keys, so a
        # published --seed is refused as on a SQLite store with its own seed key.
        (said,) = [line for line in plain.stdout.splitlines() if line.startswith("seed key:")]
        (made,) = files(located).parent.glob(f"{files(located).name}.seed-*.key")
        assert str(made) in said, said
        refused = one_error(qq_host(gm, located, "--seed", "X", expect=2))
        assert refused.startswith("error: --seed 'X' stands for another host key"), refused
    else:  # the store's one key goes on (a demo store), with --seed or without
        assert "seed key" not in plain.stdout
        qq_host(gm, located, "--seed", "X")  # the seed of the store's key: accepted
    audit_clean(gm, located)  # every hand, seeded or not, derives from its host's key


# SQLite only: the audit reads a host key file beside a SQLite store; a PostgreSQL store's
# audit checks each hand against the key its host registered (no `<db>.key` is read).
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
    closed_store: Located, gm: Gmtool, tmp_path: Path
) -> None:
    """`--witness` naming a file: before, the start failed only at its first checkpoint,
    after opening every planned table (the closed one too) for the console to show as
    gone."""
    located = closed_store
    not_a_folder = tmp_path / "notadir"
    not_a_folder.write_text("")
    before, dump = statuses(gm, located.db), contents(located)
    message = one_error(
        host_run(gm, located.db, *located.host_args(), "--witness", str(not_a_folder), expect=2)
    )
    # The store records the witness its first host signed into (issue 23 item 4): another
    # one is refused before anything else is looked at.
    assert message.startswith(f"error: --witness {not_a_folder} is not this store's witness")
    assert contents(located) == dump
    assert statuses(gm, located.db) == before
    assert before[JUNIOR][0] == "closed" and all(host != "gone" for _, host in before.values())


def test_a_first_host_start_refused_for_its_witness_changes_nothing(
    deployed_store: Located, gm: Gmtool, tmp_path: Path
) -> None:
    """A store no host has started on records no witness yet: a `--witness` naming a file
    is refused before the store is touched (no witness recorded, no table opened)."""
    located = deployed_store
    not_a_folder = tmp_path / "notadir"
    not_a_folder.write_text("")
    dump = contents(located)
    message = one_error(
        host_run(gm, located.db, *located.host_args(), "--witness", str(not_a_folder), expect=2)
    )
    assert message == (
        f"error: {not_a_folder} is not a folder: it cannot hold this store's signed checkpoints"
    )
    assert contents(located) == dump


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


# SQLite only: a mount holds a store's file; PostgreSQL's read-only store is the next test's.
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


@pytest.mark.parametrize("deployed_store", ["postgresql"], indirect=True)
def test_house_run_on_a_read_only_database_says_so_in_plain_words(
    closed_store: Located, gm: Gmtool, pg_server: Databases
) -> None:
    """A PostgreSQL store the host cannot write: its database's transactions read-only by
    default (as a replica's are). The start is refused in one plain message, nothing in the
    store or the hosts' home changes, and reading commands work where it is."""
    located = closed_store
    dump, keys = contents(located), key_files(located)
    name = located.db.rsplit("/", 1)[1]
    pg_server.conn.execute(
        sql.SQL("ALTER DATABASE {} SET default_transaction_read_only = on").format(
            sql.Identifier(name)
        )
    )
    run = gm("house", "run", "--db", located.db, *located.host_args(), "--hands", "1", expect=2)
    assert one_error(run) == (
        f"error: {located.db}: the database is read-only (its transactions are read-only by "
        "default): this command writes to it (a host writes every hand into it). Run it on a "
        "database it may write; reading commands work where it is"
    )
    assert contents(located) == dump and key_files(located) == keys
    reading = gm("tables", "list", "--closed", "--db", located.db)
    assert JUNIOR in reading.stdout, reading.stderr
    gm("audit", "--db", located.db, "--key", f"{files(located)}.checkpoint.pub")


def test_no_bots_and_no_listen_is_a_usage_error_before_anything_changes(
    deployed_store: Located, gm: Gmtool
) -> None:
    """`--bots 0` leaves every seat to people: without `--listen` no one could sit."""
    located = deployed_store
    before, keys = contents(located), key_files(located)
    run = gm(
        "house", "run", "--bots", "0", "--hands", "1", "--db", located.db, *located.host_args(),
        expect=2,
    )  # fmt: skip
    assert "give --listen too" in run.stderr and "Traceback" not in run.stderr
    assert contents(located) == before and key_files(located) == keys
