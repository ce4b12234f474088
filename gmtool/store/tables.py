"""Live tables: registration, seats and the public snapshot the console reads.

The snapshot is what anyone may see of a running table (RULES G3): players, coins,
pot, street, whose turn and the seconds left, face-up cards; never a hole card.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from gmtool.canonical import canonical_json
from gmtool.store.db import Store

HEARTBEAT_BATCH = 500  # table ids a heartbeat's UPDATE names (SQLite allows 32,766 parameters)


def exists(store: Store, table_id: str) -> bool:
    return store.one("SELECT 1 FROM tables WHERE id = ?", (table_id,)) is not None


def status(store: Store, table_id: str) -> dict | None:
    """A table's status ('open': hosted, 'stopped', 'closed' by a GM), when it was
    closed and when its host last said it is alive; None when there is no such table."""
    row = store.one("SELECT status, closed_at, updated_at FROM tables WHERE id = ?", (table_id,))
    return dict(row) if row else None


def described(store: Store, table_id: str) -> tuple[str, str, str] | None:
    """(profile, tier, game) of a registered table; None when there is no such table."""
    row = store.one("SELECT profile_id, tier, game FROM tables WHERE id = ?", (table_id,))
    return (row[0], row[1], row[2]) if row else None


def closed_ids(store: Store) -> set[str]:
    """The tables a GM closed: no host opens them again until a GM reopens them."""
    return {r[0] for r in store.all("SELECT id FROM tables WHERE status = 'closed'")}


def open_table(
    store: Store, table_id: str, profile_id: str, tier: str, game: str, host_pid: int
) -> None:
    """The host hosts the table now (registered if new); a closed table is left closed."""
    with store.write():
        store.conn.execute(
            "INSERT INTO tables (id, profile_id, tier, game, status, host_pid, created_at) "
            "VALUES (?, ?, ?, ?, 'open', ?, ?) ON CONFLICT(id) DO UPDATE SET status = 'open', "
            "host_pid = excluded.host_pid, closed_at = NULL WHERE tables.status != 'closed'",
            (table_id, profile_id, tier, game, host_pid, store.now()),
        )


def reopen_table(store: Store, table_id: str) -> bool:
    """A closed table may be hosted again (stopped: the next host start opens it); inside
    the caller's write transaction. False when it was not closed."""
    return (
        store.conn.execute(
            "UPDATE tables SET status = 'stopped', closed_at = NULL, updated_at = ? "
            "WHERE id = ? AND status = 'closed'",
            (store.now(), table_id),
        ).rowcount
        == 1
    )


def set_seats(store: Store, table_id: str, players: list[str]) -> None:
    """Replace the table's seating (inside the caller's write transaction)."""
    store.conn.execute("DELETE FROM seats WHERE table_id = ?", (table_id,))
    at = store.now()
    store.conn.executemany(
        "INSERT INTO seats (table_id, seat, player, joined_at) VALUES (?, ?, ?, ?)",
        [(table_id, i, p, at) for i, p in enumerate(players)],
    )


def publish(store: Store, table_id: str, live: Mapping, players: list[str] | None = None) -> None:
    """Write the public snapshot (and, if given, the seating) of a table."""
    with store.write():
        store.conn.execute(
            "UPDATE tables SET live = ?, updated_at = ? WHERE id = ?",
            (canonical_json(live), store.now(), table_id),
        )
        if players is not None:
            set_seats(store, table_id, players)


def heartbeat(store: Store, table_ids: list[str]) -> None:
    """The host is alive: its open tables' `updated_at` is now (the console shows a table
    whose host stopped saying so as gone)."""
    if table_ids:
        with store.write():
            at = store.now()
            for start in range(0, len(table_ids), HEARTBEAT_BATCH):
                batch = table_ids[start : start + HEARTBEAT_BATCH]
                marks = ", ".join("?" * len(batch))
                store.conn.execute(
                    f"UPDATE tables SET updated_at = ? WHERE status = 'open' AND id IN ({marks})",
                    (at, *batch),
                )


def close_table(store: Store, table_id: str) -> None:
    with store.write():
        store.conn.execute(
            "UPDATE tables SET status = 'closed', closed_at = ?, live = NULL WHERE id = ?",
            (store.now(), table_id),
        )
        store.conn.execute("DELETE FROM seats WHERE table_id = ?", (table_id,))


def stop_table(store: Store, table_id: str) -> None:
    """The host stopped: the table is no longer live (a later host opens it again)."""
    with store.write():
        store.conn.execute(
            "UPDATE tables SET status = 'stopped', live = NULL, updated_at = ? "
            "WHERE id = ? AND status = 'open'",
            (store.now(), table_id),
        )
        store.conn.execute("DELETE FROM seats WHERE table_id = ?", (table_id,))


def list_tables(store: Store, include_closed: bool = False) -> list[dict]:
    sql = "SELECT * FROM tables" + ("" if include_closed else " WHERE status = 'open'")
    rows = store.all(sql + " ORDER BY id")
    return [dict(r) | {"live": json.loads(r["live"]) if r["live"] else None} for r in rows]
