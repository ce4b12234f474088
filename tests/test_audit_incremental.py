"""An audit from a signed checkpoint (issue 14): `gmtool audit --from-checkpoint FILE`
proves the store's tree at the checkpoint's size is the signed one, then checks only what
the log recorded after it: every later record, the rows written after it, the hands whose
events came after it (a hand that began before it included), the coins, the GM log. A
tamper after the checkpoint is found; a rollback or a rewrite against it stops the audit;
an edit before it is left to a full audit, as docs/evidence.md says.

The stores are real: a host plays on virtual time, signing checkpoints as it goes, stops,
an operator adjusts coins, and a host plays again. Tampers work straight in SQLite.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from conftest import OPERATOR
from hosting import VirtualHost
from test_tamper import _rechain

from gmtool.evidence import witness
from gmtool.evidence.merkle import frontier_positions
from gmtool.evidence.note import Checkpoint, sign_checkpoint
from gmtool.house.options import HostOptions

HOST = HostOptions(tables=6, seed="incremental", checkpoint_every=15.0)


@pytest.fixture(scope="module")
def history(tmp_path_factory, gm) -> Path:
    """A folder with `live.db` (its keys and witness beside it): a host's minute of play,
    stopped, then a coin adjustment and another minute; `backup/live.db` is the store as
    it was after the first minute."""
    folder = tmp_path_factory.mktemp("incremental")
    db = folder / "live.db"
    gm.deploy_all(db)
    with VirtualHost(db, HOST) as host:
        host.advance(60)
        host.stop()
    _copy_store(db, folder / "backup")
    gm("players", "adjust", "bot-002", "500", "--reason", "goodwill", "--db", db, "--as", OPERATOR)
    with VirtualHost(db, HOST) as host:
        host.advance(60)
        host.stop()
    return folder


@pytest.fixture
def store(history: Path, tmp_path: Path) -> Path:
    """A private copy of the history's store, with its keys and witness."""
    shutil.copytree(history, tmp_path / "history")
    return tmp_path / "history" / "live.db"


def _copy_store(db: Path, folder: Path) -> None:
    folder.mkdir()
    for path in db.parent.iterdir():
        if path.is_file() and path.name.startswith(db.name):
            shutil.copyfile(path, folder / path.name)


def _sql(db: Path, *changes) -> None:
    """Tamper as a careful attacker does: the append-only triggers dropped, the changes
    (a statement with its parameters, or a function of the connection) made, the triggers
    put back as they were."""
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    with conn:
        triggers = conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'trigger'"
        ).fetchall()
        for trigger in triggers:
            conn.execute(f"DROP TRIGGER {trigger['name']}")
        for change in changes:
            change(conn) if callable(change) else conn.execute(*change)
        for trigger in triggers:
            conn.execute(trigger["sql"])
    conn.close()


def _one(db: Path, sql: str, params: tuple = ()):
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql, params).fetchone()
    finally:
        conn.close()


def _hands_after(db: Path, size: int) -> set[int]:
    """The hands with an event in a batch logged from record `size` on."""
    conn = sqlite3.connect(db)
    try:
        return {
            r[0]
            for r in conn.execute(
                "SELECT DISTINCT e.hand_id FROM log l JOIN events e ON e.table_id = l.tkey AND "
                "e.seq BETWEEN l.nkey AND json_extract(l.body, '$.last') WHERE l.kind = 'events' "
                "AND l.idx >= ? AND e.hand_id IS NOT NULL",
                (size,),
            )
        }
    finally:
        conn.close()


def _spanning(db: Path, size: int) -> set[int]:
    """Hands that began before record `size` and ended after it."""
    conn = sqlite3.connect(db)
    try:
        return {
            r[0]
            for r in conn.execute(
                "SELECT s.nkey FROM log s JOIN log e ON e.kind = 'hand_end' AND e.nkey = s.nkey "
                "WHERE s.kind = 'hand' AND s.idx < ? AND e.idx >= ?",
                (size, size),
            )
        }
    finally:
        conn.close()


def _base(db: Path) -> tuple[Path, int]:
    """A checkpoint signed while a hand was running, with coins won in hands before and
    after it (file, size)."""
    for path in witness.files(witness.witness_dir(db)):
        size = int(path.name.split(".")[0])
        if _spanning(db, size) and _won_before(db, size) and _won_after(db, size):
            return path, size
    raise AssertionError("no checkpoint was signed while a hand ran")


def _won_before(db: Path, size: int):
    """(ledger id, player) of winnings of a hand that ended before record `size`."""
    return _one(
        db,
        "SELECT l.id, l.player FROM ledger l JOIN log e ON e.kind = 'hand_end' "
        "AND e.nkey = l.hand_id WHERE e.idx < ? AND l.delta > 0 LIMIT 1",
        (size,),
    )


