"""The store's seed keys: which key derives the seeds of which hands, as evidence.

A seed key is registered by a `seed_key` record of the evidence log alone (no row of its
own: the record is what the audit reads, and the log is append-only and signed by
checkpoints). Its `id` is the first hand dealt with it; the key of a hand is the last
registered whose `id` is at most the hand's. Hands before the first registration are
from before seed keys (gmtool/evidence/hand_seeds.py, docs/evidence.md).
"""

from __future__ import annotations

import json
from typing import Any

from gmtool.evidence import records
from gmtool.store import log_append
from gmtool.store.db import Store


def registrations(store: Store) -> list[dict[str, Any]]:
    """Every `seed_key` record's body, in log order, with its index as `idx` (a body that
    is not an object is skipped: the log's own check reports it)."""
    found = []
    for row in store.all("SELECT idx, body FROM log WHERE kind = 'seed_key' ORDER BY idx"):
        try:
            body = json.loads(row["body"])
        except ValueError:
            continue
        if isinstance(body, dict):
            found.append({**body, "idx": row["idx"]})
    return found


def next_hand_id(store: Store) -> int:
    """The id the next hand will have (inside the caller's write transaction: hands are
    never deleted, so it is the largest id's successor)."""
    return store.one("SELECT COALESCE(MAX(id), 0) + 1 FROM hands")[0]


def register(store: Store, scheme: str, key: str, sign, host: str | None = None) -> dict[str, Any]:
    """Register a seed key from the next hand on (of `host`'s hands alone, where several
    hosts share the store), signed by `sign(first_hand, scheme, key, at)` (the host's
    checkpoint key, over the host too); returns the record's body."""
    with store.write(durable=True):
        first, at = next_hand_id(store), store.now()
        signature = sign(first, scheme, key, at)
        body = records.seed_key_body(first, scheme, key, at, signature, host)
        log_append.append(store, body)
    return body
