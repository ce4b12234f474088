"""Forgeries appended after the newest checkpoint that an outside attack run of 2026-12-05
got past `gmtool audit` or support's screens (issue 24). The tail after a checkpoint is
unsigned, so an attacker can extend it with records gmtool's own functions make and the
log's hashes recomputed (`helpers.rewrite_log`); what they cannot make is a signature. So
each of these must fail on something only a key holder could have made, or on a rule of
how gmtool writes:

- a settled hand whose number is text (`'9x'`), dealt from an earlier hand's seed: the
  seed was checked only for whole numbers, so the forgery audited clean, showed as
  verified and was exported with a report that verified;
- one signed GM adjustment paid out again by more ledger rows naming it;
- a hand whose start and end were re-dated and logged a second time: `hands show`,
  `replay` and `export` held the hand to its newest record, not the signed one.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from helpers import query, rewrite_log

from gmtool.evidence import records
from gmtool.evidence.merkle import leaf_hash
from gmtool.store.hands import event_hashes

AT = "2026-12-05T23:00:00.000000+00:00"


def _log(conn: sqlite3.Connection, body: dict) -> None:
    """A record appended as gmtool appends one (rewrite_log recomputes the tree after)."""
    idx = conn.execute("SELECT COALESCE(MAX(idx) + 1, 0) FROM log").fetchone()[0]
    tkey, nkey = records.index_key(body)
    text = records.record_text(body)
    conn.execute(
        "INSERT INTO log (idx, kind, tkey, nkey, body, leaf) VALUES (?, ?, ?, ?, ?, ?)",
        (idx, body["kind"], tkey, nkey, text, leaf_hash(text.encode())),
    )


def _ledger_row(conn: sqlite3.Connection, **row) -> None:
    cursor = conn.execute(
        "INSERT INTO ledger (hand_id, gm_action_id, player, delta, reason, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        (
            row.get("hand_id"),
            row.get("gm_action_id"),
            row["player"],
            row["delta"],
            row["reason"],
            AT,
        ),
    )
    written = conn.execute("SELECT * FROM ledger WHERE id = ?", (cursor.lastrowid,)).fetchone()
    _log(conn, records.ledger_body(dict(written)))
    conn.execute(
        "UPDATE players SET coins = coins + ? WHERE name = ?", (row["delta"], row["player"])
    )


def _replayed_hand(conn: sqlite3.Connection, number: object, hand_id: int | None = None) -> int:
    """A settled hand appended to its table's chain: an earlier winning hand's events, seed
    (in capitals: the same deck, other text) and ledger rows under a new id and `number`."""
    source = conn.execute(
        "SELECT * FROM hands WHERE id = (SELECT hand_id FROM ledger WHERE hand_id IS NOT "
        "NULL AND delta > 0 AND hand_id IN (SELECT id FROM hands WHERE outcome = 'settled') "
        "ORDER BY delta DESC LIMIT 1)"
    ).fetchone()
    if hand_id is None:
        hand_id = conn.execute("SELECT MAX(id) + 1 FROM hands").fetchone()[0]
    table = source["table_id"]
    row = {
        **dict(source),
        "id": hand_id,
        "number": number,
        "seed": source["seed"].upper(),
        "started_at": AT,
        "ended_at": AT,
    }
    conn.execute(
        f"INSERT INTO hands ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
        list(row.values()),
    )
    _log(conn, records.hand_body(row))
    seq, head = conn.execute(
        "SELECT seq, hash FROM events WHERE table_id = ? ORDER BY seq DESC LIMIT 1", (table,)
    ).fetchone()
    first = seq + 1
    settlement = None
    for type_, payload in conn.execute(
        "SELECT type, payload FROM events WHERE hand_id = ? ORDER BY seq", (source["id"],)
    ).fetchall():
        seq += 1
        digest = event_hashes(table, [head], [hand_id], [seq], [type_], [payload], [AT])[0]
        conn.execute(
            "INSERT INTO events (table_id, hand_id, seq, type, payload, created_at, prev_hash, "
            "hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (table, hand_id, seq, type_, payload, AT, head, digest),
        )
        head = digest
        if type_ == "settlement":
            settlement = json.loads(payload)
    _log(conn, records.events_body(table, first, seq, head))
    conn.execute(
        "UPDATE chain_heads SET seq = ?, hash = ? WHERE name = ?", (seq, head, f"events:{table}")
    )
    _log(conn, records.hand_end_body(row))
    assert settlement is not None
    for entry in settlement["entries"]:
        if entry["delta"]:
            _ledger_row(
                conn,
                hand_id=hand_id,
                player=entry["player"],
                delta=entry["delta"],
                reason=entry["reason"],
            )
    return hand_id


def _findings(gm, db: Path, *args: str) -> list[dict]:
    return gm.json("audit", "--db", db, "--json", *args, expect=1)["problems"]


def test_a_hand_numbered_in_text_is_no_slot_its_seed_could_be_checked_against(
    gm, host_copy: Path
) -> None:
    made: list[int] = []
    rewrite_log(host_copy, lambda conn: made.append(_replayed_hand(conn, "9x")))
    (hand,) = made
    seeds = [p for p in _findings(gm, host_copy) if p["kind"] == "seed"]
    assert [p["hand"] for p in seeds] == [hand], seeds
    assert "'9x'" in seeds[0]["detail"] and "cannot be checked" in seeds[0]["detail"]
    shown = gm.json("hands", "show", str(hand), "--db", host_copy, "--json", expect=1)
    assert any(p["kind"] == "seed" for p in shown["evidence"]["problems"]), shown["evidence"]
    gm("hands", "export", str(hand), "--db", host_copy, "--format", "json", expect=1)


def test_a_hand_under_a_row_id_sqlite_never_gives_is_no_slot_either(gm, host_copy: Path) -> None:
    """Hands before the first seed key are checked only with the old host key: a hand
    at id -1 (which SQLite never gives) is not one of those."""
    rewrite_log(host_copy, lambda conn: _replayed_hand(conn, 9_999, hand_id=-1))
    host_copy.with_name(host_copy.name + ".key").unlink()  # a regulator's copy: no secret
    seeds = [p for p in _findings(gm, host_copy) if p["kind"] == "seed"]
    assert [p["hand"] for p in seeds] == [-1], seeds


def test_one_signed_adjustment_pays_out_once(gm, host_copy: Path) -> None:
    (paid,) = query(
        host_copy, "SELECT * FROM ledger WHERE reason = 'gm_adjust' ORDER BY id DESC LIMIT 1"
    )

    def again(conn: sqlite3.Connection) -> None:
        for _ in range(3):
            _ledger_row(
                conn,
                gm_action_id=paid["gm_action_id"],
                player=paid["player"],
                delta=paid["delta"],
                reason="gm_adjust",
            )

    rewrite_log(host_copy, again)
    minted = [
        p
        for p in _findings(gm, host_copy)
        if p["kind"] == "unjustified_coins" and "again" in p["detail"]
    ]
    assert len(minted) == 3, minted
    assert {p["gm_action"] for p in minted} == {paid["gm_action_id"]}
    assert f"ledger row {paid['id']} carries it" in minted[0]["detail"]


def test_a_hand_logged_a_second_time_is_not_shown_as_verified(gm, host_copy: Path) -> None:
    (hand,) = query(host_copy, "SELECT MIN(id) AS id FROM hands WHERE outcome = 'settled'")
    hand_id = hand["id"]

    def redated(conn: sqlite3.Connection) -> None:
        conn.execute(
            "UPDATE hands SET started_at = ?, ended_at = ? WHERE id = ?",
            ("2026-12-04T03:00:00.000000+00:00", "2026-12-04T03:00:01.000000+00:00", hand_id),
        )
        row = dict(conn.execute("SELECT * FROM hands WHERE id = ?", (hand_id,)).fetchone())
        _log(conn, records.hand_body(row))
        _log(conn, records.hand_end_body(row))

    rewrite_log(host_copy, redated)
    for command in ("show", "replay"):
        run = gm("hands", command, str(hand_id), "--db", host_copy, expect=1)
        assert "a second time" in run.stdout + run.stderr, (command, run.stdout)
    gm("hands", "export", str(hand_id), "--db", host_copy, "--format", "json", expect=1)
    assert any("again" in p["detail"] for p in _findings(gm, host_copy))