def _won_after(db: Path, size: int) -> int | None:
    """A settled hand with winnings that began after record `size`."""
    row = _one(
        db,
        "SELECT h.id FROM hands h JOIN log s ON s.kind = 'hand' AND s.nkey = h.id "
        "WHERE s.idx >= ? AND h.outcome = 'settled' AND EXISTS (SELECT 1 FROM ledger l "
        "WHERE l.hand_id = h.id AND l.delta > 0) ORDER BY h.id LIMIT 1",
        (size,),
    )
    return row[0] if row else None


def _audit(gm, db: Path, *args, expect: int | None = None) -> dict:
    run = gm("audit", "--db", db, "--json", *map(str, args), expect=expect)
    report = json.loads(run.stdout)
    report["exit"] = run.returncode
    return report


def _kinds(report: dict) -> list[str]:
    return [p["kind"] for p in report["problems"]]


def test_a_clean_store_is_audited_from_a_checkpoint_hand_by_hand_after_it(store: Path, gm) -> None:
    base, size = _base(store)
    full = _audit(gm, store, expect=0)
    assert full["problems"] == []
    report = _audit(gm, store, "--from-checkpoint", base.name, expect=0)
    records = _one(store, "SELECT COUNT(*) FROM log")[0]
    assert report["problems"] == []
    assert report["incremental"] == {"from": base.name, "size": size, "records": records}
    after = _hands_after(store, size)
    assert report["hands_checked"] == len(after) < full["hands_checked"]
    assert _spanning(store, size) <= after  # begun before the checkpoint, replayed whole
    assert report["checkpoint"]["size"] >= size
    text = gm("audit", "--db", store, "--from-checkpoint", base).stdout  # a path works too
    assert f"{len(after)} hand(s) checked after the checkpoint at {size} ({base.name}): ok" in text


def _hand_after(conn: sqlite3.Connection, size: int) -> sqlite3.Row:
    """A settled hand with winnings that began after record `size`."""
    return conn.execute(
        "SELECT h.* FROM hands h JOIN log s ON s.kind = 'hand' AND s.nkey = h.id WHERE s.idx "
        ">= ? AND h.outcome = 'settled' AND EXISTS (SELECT 1 FROM ledger l WHERE l.hand_id = "
        "h.id AND l.delta > 0) ORDER BY h.id LIMIT 1",
        (size,),
    ).fetchone()


def _mint(size: int):
    def change(conn: sqlite3.Connection) -> None:
        conn.execute(
            "INSERT INTO ledger (player, delta, reason, created_at) VALUES ("
            "'bot-001', 5000000, 'opening_balance', '2100-01-01T00:00:00+00:00')"
        )
        conn.execute("UPDATE players SET coins = coins + 5000000 WHERE name = 'bot-001'")

    return change


def _move_winnings(size: int):
    def change(conn: sqlite3.Connection) -> None:
        hand = _hand_after(conn, size)
        row = conn.execute(
            "SELECT id, player, delta FROM ledger WHERE hand_id = ? AND delta > 0 LIMIT 1",
            (hand["id"],),
        ).fetchone()
        conn.execute("UPDATE ledger SET player = 'bot-001' WHERE id = ?", (row["id"],))
        conn.execute(
            "UPDATE players SET coins = coins - ? WHERE name = ?", (row["delta"], row["player"])
        )
        conn.execute("UPDATE players SET coins = coins + ? WHERE name = 'bot-001'", (row["delta"],))

    return change


def _edit_winners(size: int):
    def change(conn: sqlite3.Connection) -> None:
        conn.execute(
            "UPDATE hands SET winners = '[\"bot-001\"]' WHERE id = ?",
            (_hand_after(conn, size)["id"],),
        )

    return change


def _rewrite_events_after(size: int):
    """A settled hand's bet doubled in its events, the chain recomputed to the head."""

    def change(conn: sqlite3.Connection) -> None:
        hand = _hand_after(conn, size)
        event = conn.execute(
            "SELECT id, seq, payload FROM events WHERE hand_id = ? ORDER BY seq DESC LIMIT 1",
            (hand["id"],),
        ).fetchone()
        conn.execute(
            "UPDATE events SET payload = ? WHERE id = ?",
            (event["payload"].replace("}", ',"x":1}', 1), event["id"]),
        )
        _rechain(conn, hand["table_id"], event["seq"])

    return change


def _rewrite_spanning_hand(size: int):
    """The first event of a hand that began before the checkpoint and ended after it,
    edited, the chain recomputed from there on."""

    def change(conn: sqlite3.Connection) -> None:
        hand = conn.execute(
            "SELECT h.id, h.table_id FROM hands h JOIN log s ON s.kind = "
            "'hand' AND s.nkey = h.id JOIN log e ON e.kind = 'hand_end' AND "
            "e.nkey = h.id WHERE s.idx < ? AND e.idx >= ? LIMIT 1",
            (size, size),
        ).fetchone()
        event = conn.execute(
            "SELECT id, seq, payload FROM events WHERE hand_id = ? ORDER BY seq LIMIT 1",
            (hand["id"],),
        ).fetchone()
        conn.execute(
            "UPDATE events SET payload = ? WHERE id = ?",
            (event["payload"].replace("}", ',"x":1}', 1), event["id"]),
        )
        _rechain(conn, hand["table_id"], event["seq"])

    return change


