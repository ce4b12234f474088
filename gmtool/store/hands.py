"""Hands and their events: the per-table hash chain, settlement and voiding.

Events are chained per table: `hash = sha256(prev_hash + canonical_json(record))` where
the record holds the table, hand, sequence number, type, payload and time. Editing,
deleting, inserting or reordering an event breaks the chain at that point.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping

from gmtool.canonical import ZERO_HASH, canonical_json
from gmtool.evidence import records
from gmtool.store import dialect, ledger, log_append, stakes, table_leases
from gmtool.store.db import Store
from gmtool.store.table_leases import Lease, LeaseLost

_INSERT_EVENT = (
    "INSERT INTO events (table_id, hand_id, seq, type, payload, created_at, "
    "prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)


def set_head(store: Store, name: str, seq: int, digest: str) -> None:
    """Record the last link of a chain (inside the transaction that adds it)."""
    store.conn.execute(
        "INSERT INTO chain_heads (name, seq, hash) VALUES (?, ?, ?) ON CONFLICT"
        "(name) DO UPDATE SET seq = excluded.seq, hash = excluded.hash",
        (name, seq, digest),
    )


def event_record(
    table_id: str, hand_id: int | None, seq: int, type_: str, payload: str, at: str
) -> dict:
    """What an event's hash covers: `canonical_json` of this record, the payload as an object."""
    return {
        "table": table_id,
        "hand": hand_id,
        "seq": seq,
        "type": type_,
        "payload": json.loads(payload),
        "at": at,
    }


_text = json.encoder.encode_basestring  # a JSON string literal, non-ASCII kept (canonical)
_sha256 = hashlib.sha256


def event_hash(
    prev_hash: str, table_id: str, hand_id: int | None, seq: int, type_: str, payload: str, at: str
) -> str:
    """`chain_hash(prev_hash, event_record(...))` without parsing and re-serialising the
    payload: it is already canonical JSON, so the record's canonical text (keys in sorted
    order: at, hand, payload, seq, table, type) is put together around it."""
    return event_hasher(table_id)(prev_hash, hand_id, seq, type_, payload, at)


def event_hasher(table_id: str) -> Callable[[str, int | None, int, str, str, str], str]:
    """`event_hash` for the events of one table: `hasher(prev_hash, hand_id, seq, type_,
    payload, at)`."""

    def event_hash_of_table(
        prev_hash: str, hand_id: int | None, seq: int, type_: str, payload: str, at: str
    ) -> str:
        return event_hashes(
            table_id, (prev_hash,), (hand_id,), (seq,), (type_,), (payload,), (at,)
        )[0]

    return event_hash_of_table


def event_hashes(
    table_id: str,
    prev_hashes: Iterable[str],
    hand_ids: Iterable[int | None],
    seqs: Iterable[int],
    types: Iterable[str],
    payloads: Iterable[str],
    ats: Iterable[str],
) -> list[str]:
    """`event_hash` of many events of one table at once, given column by column (the
    audit checks a chunk of rows this way: one comprehension, no call per row). The one
    place the record's text is put together."""
    table = f',"table":{_text(table_id)},"type":'
    return [
        _sha256(
            f'{prev}{{"at":{_text(at)},"hand":{"null" if hand is None else hand},'
            f'"payload":{payload},"seq":{seq}{table}{_text(type_)}}}'.encode()
        ).hexdigest()
        for prev, hand, seq, type_, payload, at in zip(
            prev_hashes, hand_ids, seqs, types, payloads, ats
        )
    ]


class TableLog:
    """Appends one table's events to its chain; keeps the chain head in memory."""

    def __init__(self, store: Store, table_id: str) -> None:
        self.store = store
        self.table_id = table_id
        self._hash = event_hasher(table_id)
        row = store.one(
            "SELECT seq, hash FROM events WHERE table_id = ? ORDER BY seq DESC LIMIT 1", (table_id,)
        )
        self.seq, self.head = (row["seq"], row["hash"]) if row else (0, ZERO_HASH)
        self.lease: Lease | None = None  # on a shared store: the host's (house/ownership.py)

    def rows(self, hand_id: int | None, events: Iterable[Mapping]) -> list[tuple]:
        """Chained rows for `events` (JSON-ready dicts with a "type"); advances the head."""
        out = []
        at = self.store.now()
        for item in events:
            fields = {k: v for k, v in item.items() if k != "type"}
            payload = canonical_json(fields)
            self.seq += 1
            digest = self._hash(self.head, hand_id, self.seq, item["type"], payload, at)
            out.append(
                (self.table_id, hand_id, self.seq, item["type"], payload, at, self.head, digest)
            )
            self.head = digest
        return out

    def append(self, hand_id: int | None, events: Iterable[Mapping]) -> None:
        """Write events in their own transaction (rolled back, head restored, on failure)."""
        seq, head = self.seq, self.head
        try:
            with self.store.write():
                self.write_rows(self.rows(hand_id, events))
        except BaseException:
            self.seq, self.head = seq, head
            raise

    def write_rows(self, rows: list[tuple]) -> None:
        """Insert prepared rows, and move the chain's head, inside the caller's transaction."""
        if not rows:
            return
        if self.lease is not None and not table_leases.still_held(self.store, self.lease):
            raise LeaseLost(
                f"table {self.table_id}: another host took it over; this host writes no more "
                "of its events"
            )
        self.store.conn.executemany(_INSERT_EVENT, rows)
        set_head(self.store, f"events:{self.table_id}", rows[-1][2], rows[-1][7])
        log_append.append(
            self.store, records.events_body(self.table_id, rows[0][2], rows[-1][2], rows[-1][7])
        )


