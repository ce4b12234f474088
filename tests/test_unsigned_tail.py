"""No unsigned tail (issue 24, point 4): what is written after the newest checkpoint can be
deleted without a trace, so

- every GM write made while no host runs (adjustments, a GM registration, a refusal)
  ends with a checkpoint covering it in the store's witness: signed with the host's
  checkpoint key where the console may read it, else by the acting GM's registered key
  (ops/cover.py); deleting the writes from a copy, the log's hashes recomputed, is then a
  `checkpoint_rollback`;
- a running host signs at most `--checkpoint-every` (1 s) after any append, so a host
  killed with SIGKILL leaves at most about a second of play unsigned, also when its main
  loop runs late (it signs after its commits, not only there).

Each of these deletions audited clean before: the newest checkpoint was the host's stop.
"""

from __future__ import annotations

import json
import shutil
import signal
import sqlite3
from datetime import datetime
from pathlib import Path

import pytest
from conftest import OPERATOR, SUPPORT
from helpers import gm_identity, public_key, query, rewrite_log, until

from gmtool.evidence import witness
from gmtool.evidence.gm_keys import new_key
from gmtool.evidence.note import Checkpoint, sign_checkpoint
from gmtool.store import log_append, log_reads
from gmtool.store.db import connect


@pytest.fixture
def stopped(tmp_path: Path, gm, virtual_host) -> Path:
    """A store a host played on and stopped cleanly (its last checkpoint: the stop), in
    a folder of its own beside its witness and checkpoint keys."""
    db = tmp_path / "store" / "live.db"
    db.parent.mkdir()
    gm.deploy_all(db)
    gm.add_roles(db)
    host = virtual_host(db, tables=2, seed="tail")
    host.advance(60)
    host.stop()
    host.close()
    return db


def _size(db: Path) -> int:
    return query(db, "SELECT size FROM log_state")[0]["size"]


def _newest(db: Path) -> tuple[Path, str]:
    """The newest checkpoint file of the store's witness and its text."""
    path = witness.files(witness.witness_dir(db))[-1]
    return path, path.read_text(encoding="utf-8")


def _gm_writes(gm, db: Path) -> None:
    """Two adjustments, a GM registered and a refusal, each checked to end covered."""
    writes = [
        ("players", "adjust", "bot-001", "5", "--reason", "goodwill", "--as", OPERATOR),
        ("players", "adjust", "bot-002", "-3", "--reason", "fee", "--as", OPERATOR),
        (
            "gm",
            "users",
            "add",
            "carl",
            "--role",
            "support",
            "--key",
            public_key("carl"),
            "--as",
            OPERATOR,
        ),
        ("players", "adjust", "bot-001", "9", "--reason", "sue tries", "--as", SUPPORT),
    ]
    for args in writes:
        before = _size(db)
        gm(*args, "--db", db, expect=1 if SUPPORT in args else 0)
        assert _size(db) > before, args  # it wrote (the refusal is logged)
        path, _ = _newest(db)
        assert int(path.name.split(".")[0]) == _size(db), (args, path)  # and is covered


def _delete_gm_writes(db: Path, size: int) -> None:
    """The attacker: everything the GM writes added, gone from the store (rows, balances,
    the GM log's head), the log cut back to `size` and its hashes recomputed."""

    def change(conn: sqlite3.Connection) -> None:
        first_action = (
            1
            + conn.execute(
                "SELECT MAX(json_extract(body, '$.id')) FROM log WHERE kind = 'gm_action' "
                "AND idx < ?",
                (size,),
            ).fetchone()[0]
        )
        for row in conn.execute(
            "SELECT player, delta FROM ledger WHERE gm_action_id >= ?", (first_action,)
        ).fetchall():
            conn.execute("UPDATE players SET coins = coins - ? WHERE name = ?", (row[1], row[0]))
        conn.execute("DELETE FROM ledger WHERE gm_action_id >= ?", (first_action,))
        conn.execute("DELETE FROM gm_actions WHERE id >= ?", (first_action,))
        conn.execute("DELETE FROM gm_users WHERE name = 'carl'")
        head = conn.execute("SELECT id, hash FROM gm_actions ORDER BY id DESC LIMIT 1").fetchone()
        conn.execute(
            "UPDATE chain_heads SET seq = ?, hash = ? WHERE name = 'gm_actions'",
            (head[0], head[1]),
        )
        conn.execute("DELETE FROM log WHERE idx >= ?", (size,))

    rewrite_log(db, change)


def _audit(gm, db: Path, *args) -> tuple[int, list[str]]:
    run = gm("audit", "--db", db, "--json", *args, expect=None)
    return run.returncode, [problem["kind"] for problem in json.loads(run.stdout)["problems"]]