@pytest.mark.parametrize(
    "tamper, expected",
    [
        (_mint, {"not_logged", "unjustified_coins"}),
        (_move_winnings, {"differs_from_log", "ledger"}),
        (_edit_winners, {"differs_from_log"}),
        (_rewrite_events_after, {"events_rewritten"}),
        (_rewrite_spanning_hand, {"events_rewritten"}),
    ],
    ids=lambda v: v.__name__.strip("_") if callable(v) else "",
)
def test_a_tamper_after_the_checkpoint_is_found(store: Path, gm, tamper, expected) -> None:
    base, size = _base(store)
    clean = _audit(gm, store, "--from-checkpoint", base.name, expect=0)
    _sql(store, tamper(size))
    report = _audit(gm, store, "--from-checkpoint", base.name, expect=1)
    assert expected <= set(_kinds(report)), report["problems"]
    assert report["hands_checked"] == clean["hands_checked"]
    jobs = _audit(gm, store, "--from-checkpoint", base.name, "--jobs", "2", expect=1)
    assert {**jobs, "exit": 1} == report  # the same report from two processes


def test_an_edit_before_the_checkpoint_is_left_to_a_full_audit(store: Path, gm) -> None:
    base, size = _base(store)
    before = _won_before(store, size)
    _sql(
        store,
        ("UPDATE ledger SET delta = delta + 1 WHERE id = ?", (before[0],)),
        ("UPDATE players SET coins = coins + 1 WHERE name = ?", (before[1],)),
    )
    assert _audit(gm, store, "--from-checkpoint", base.name, expect=0)["problems"] == []
    assert "differs_from_log" in _kinds(_audit(gm, store, expect=1))


def test_an_older_copy_restored_is_a_rollback_against_the_checkpoint(store: Path, gm) -> None:
    newest = witness.files(witness.witness_dir(store))[-1]
    backup = store.parent / "backup"
    for suffix in ("", "-wal", "-shm"):  # the first minute's store back, the witness kept
        store.with_name(store.name + suffix).unlink(missing_ok=True)
        if (backup / (store.name + suffix)).exists():
            shutil.copyfile(backup / (store.name + suffix), store.with_name(store.name + suffix))
    report = _audit(gm, store, "--from-checkpoint", newest.name, expect=1)
    assert _kinds(report) == ["checkpoint_rollback"] and report["hands_checked"] == 0
    assert "older copy" in report["problems"][0]["detail"]


def test_a_checkpoint_whose_root_was_changed_is_refused(store: Path, gm) -> None:
    base, _ = _base(store)
    lines = base.read_text().split("\n")
    lines[2] = "A" + lines[2][1:] if not lines[2].startswith("A") else "B" + lines[2][1:]
    base.write_text("\n".join(lines))
    run = gm("audit", "--db", store, "--from-checkpoint", base.name, expect=2)
    assert base.name in run.stderr and "Traceback" not in run.stderr


def test_a_checkpoint_signed_over_another_root_is_a_rewrite(
    store: Path, gm, tmp_path: Path
) -> None:
    base, size = _base(store)
    signer = witness.load_signer(
        store, witness.read(base, witness.load_verifier(witness.public_key_path(store))).origin
    )
    forged = tmp_path / "forged.checkpoint"  # the host's key, a root it never had
    forged.write_text(
        sign_checkpoint(
            Checkpoint(signer.name, size, hashlib.sha256(b"another history").digest()), signer
        )
    )
    report = _audit(gm, store, "--from-checkpoint", forged, "--checkpoint", base, expect=1)
    assert _kinds(report) == ["checkpoint_rewrite"] and report["hands_checked"] == 0


def test_an_edited_node_of_the_stored_tree_is_a_rewrite(store: Path, gm) -> None:
    base, size = _base(store)
    level, index = next((level, index) for level, index in frontier_positions(size) if level)
    _sql(
        store,
        (
            "UPDATE log_nodes SET hash = ? WHERE level = ? AND idx = ?",
            (hashlib.sha256(b"forged").digest(), level, index),
        ),
    )
    report = _audit(gm, store, "--from-checkpoint", base.name, expect=1)
    assert _kinds(report) == ["checkpoint_rewrite"] and report["hands_checked"] == 0
    assert "run a full audit" in report["problems"][0]["detail"]


@pytest.mark.parametrize(
    "args, says",
    [
        (["--from-checkpoint", "nothing-here.checkpoint"], "no checkpoint file"),
        (["--from-checkpoint", ""], "blank"),
        (["--from-checkpoint", "{base}", "--table", "qq-showhand-junior-1"], "--table"),
        (["--from-checkpoint", "{base}", "--since", "1d"], "--since"),
    ],
    ids=["missing", "blank", "with-table", "with-since"],
)
def test_a_bad_from_checkpoint_is_a_usage_error(store: Path, gm, args, says) -> None:
    base, _ = _base(store)
    run = gm("audit", "--db", store, *[a.format(base=base.name) for a in args], expect=2)
    assert says in run.stderr and "Traceback" not in run.stderr