def begin_hand(
    store: Store,
    log: TableLog,
    number: int,
    config_id: str,
    tier: str,
    banker: str,
    ante: int | None,
    seats: list[dict],
    commitment: str,
    algorithm: str,
    events: list[Mapping],
) -> int:
    """Record a new hand (commitment stored, seed still secret) and its first events; on a
    shared store, with the host that deals it (its table's lease holder: its seed key)."""
    seq, head = log.seq, log.head
    try:
        with store.write():
            stakes.cover(store, seats)  # a shared store: no coins at stake twice
            hand_id = dialect.insert_id(
                store,
                "INSERT INTO hands (table_id, number, config_id, tier, banker, ante, seats, "
                "commitment, algorithm, started_at, host, outcome) VALUES (?, ?, ?, ?, ?, ?, "
                "?, ?, ?, ?, ?, 'running')",
                (
                    log.table_id,
                    number,
                    config_id,
                    tier,
                    banker,
                    ante,
                    canonical_json(seats),
                    commitment,
                    algorithm,
                    store.now(),
                    log.lease.host if log.lease is not None else None,  # who deals it
                ),
            )
            log_append.append_row(store, records.hand_body, "hands", "id", hand_id)
            log.write_rows(log.rows(hand_id, events))
            return hand_id
    except BaseException:
        log.seq, log.head = seq, head
        raise


def settle_hand(
    store: Store,
    log: TableLog,
    hand_id: int,
    events: list[Mapping],
    settlement: Mapping,
    seed_hex: str,
    coins_move: bool = True,
) -> None:
    """One durable transaction: last events, ledger rows, balances, tallies, hand end, seed."""
    seq, head = log.seq, log.head
    try:
        with store.write(durable=True):
            log.write_rows(log.rows(hand_id, events))
            if coins_move:
                ledger.post(
                    store,
                    [
                        (e["player"], e["delta"], e["reason"])
                        for e in settlement["entries"]
                        if e["delta"]
                    ],
                    hand_id=hand_id,
                )
            ledger.record_results(store, settlement["results"], settlement.get("score", {}))
            store.conn.execute(
                "UPDATE hands SET ended_at = ?, outcome = 'settled', winners = ?, seed = ? "
                "WHERE id = ?",
                (store.now(), json.dumps(settlement["winners"]), seed_hex, hand_id),
            )
            log_append.append_row(store, records.hand_end_body, "hands", "id", hand_id)
    except BaseException:
        log.seq, log.head = seq, head
        raise


def void_hand(
    store: Store, log: TableLog, hand_id: int, reason: str, seed_hex: str | None, detail: str = ""
) -> None:
    """Void a hand: no coins move (stakes only leave at settlement), a significant event says so."""
    seq, head = log.seq, log.head
    try:
        with store.write(durable=True):
            log.write_rows(
                log.rows(
                    hand_id,
                    [
                        {
                            "type": "hand_voided",
                            "reason": reason,
                            "detail": detail,
                            "stakes": "returned",
                        }
                    ],
                )
            )
            store.conn.execute(
                "UPDATE hands SET ended_at = ?, outcome = 'voided', seed = ? WHERE id = ?",
                (store.now(), seed_hex, hand_id),
            )
            log_append.append_row(store, records.hand_end_body, "hands", "id", hand_id)
    except BaseException:
        log.seq, log.head = seq, head
        raise


def unfinished_hands(store: Store, table_id: str | None = None) -> list[dict]:
    """Hands a crash left running (of one table, if given): id, table, number, the deck
    commitment and the host that dealt it."""
    where, params = ("AND table_id = ? ", (table_id,)) if table_id is not None else ("", ())
    return [
        dict(r)
        for r in store.all(
            "SELECT id, table_id, number, commitment, host FROM hands "
            f"WHERE outcome = 'running' {where}ORDER BY id",
            params,
        )
    ]


def at_stake(store: Store, player: str) -> tuple[int, int] | None:
    """(hand id, coins brought) of the running hand `player` sits in, if any: the most that
    hand can take from them (D-9)."""
    row = store.one(dialect.statement(store, "hands.at_stake"), (player,))
    return (row[0], row[1]) if row else None


def last_number(store: Store, table_id: str) -> int:
    """The highest hand number a table has used (0 before its first hand)."""
    return store.one("SELECT MAX(number) FROM hands WHERE table_id = ?", (table_id,))[0] or 0