@pytest.mark.parametrize("signer", ["host key", "GM key"])
def test_gm_writes_with_no_host_are_covered_and_deleting_them_is_found(
    stopped: Path, gm, tmp_path: Path, signer: str
) -> None:
    db = stopped
    key = witness.key_path(db)
    if signer == "GM key":  # the console may not read the host's key: each GM signs
        key.rename(tmp_path / "elsewhere.key")
    size = _size(db)
    _gm_writes(gm, db)
    _, note = _newest(db)
    by = "\u2014 gmtool/" if signer == "host key" else "\u2014 sue "  # the refusal's GM
    assert by in note, note
    assert _audit(gm, db) == (0, [])
    attacked = tmp_path / "attacked"
    shutil.copytree(db.parent, attacked)  # the store with its witness and keys
    _delete_gm_writes(attacked / db.name, size)
    code, kinds = _audit(gm, attacked / db.name)
    assert code == 1 and "checkpoint_rollback" in kinds, kinds


def test_a_checkpoint_signed_by_a_gm_key_not_registered_at_its_size_is_not_evidence(
    stopped: Path, gm
) -> None:
    """carl's key signs for the log as it was before carl was registered, and mallory's,
    which was never registered: neither is a checkpoint the audit accepts."""
    gm(
        "gm", "users", "add", "carl", "--role", "support", "--key", public_key("carl"),
        "--db", stopped, "--as", OPERATOR,
    )  # fmt: skip
    with connect(stopped) as store:
        origin = log_append.origin_of(store)
        early = query(stopped, "SELECT idx FROM log WHERE tkey = 'carl'")[0]["idx"]
        root = log_reads.tree(store).hash(0, early)
    folder = witness.witness_dir(stopped)
    for name in ("carl", "mallory"):
        note = sign_checkpoint(Checkpoint(origin, early, root), gm_identity(name).signer)
        (folder / f"{early:012d}.checkpoint").write_text(note, encoding="utf-8")
        code, kinds = _audit(gm, stopped)
        assert code == 1 and kinds == ["checkpoint_signature"], (name, kinds)
    boss = sign_checkpoint(Checkpoint(origin, early, root), gm_identity(OPERATOR).signer)
    (folder / f"{early:012d}.checkpoint").write_text(boss, encoding="utf-8")
    assert _audit(gm, stopped) == (0, [])  # the operator's key was registered then


def test_a_gm_write_that_cannot_be_covered_says_so_and_stays(
    stopped: Path, gm, tmp_path: Path
) -> None:
    """No host key at hand and a GM key that is not the one the store registers: the
    refusal is made and logged, and the command says plainly that no checkpoint covers it."""
    witness.key_path(stopped).rename(tmp_path / "elsewhere.key")
    other = tmp_path / "other-keys"
    other.mkdir()
    new_key(OPERATOR, other)  # a key of boss's that the store does not register
    size = _size(stopped)
    run = gm(
        "players", "adjust", "bot-001", "5", "--reason", "x", "--db", stopped,
        "--as", OPERATOR, expect=1, env=gm.env(GMTOOL_KEYS=str(other)),
    )  # fmt: skip
    assert _size(stopped) > size  # the refusal is logged, and stays
    assert "no signed checkpoint covers it yet" in run.stderr, run.stderr
    assert "refused" in run.stderr


def test_a_killed_host_leaves_at_most_a_second_of_play_unsigned(
    tmp_path: Path, gm, start_host
) -> None:
    """A real `house run` killed with SIGKILL: every hand it settled a second and more
    (its own clock) before its last is covered by a checkpoint in the witness, and
    deleting those hands is found."""
    db = tmp_path / "store" / "live.db"
    db.parent.mkdir()
    gm.deploy_all(db)
    host = start_host(db, "--tables", "4", "--speed", "200", "--seed", "kill")

    def ended() -> list[tuple[int, float]]:
        """(hand, when it ended by the host's clock) of every settled hand, in order."""
        rows = query(
            db,
            "SELECT id, ended_at FROM hands WHERE outcome = 'settled' ORDER BY ended_at",
        )
        return [(row[0], datetime.fromisoformat(row[1]).timestamp()) for row in rows]

    def two_host_seconds_of_hands() -> list[tuple[int, float]]:
        hands = ended()
        return hands if hands and hands[-1][1] - hands[0][1] >= 3.5 else []

    host.wait_until(two_host_seconds_of_hands)
    host.proc.send_signal(signal.SIGKILL)
    host.proc.wait()
    hands = ended()
    last = hands[-1][1]
    old = [hand for hand, at in hands if last - at >= 2.0]  # 1 s, its 0.1 s poll, a busy loop
    assert old
    ends = {
        hand: query(db, "SELECT idx FROM log WHERE kind = 'hand_end' AND nkey = ?", (hand,))[0][0]
        for hand in old
    }
    covered = max(int(p.name.split(".")[0]) for p in witness.files(witness.witness_dir(db)))
    assert all(idx < covered for idx in ends.values()), (ends, covered)
    # The attacker deletes the newest of those hands and everything after it.
    cut = ends[old[-1]]
    attacked = tmp_path / "attacked"
    shutil.copytree(db.parent, attacked)

    def change(conn: sqlite3.Connection) -> None:
        conn.execute("DELETE FROM log WHERE idx >= ?", (cut,))

    rewrite_log(attacked / db.name, change)
    code, kinds = _audit(gm, attacked / db.name)
    assert code == 1 and "checkpoint_rollback" in kinds, kinds


