"""The evidence log's appender: every record that is evidence, in one append-only Merkle tree.

Each write that makes evidence (a batch of a table's events, a hand's start and end, a
ledger row, a GM action, a stored config, a deployment, a GM user's role, a new player,
the host's signature over an opening balance) appends a record to `log` in the same
transaction: `body` is the record's canonical JSON and `leaf` its RFC 9162 leaf hash. The
tree's running state (`log_state`: size and the roots of its complete subtrees) and every
complete interior node (`log_nodes`, for proofs) are written with it. A signed checkpoint
of (size, root) then proves every record before it, wherever the database goes
(docs/evidence.md).

What each record holds is the record format's (`gmtool.evidence.records`); the audit's
reads of the log are `store/log_reads.py`.
"""

from __future__ import annotations

import secrets
import sqlite3
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from gmtool.evidence.merkle import Frontier, leaf_hash
from gmtool.evidence.records import index_key, record_text
from gmtool.store.errors import StoreError


class Store(Protocol):
    """What the appender needs of a store: its connection (store/db.py's `Store`)."""

    conn: sqlite3.Connection


def _load(conn: sqlite3.Connection) -> Frontier:
    row = conn.execute("SELECT size, nodes FROM log_state WHERE id = 1").fetchone()
    if row is None:
        return Frontier()
    try:
        nodes = bytes(row[1])
        return Frontier(row[0], [nodes[i : i + 32] for i in range(0, len(nodes), 32)])
    except (TypeError, ValueError) as error:  # edited by hand: no write may build on it
        raise StoreError(
            f"the evidence log's recorded state is damaged ({error}): run `gmtool audit`"
        ) from None


def append(store: Store, body: dict) -> int:
    """Append one record inside the caller's write transaction; returns its index."""
    return append_many(store.conn, [body])


def append_many(conn: sqlite3.Connection, bodies: list[dict]) -> int:
    """Append records in order inside the caller's write transaction; returns the index of
    the last one."""
    frontier = _load(conn)
    rows, nodes = [], []
    for body in bodies:
        text = record_text(body)
        leaf = leaf_hash(text.encode())
        tkey, nkey = index_key(body)
        rows.append((frontier.size, body["kind"], tkey, nkey, text, leaf))
        nodes += frontier.append(leaf)
    conn.executemany(
        "INSERT INTO log (idx, kind, tkey, nkey, body, leaf) VALUES (?, ?, ?, ?, ?, ?)", rows
    )
    if nodes:
        conn.executemany("INSERT INTO log_nodes (level, idx, hash) VALUES (?, ?, ?)", nodes)
    conn.execute(
        "INSERT INTO log_state (id, size, nodes) VALUES (1, ?, ?) ON CONFLICT(id) DO "
        "UPDATE SET size = excluded.size, nodes = excluded.nodes",
        (frontier.size, b"".join(frontier.nodes)),
    )
    return frontier.size - 1


def append_row(
    store: Store, body_of: Callable[[Mapping], dict], table: str, key: str, value: Any
) -> None:
    """Append the record of one row as it now is (read back inside the transaction)."""
    cursor = store.conn.execute(f"SELECT * FROM {table} WHERE {key} = ?", (value,))
    names = [c[0] for c in cursor.description]
    append(store, body_of(dict(zip(names, cursor.fetchone()))))


def state(store: Store) -> tuple[int, bytes]:
    """(size, root) of the log as the store says it is now."""
    frontier = _load(store.conn)
    return frontier.size, frontier.root()


def store_id(store: Store) -> str:
    row = store.conn.execute("SELECT value FROM meta WHERE key = 'store_id'").fetchone()
    return row[0] if row else ""


def origin_of(store: Store) -> str:
    """The log's origin, as its checkpoints name it (C2SP tlog-checkpoint)."""
    return f"gmtool/{store_id(store)}"


def new_store_id() -> str:
    return secrets.token_hex(8)
