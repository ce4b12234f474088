"""Issue 24 point 6 (and issue 23's seed leftover): `hands show` and `hands replay` check
a hand's whole evidence as the audit does, and `hands export` refuses a hand whose
evidence does not verify.

Before, with one event's payload changed `hands show` printed the hand as if nothing had
happened, and a ledger-only edit moving a settlement to another player or an edited
`prev_hash` left `hands show` and `hands replay` silent ("replay matches"); with the host
key file replaced, `hands show` said the seed verifies while the audit flagged it. Each
edit here is made to a real copy of a store the host made, as an attacker with the file
makes it (the append-only triggers dropped, hashes recomputed where the edit needs them).
"""

from __future__ import annotations

import json
import secrets
import shutil
import sqlite3
from pathlib import Path

import pytest
from helpers import rewrite_log

from gmtool.store.hands import event_hash


@pytest.fixture
def signed_copy(host_db: Path, tmp_path: Path) -> Path:
    """A copy of the session's host-made store with what its audit reads beside it: the
    host key, the checkpoint keys and the witness folder of the checkpoints it signed."""
    target = tmp_path / "signed" / host_db.name
    target.parent.mkdir()
    for suffix in ("", "-wal", "-shm", ".key", ".checkpoint.pub", ".checkpoint.key", ".witness"):
        source = host_db.with_name(host_db.name + suffix)
        if source.is_dir():
            shutil.copytree(source, target.with_name(target.name + suffix))
        elif source.exists():
            shutil.copyfile(source, target.with_name(target.name + suffix))
    return target


def _settled_hand(db: Path) -> sqlite3.Row:
    """A settled hand that moved coins, whose records the host's last checkpoint signed."""
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    try:
        return conn.execute(
            "SELECT h.id, h.table_id FROM hands h WHERE h.outcome = 'settled' AND EXISTS "
            "(SELECT 1 FROM ledger l WHERE l.hand_id = h.id AND l.delta > 0) AND (SELECT "
            "COUNT(*) FROM events e WHERE e.hand_id = h.id) >= 6 ORDER BY h.id LIMIT 1"
        ).fetchone()
    finally:
        conn.close()


def _edit(db: Path, change) -> None:
    """`change(conn)` with the append-only triggers dropped, then put back as they were."""
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    with conn:
        triggers = conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'trigger'"
        ).fetchall()
        for trigger in triggers:
            conn.execute(f"DROP TRIGGER {trigger['name']}")
        change(conn)
        for trigger in triggers:
            conn.execute(trigger["sql"])
    conn.close()


