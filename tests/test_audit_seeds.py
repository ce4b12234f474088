"""Seeds (RULES G4, the deck's commitment): no deck is dealt twice, no hand slot is used
twice, and every revealed seed is the host key's for its table and number. A full audit
finds shared seeds and slots through SQLite, so its memory does not grow with the store;
these edits prove it still finds them."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from gmtool.ops import audit
from gmtool.store.db import connect


def _findings(db: Path) -> list[dict]:
    with connect(db) as store:
        return [p for p in audit(store).as_json()["problems"] if p["kind"] == "seed"]


def test_a_deck_dealt_twice_is_found(host_copy: Path) -> None:
    with sqlite3.connect(host_copy) as conn:
        first, second = (
            r[0]
            for r in conn.execute("SELECT id FROM hands WHERE seed IS NOT NULL ORDER BY id LIMIT 2")
        )
        conn.execute(
            "UPDATE hands SET seed = (SELECT seed FROM hands WHERE id = ?) WHERE id = ?",
            (first, second),
        )
    found = _findings(host_copy)
    assert any(p["hand"] == second and f"seed of hand {first}" in p["detail"] for p in found)


def test_a_hand_slot_used_twice_is_found(host_copy: Path) -> None:
    with sqlite3.connect(host_copy) as conn:
        (index,) = conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND "
            "tbl_name = 'hands' AND sql LIKE '%number%'"
        ).fetchone()
        conn.execute(f"DROP INDEX {index}")
        table, first, second = conn.execute(
            "SELECT table_id, MIN(id), MAX(id) FROM hands GROUP BY table_id "
            "HAVING COUNT(*) > 1 ORDER BY table_id LIMIT 1"
        ).fetchone()
        number = conn.execute("SELECT number FROM hands WHERE id = ?", (first,)).fetchone()[0]
        conn.execute("UPDATE hands SET number = ? WHERE id = ?", (number, second))
    found = _findings(host_copy)
    assert any(
        p["hand"] == second
        and f"hands {first} and {second} are both {table} #{number}" in p["detail"]
        for p in found
    ), found
