"""Reads for the check of one hand's whole evidence (audit/hand_check.py): its ledger rows
and the rows its ledger records name, whole, as the log records them."""

from __future__ import annotations

from gmtool.store.db import Store
from gmtool.store.dialect import SQLITE


def ledger_rows(store: Store, hand_id: int) -> list[dict]:
    """Every column of the hand's ledger rows, in id order."""
    return [
        dict(r) for r in store.all("SELECT * FROM ledger WHERE hand_id = ? ORDER BY id", (hand_id,))
    ]


def ledger_row(store: Store, row_id: object) -> dict | None:
    """Every column of ledger row `row_id`, or None."""
    row = store.one("SELECT * FROM ledger WHERE id = ?", (row_id,))
    return dict(row) if row is not None else None


def events_from(store: Store, table_id: str, first: int, last: int) -> list[tuple]:
    """(hand_id, seq, type, payload, created_at, hash, prev_hash, id) of a table's events
    from `first` to `last`, in chain order (as the audit's table pass reads them)."""
    sql = (
        "SELECT hand_id, seq, type, payload, created_at, hash, prev_hash, id "
        "FROM events WHERE table_id = ? AND seq BETWEEN ? AND ? ORDER BY seq"
    )
    if store.dialect != SQLITE:
        return store.all(sql, (table_id, first, last))  # (its rows are tuples)
    cursor = store.conn.cursor()
    cursor.row_factory = None  # plain tuples: the audit reads many
    return cursor.execute(sql, (table_id, first, last)).fetchall()