def _middle_event(conn: sqlite3.Connection, hand_id: int) -> sqlite3.Row:
    rows = conn.execute(
        "SELECT id, seq, payload FROM events WHERE hand_id = ? ORDER BY seq", (hand_id,)
    ).fetchall()
    return rows[len(rows) // 2]


def _payload_changed(hand_id: int):
    def change(conn: sqlite3.Connection) -> None:
        event = _middle_event(conn, hand_id)
        conn.execute(
            "UPDATE events SET payload = ? WHERE id = ?",
            (event["payload"].replace("}", ',"x":1}', 1), event["id"]),
        )

    return change


def _payload_changed_and_rechained(hand_id: int, table: str):
    """The careful version: every hash from the edited event to the table's head
    recomputed, and the recorded head with them."""

    def change(conn: sqlite3.Connection) -> None:
        event = _middle_event(conn, hand_id)
        _payload_changed(hand_id)(conn)
        rows = conn.execute(
            "SELECT id, hand_id, seq, type, payload, created_at, prev_hash FROM events "
            "WHERE table_id = ? AND seq >= ? ORDER BY seq",
            (table, event["seq"]),
        ).fetchall()
        head = rows[0]["prev_hash"]
        for row in rows:
            digest = event_hash(
                head, table, row["hand_id"], row["seq"], row["type"], row["payload"],
                row["created_at"],
            )  # fmt: skip
            conn.execute(
                "UPDATE events SET prev_hash = ?, hash = ? WHERE id = ?", (head, digest, row["id"])
            )
            head = digest
        conn.execute("UPDATE chain_heads SET hash = ? WHERE name = ?", (head, f"events:{table}"))

    return change


def _settlement_moved(hand_id: int):
    """Ledger only: the winner's row names another player, and the balances follow."""

    def change(conn: sqlite3.Connection) -> None:
        row = conn.execute(
            "SELECT id, player, delta FROM ledger WHERE hand_id = ? AND delta > 0 LIMIT 1",
            (hand_id,),
        ).fetchone()
        other = "bot-001" if row["player"] != "bot-001" else "bot-002"
        conn.execute("UPDATE ledger SET player = ? WHERE id = ?", (other, row["id"]))
        conn.execute(
            "UPDATE players SET coins = coins - ? WHERE name = ?", (row["delta"], row["player"])
        )
        conn.execute("UPDATE players SET coins = coins + ? WHERE name = ?", (row["delta"], other))

    return change


def _prev_hash_edited(hand_id: int):
    def change(conn: sqlite3.Connection) -> None:
        event = _middle_event(conn, hand_id)
        conn.execute("UPDATE events SET prev_hash = ? WHERE id = ?", ("ab" * 32, event["id"]))

    return change


EDITS = {
    "payload_changed": (lambda hand: _payload_changed(hand["id"]), "event_hash"),
    "payload_changed_and_rechained": (
        lambda hand: _payload_changed_and_rechained(hand["id"], hand["table_id"]),
        "events_rewritten",
    ),
    "settlement_moved_to_another_player": (
        lambda hand: _settlement_moved(hand["id"]),
        "differs_from_log",
    ),
    "prev_hash_edited": (lambda hand: _prev_hash_edited(hand["id"]), "chain_link"),
}


def test_an_untouched_hand_verifies(signed_copy: Path, gm) -> None:
    hand = str(_settled_hand(signed_copy)["id"])
    shown = gm("hands", "show", hand, "--db", signed_copy)
    assert "evidence: verified (" in shown.stdout
    report = gm.json("hands", "show", hand, "--db", signed_copy, "--json")
    assert report["evidence"]["verified"] is True and report["evidence"]["problems"] == []
    assert report["evidence"]["checkpoint"]["size"] > 0  # its records are signed
    replayed = gm.json("hands", "replay", hand, "--db", signed_copy, "--json")
    assert replayed["ok"] and replayed["replay_ok"] and replayed["evidence"]["verified"]


@pytest.mark.parametrize("name", list(EDITS))
def test_hands_show_and_replay_say_what_does_not_verify(signed_copy: Path, gm, name: str) -> None:
    hand = _settled_hand(signed_copy)
    make, kind = EDITS[name]
    _edit(signed_copy, make(hand))
    audit = json.loads(gm("audit", "--db", signed_copy, "--json", expect=1).stdout)
    assert kind in {p["kind"] for p in audit["problems"]}  # what the audit finds
    shown = gm("hands", "show", str(hand["id"]), "--db", signed_copy, expect=1)
    assert "EVIDENCE DOES NOT VERIFY" in shown.stdout, shown.stdout
    assert f"  {kind}: " in shown.stdout, shown.stdout
    report = gm.json("hands", "show", str(hand["id"]), "--db", signed_copy, "--json", expect=1)
    assert report["evidence"]["verified"] is False
    assert kind in {p["kind"] for p in report["evidence"]["problems"]}
    replayed = gm("hands", "replay", str(hand["id"]), "--db", signed_copy, expect=1)
    assert "EVIDENCE DOES NOT VERIFY" in replayed.stdout or "MISMATCH" in replayed.stdout
    result = gm.json("hands", "replay", str(hand["id"]), "--db", signed_copy, "--json", expect=1)
    assert result["ok"] is False
    every = {p["kind"] for p in result["problems"] + result["evidence"]["problems"]}
    assert kind in every, result


@pytest.mark.parametrize("name", ["payload_changed", "settlement_moved_to_another_player"])
@pytest.mark.parametrize("output_format", ["md", "json"])
def test_hands_export_refuses_a_hand_whose_evidence_does_not_verify(
    signed_copy: Path, gm, name: str, output_format: str
) -> None:
    hand = _settled_hand(signed_copy)
    _edit(signed_copy, EDITS[name][0](hand))
    run = gm("hands", "export", str(hand["id"]), "--format", output_format, "--db", signed_copy,
             expect=1)  # fmt: skip
    assert run.stdout == ""
    assert f"hand {hand['id']}'s evidence does not verify, so no report was exported" in (
        run.stderr
    )
    assert EDITS[name][1] in run.stderr


def test_a_record_rewritten_with_its_row_is_found_by_the_checkpoint(signed_copy: Path, gm) -> None:
    """The ledger row and its log record changed alike, the whole log's hashes recomputed:
    nothing in the file contradicts it but the checkpoint the host signed into its witness."""
    hand = _settled_hand(signed_copy)

    def change(conn: sqlite3.Connection) -> None:
        row = conn.execute(
            "SELECT id, player FROM ledger WHERE hand_id = ? AND delta > 0 LIMIT 1", (hand["id"],)
        ).fetchone()
        other = "bot-001" if row["player"] != "bot-001" else "bot-002"
        conn.execute("UPDATE ledger SET player = ? WHERE id = ?", (other, row["id"]))
        body = conn.execute(
            "SELECT idx, body FROM log WHERE kind = 'ledger' AND nkey = ?", (row["id"],)
        ).fetchone()
        record = json.loads(body["body"])
        record["player"] = other
        text = json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        conn.execute("UPDATE log SET body = ? WHERE idx = ?", (text, body["idx"]))

    rewrite_log(signed_copy, change)
    report = gm.json("hands", "show", str(hand["id"]), "--db", signed_copy, "--json", expect=1)
    kinds = {p["kind"] for p in report["evidence"]["problems"]}
    assert "checkpoint_rewrite" in kinds, report["evidence"]


def test_hands_show_agrees_with_the_audit_on_a_replaced_host_key(signed_copy: Path, gm) -> None:
    """Issue 23's leftover: after `<db>.key` is replaced, the audit flags the seeds the key
    does not derive; `hands show` says the same of the hand, through the same check."""
    hand = _settled_hand(signed_copy)
    key_file = signed_copy.with_name(signed_copy.name + ".key")
    assert key_file.exists()
    key_file.write_text(secrets.token_bytes(32).hex() + "\n", encoding="ascii")
    audit = json.loads(gm("audit", "--db", signed_copy, "--json", expect=1).stdout)
    flagged = [p for p in audit["problems"] if p["kind"] == "seed" and p["hand"] == hand["id"]]
    assert flagged, audit["problems"][:3]
    report = gm.json("hands", "show", str(hand["id"]), "--db", signed_copy, "--json", expect=1)
    assert report["seed_verifies"] is False
    assert report["seed_problem"] == flagged[0]["detail"]
    assert flagged[0] in report["evidence"]["problems"]
    shown = gm("hands", "show", str(hand["id"]), "--db", signed_copy, expect=1)
    assert "verifies" not in shown.stdout.splitlines()[4]
    assert "DOES NOT VERIFY: hand" in shown.stdout


def test_hands_show_agrees_with_the_audit_on_a_replaced_checkpoint_key(
    signed_copy: Path, gm, tmp_path: Path
) -> None:
    """The checkpoint verifier key beside the store replaced by another store's: `hands
    show` names the same problems as the audit (each checkpoint that does not verify, the
    key of another log; no seed-key finding that follows from the wrong key alone), and
    does not say the witness holds no checkpoint (second outside probe of issue 23)."""
    hand = _settled_hand(signed_copy)
    other = tmp_path / "other.db"
    gm("db", "init", "--db", other)
    gm("checkpoint", "export", "--db", other)
    shutil.copyfile(
        other.with_name("other.db.checkpoint.pub"),
        signed_copy.with_name(signed_copy.name + ".checkpoint.pub"),
    )
    audit = json.loads(gm("audit", "--db", signed_copy, "--json", expect=1).stdout)
    assert {p["kind"] for p in audit["problems"]} == {"checkpoint_signature", "verifier_key"}
    report = gm.json("hands", "show", str(hand["id"]), "--db", signed_copy, "--json", expect=1)
    assert report["evidence"]["problems"] == audit["problems"]
    assert not any("holds none" in note for note in report["evidence"]["notes"])
    assert any("no checkpoint in the witness verifies" in n for n in report["evidence"]["notes"])


def test_hands_show_of_hands_a_live_host_is_playing_verifies(deployed_db: Path, start_host, gm):
    """Read while the host writes (one consistent view of the store): the running hand and
    the ones just settled verify, nothing half seen is reported as an edit."""
    host = start_host(deployed_db, "--tables", "3", "--speed", "50", "--checkpoint-every", "1")
    host.wait_for_line(r"hand \d+ started")
    for round_ in range(6):
        seen = len(host.lines)
        for hand in gm.json("hands", "list", "--db", deployed_db, "--limit", "3", "--json"):
            report = gm.json("hands", "show", str(hand["id"]), "--db", deployed_db, "--json")
            assert report["evidence"]["verified"], (round_, hand["id"], report["evidence"])
        host.wait_until(lambda seen=seen: len(host.lines) > seen)  # the host wrote on meanwhile
    assert host.stop() == 0