STARVED_HOST = """
import asyncio, sys
from pathlib import Path
from gmtool.house.host import HostOptions, prepare_host
from gmtool.house.lock import HostLock
from gmtool.store.db import connect

db = Path(sys.argv[1])
HostLock(db).acquire()  # as `house run` holds it
options = HostOptions(tables=4, speed=200, seed="starved", tick=3600.0)
host = prepare_host(connect(db), options, notify=print)
asyncio.run(host.run(signals=False))
"""


def test_a_killed_host_whose_main_loop_is_held_up_leaves_at_most_a_second_unsigned(
    tmp_path: Path, gm
) -> None:
    """The same kill of a real host (its own process, its real event loop, `kill -9`),
    whose main loop, where heartbeats and the periodic checkpoint live, is held up: it
    waits an hour between its rounds, as a starved event loop leaves it waiting while
    the tables commit. Every hand it settled more than `checkpoint_every` (1 s, by the
    host's clock) before its last is still covered by a checkpoint: the host signs after
    its commits, not only in its main loop."""
    import subprocess
    import sys

    db = tmp_path / "store" / "live.db"
    db.parent.mkdir()
    gm.deploy_all(db)
    host = subprocess.Popen(
        [sys.executable, "-c", STARVED_HOST, str(db)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _until_hands_span(db, host, 3.5)
    finally:
        host.kill()
        _, err = host.communicate()
    assert host.returncode == -signal.SIGKILL, err
    hands = _settled(db)
    last = hands[-1][1]
    old = [hand for hand, at in hands if last - at > 1.0]
    assert old
    ends = [
        query(db, "SELECT idx FROM log WHERE kind = 'hand_end' AND nkey = ?", (hand,))[0][0]
        for hand in old
    ]
    covered = max(int(p.name.split(".")[0]) for p in witness.files(witness.witness_dir(db)))
    assert max(ends) < covered, (ends, covered)


def _settled(db: Path) -> list[tuple[int, float]]:
    """(hand, when it ended by the host's clock) of every settled hand, in order."""
    rows = query(db, "SELECT id, ended_at FROM hands WHERE outcome = 'settled' ORDER BY ended_at")
    return [(row[0], datetime.fromisoformat(row[1]).timestamp()) for row in rows]


def _until_hands_span(db: Path, host, seconds: float) -> list[tuple[int, float]]:
    """The settled hands once they span `seconds` of the host's clock (re-read as the
    store changes; the host must keep running)."""

    def spanned() -> list[tuple[int, float]] | None:
        assert host.poll() is None, "the host stopped"
        hands = _settled(db) if db.exists() else []
        return hands if hands and hands[-1][1] - hands[0][1] >= seconds else None

    return until(spanned, f"settled hands spanning {seconds} s of the host's clock", 300)


def test_a_gm_write_on_a_restored_older_copy_is_refused_before_it_is_written(
    gm, stopped: Path, tmp_path: Path
) -> None:
    """An older copy put back in the store's place, its witness kept: the witness's newer
    checkpoint is not this history's, so it covers nothing here; a write would fork the
    log. Refused, nothing written, as `house run` refuses such a store (probe a51)."""
    older = tmp_path / "older.db"
    shutil.copyfile(stopped, older)
    gm("players", "adjust", "bot-001", "5", "--reason", "newer", "--db", stopped, "--as", OPERATOR)
    shutil.copyfile(older, stopped)  # the older copy restored; the witness holds the newer
    before = _size(stopped)
    run = _refused_adjust(gm, stopped)
    assert "older copy" in run.stderr and "Nothing was written" in run.stderr
    assert _size(stopped) == before
    assert "checkpoint_rollback" in gm("audit", "--db", stopped, expect=1).stdout


def test_a_gm_write_on_a_rewritten_history_is_refused(gm, stopped: Path) -> None:
    """The store's first records changed (the log's hashes recomputed): the witness's
    checkpoint is of another history; a write is refused, nothing written."""
    rewrite_log(
        stopped,
        lambda conn: conn.execute(
            "UPDATE log SET body = body || ' ' WHERE idx = (SELECT MIN(idx) FROM log)"
        ),
    )
    before = _size(stopped)
    run = _refused_adjust(gm, stopped)
    assert "history was rewritten" in run.stderr
    assert _size(stopped) == before


def _refused_adjust(gm, db: Path):
    """A console adjustment that must be refused before it writes (exit 2)."""
    run = gm(
        "players",
        "adjust",
        "bot-001",
        "1",
        "--reason",
        "x",
        "--db",
        db,
        "--as",
        OPERATOR,
        expect=None,
    )
    assert run.returncode == 2, run.stdout + run.stderr
    return run
