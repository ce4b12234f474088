"""A hand row's own copies of what its events say (outside probe r5, issue 24): its
winners, ante and deck algorithm, rewritten together with their evidence record and the
whole log recomputed, as a careful attacker does to a hand in a killed host's unsigned
tail. The events' chain still says otherwise, and the audit, `hands show` and `hands
replay` say which column does not agree.

Real stores (a copy of the session's host-made one), real `gmtool` processes.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from helpers import rewrite_log

from gmtool.evidence import records


def _rewrite(db: Path, hand_id: int, column: str, value, record) -> None:
    """Set the hand's `column` to `value`, and its record (`record`: hand or hand_end) to
    what the edited row gives, the log's hashes recomputed."""

    def change(conn: sqlite3.Connection) -> None:
        before = records.record_text(
            record(conn.execute("SELECT * FROM hands WHERE id = ?", (hand_id,)).fetchone())
        )
        conn.execute(f"UPDATE hands SET {column} = ? WHERE id = ?", (value, hand_id))
        after = records.record_text(
            record(conn.execute("SELECT * FROM hands WHERE id = ?", (hand_id,)).fetchone())
        )
        edited = conn.execute("UPDATE log SET body = ? WHERE body = ?", (after, before))
        assert edited.rowcount == 1

    rewrite_log(db, change)


def _settled(db: Path, where: str = "") -> sqlite3.Row:
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    try:
        return conn.execute(
            "SELECT * FROM hands WHERE outcome = 'settled' AND json_array_length(seats) > 2 "
            f"{where} ORDER BY id LIMIT 1"
        ).fetchone()
    finally:
        conn.close()


def _findings(gm, db: Path, hand_id: int) -> list[str]:
    report = gm.json("audit", "--db", db, "--json", expect=1)
    details = [p["detail"] for p in report["problems"] if p.get("hand") == hand_id]
    assert details, report
    return details


@pytest.mark.parametrize(
    ("column", "record", "said"),
    [
        ("winners", records.hand_end_body, "winners"),
        ("algorithm", records.hand_body, "deck algorithm"),
    ],
)
def test_a_rewritten_hand_row_is_found(host_copy: Path, gm, column, record, said) -> None:
    hand = _settled(host_copy)
    if column == "winners":
        seated = [seat["player"] for seat in json.loads(hand["seats"])]
        loser = next(p for p in seated if p not in json.loads(hand["winners"]))
        value = json.dumps([loser])
    else:
        value = "hmac-sha256-fy-v0"
    _rewrite(host_copy, hand["id"], column, value, record)
    assert any(said in detail for detail in _findings(gm, host_copy, hand["id"]))
    for command in ("show", "replay"):
        run = gm("hands", command, str(hand["id"]), "--db", host_copy, expect=1)
        assert said in run.stdout + run.stderr, run.stdout + run.stderr


def test_a_rewritten_ante_is_found(host_copy: Path, gm) -> None:
    hand = _settled(host_copy, "AND ante IS NOT NULL")
    _rewrite(host_copy, hand["id"], "ante", hand["ante"] + 1, records.hand_body)
    assert any("ante" in detail for detail in _findings(gm, host_copy, hand["id"]))
