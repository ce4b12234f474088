"""A GM typing the wrong thing (an outside probe of 2026-12-05): each of these hung, wrote
the store first, replaced a link, called a typo deleted evidence or printed a raw error.
Each is one plain message now, and nothing changes."""

from __future__ import annotations

import os
import shutil
import sqlite3
import stat
from pathlib import Path

import pytest
from conftest import OPERATOR

RULES = Path(__file__).resolve().parent.parent / "rules"


def _counts(db: Path) -> tuple[int, int]:
    conn = sqlite3.connect(db)
    try:
        players = conn.execute("SELECT COUNT(*) FROM players").fetchone()[0]
        actions = conn.execute("SELECT COUNT(*) FROM gm_actions").fetchone()[0]
        return players, actions
    finally:
        conn.close()


@pytest.mark.parametrize(
    "command", [("hands", "list"), ("audit",), ("db", "init", "--as", OPERATOR)]
)
def test_a_store_path_that_is_a_pipe_is_refused_not_waited_on(
    gm, tmp_path: Path, command: tuple[str, ...]
) -> None:
    pipe = tmp_path / "store.db"
    os.mkfifo(pipe)
    run = gm(*command, "--db", pipe, expect=2, timeout=60)
    assert "not a regular file" in run.stderr, run.stderr
    assert stat.S_ISFIFO(pipe.stat().st_mode)


@pytest.mark.parametrize(
    "url", ["ws://127.0.0.1:99999", "ws://[::1", "ws://127.0.0.1:abc", "ws://127.0.0.1:0"]
)
def test_bots_refuse_a_gateway_address_before_writing_anything(
    gm, deployed_db: Path, url: str
) -> None:
    before = _counts(deployed_db)
    run = gm(
        "bots", "--connect", url, "--count", "2", "--db", deployed_db, "--as", OPERATOR,
        "--grant", "500", expect=2,
    )  # fmt: skip
    assert "a gateway address is ws://HOST:PORT" in run.stderr, run.stderr
    assert "internal error" not in run.stderr
    assert _counts(deployed_db) == before


def test_rules_set_writes_through_a_link_to_the_profile(gm, tmp_path: Path) -> None:
    real = tmp_path / "real" / "qq-showhand.toml"
    real.parent.mkdir()
    shutil.copyfile(RULES / "qq-showhand.toml", real)
    link = tmp_path / "qq.toml"
    link.symlink_to(real)
    gm("rules", "set", link, "tiers.junior.ante", "200", "tiers.junior.bet_unit", "200")
    assert link.is_symlink()
    assert "ante = 200" in real.read_text(encoding="utf-8")


def test_a_witness_that_names_no_folder_is_a_usage_error_not_deleted_evidence(
    gm, host_copy: Path
) -> None:
    folder = host_copy.parent / "host.db.witness"
    checkpoint = sorted(folder.iterdir())[-1]
    for given, said in (
        (folder.with_name("host.db.witnes"), "no such folder"),
        (checkpoint, "is a file"),
    ):
        for command in (("audit",), ("hands", "show", "1")):
            run = gm(*command, "--db", host_copy, "--witness", given, expect=2)
            assert said in run.stderr and "witness_missing" not in run.stdout, run.stderr
    gm("audit", "--db", host_copy, "--witness", folder)


def test_a_listen_address_of_another_machine_is_one_plain_message(gm, deployed_db: Path) -> None:
    run = gm(
        "house", "run", "--db", deployed_db, "--listen", "203.0.113.1:80", "--tables", "1",
        "--hands", "1", expect=2,
    )  # fmt: skip
    assert "--listen 203.0.113.1:80: cannot listen there" in run.stderr, run.stderr


ENGINE_3 = Path(__file__).resolve().parent / "data" / "stores" / "engine-3.sqlite"


def _migrations(db: Path) -> int:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT COUNT(*) FROM _sqlite_migrations").fetchone()[0]
    finally:
        conn.close()


def test_a_refused_writing_command_leaves_an_older_store_as_it_was(gm, tmp_path: Path) -> None:
    """Writers upgraded an older store as they opened it, before refusing the command (a
    missing profile, an adjustment of 0): for good, since an older gmtool cannot open it
    afterwards. Only `db init` upgrades now."""
    old = tmp_path / ENGINE_3.name
    for source in ENGINE_3.parent.glob(ENGINE_3.name + "*"):
        (shutil.copytree if source.is_dir() else shutil.copyfile)(source, tmp_path / source.name)
    before = _migrations(old)
    for command in (
        ("deploy", tmp_path / "missing.toml", "--as", OPERATOR),
        ("players", "adjust", "bot-001", "0", "--reason", "x", "--as", OPERATOR),
        ("tables", "close", "no-such-table", "--reason", "x", "--as", OPERATOR),
    ):
        run = gm(*command, "--db", old, expect=2)
        assert "gmtool db init" in run.stderr, (command, run.stderr)
        assert _migrations(old) == before, command
    gm("db", "init", "--db", old, "--as", OPERATOR)
    assert _migrations(old) > before


def test_a_name_typed_decomposed_is_the_player_who_looks_the_same(gm, deployed_db: Path) -> None:
    """ "jose" + U+0301 and "jos\u00e9" look the same: typed either way they are one player,
    so a grant never lands on a look-alike account made beside the real one."""
    composed, decomposed = "jos\u00e9", "jose\u0301"
    gm("players", "token", composed, "--db", deployed_db, "--as", OPERATOR)
    gm("players", "token", decomposed, "--db", deployed_db, "--as", OPERATOR)
    args = ("--reason", "grant", "--db", deployed_db, "--as", OPERATOR)
    gm("players", "adjust", decomposed, "500", *args)
    conn = sqlite3.connect(deployed_db)
    try:
        rows = conn.execute("SELECT name, coins FROM players WHERE name LIKE 'jos%'").fetchall()
    finally:
        conn.close()
    assert rows == [(composed, 500)]
