"""The evidence record format: the exact bytes the Merkle log hashes for each kind of row.

A record is the canonical JSON (`gmtool.canonical`: sorted keys, compact separators,
UTF-8) of a small object whose `kind` says what it logs; its leaf is the RFC 9162 leaf
hash of those bytes. The store appends a record in the transaction that writes the row
(store/log_append.py); the audit rebuilds the record from the row as it is now and compares
(audit/log_check.py). So every function here defines bytes that stores already hold:

- FORMAT says which format this is. A change to what any function returns for a row
  that exists today makes every store that holds such a row fail its audit. Add a kind,
  or a key for rows that did not exist before (as `config` gained `text` and `at` on
  2026-12-01, shown by the row having the column), and say so here; never change bytes
  already written.
- tests/test_record_format.py pins the bytes of every kind (tests/data/records/) and the
  source text of every function of this module, so an edit fails until it is reviewed.
- The store's migrations that log rows of their time keep their own frozen copies of the
  bodies they wrote (store/migration_records.py), so this module may grow without
  changing what an old migration appends.

Only the standard library and `gmtool.canonical` are used: an outside verifier can read
this file as the specification.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from gmtool.canonical import canonical_json

FORMAT = 1  # the record format: bodies as below since the evidence log began (issue 14)
# The `witness` kind was added on 2026-12-02 (issue 23) within format 1: a new kind changes
# no record a store already holds. So was `seed_key` on 2026-12-02 (issue 24), and on
# 2026-12-04 (issue 26) the `host` of `hand` and `seed_key` records, for rows and
# registrations that did not exist before: a row without a host has the record it had.

Body = dict[str, Any]


def events_body(table_id: str, first: int, last: int, head: str) -> Body:
    """A batch of one table's events: its last hash commits to every event up to `last`."""
    return {"kind": "events", "table": table_id, "first": first, "last": last, "head": head}


def hand_body(row: Mapping) -> Body:
    """A hand as it starts; `host`, the host that dealt it, only where the row names one (a
    store several hosts share, from 2026-12-04: hands before, and a one-host store's, have
    none, and their records are as they were)."""
    body: Body = {"kind": "hand", "id": row["id"], "table": row["table_id"],
                  "number": row["number"], "config": row["config_id"], "tier": row["tier"],
                  "banker": row["banker"], "ante": row["ante"], "seats": row["seats"],
                  "commitment": row["commitment"], "algorithm": row["algorithm"],
                  "at": row["started_at"]}
    if "host" in row.keys() and row["host"] is not None:  # (a row of any Mapping, or sqlite3)
        body["host"] = row["host"]
    return body


def hand_end_body(row: Mapping) -> Body:
    return {"kind": "hand_end", "id": row["id"], "outcome": row["outcome"],
            "winners": row["winners"], "seed": row["seed"], "at": row["ended_at"]}


def ledger_body(row: Mapping) -> Body:
    return {"kind": "ledger", "id": row["id"], "hand": row["hand_id"],
            "gm_action": row["gm_action_id"], "player": row["player"], "delta": row["delta"],
            "reason": row["reason"], "at": row["created_at"]}


def gm_action_body(row: Mapping) -> Body:
    """The GM action's chain hash commits to its whole content."""
    return {"kind": "gm_action", "id": row["id"], "hash": row["hash"]}


def config_body(row: Mapping) -> Body:
    """The config id is the hash of the compiled config; the SHA-256 of the profile text it
    was compiled from and when it was stored come with it (records made before 25c8006,
    2026-12-01, hold the id alone: their rows are read without those columns)."""
    body: Body = {"kind": "config", "id": row["config_id"]}
    if "profile_text" in row:
        text = row["profile_text"]
        body["text"] = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest() \
            if isinstance(text, str) else None
        body["at"] = row["created_at"]
    return body


def deployment_body(row: Mapping) -> Body:
    return {"kind": "deployment", "id": row["id"], "profile": row["profile_id"],
            "rooms": row["rooms"], "config": row["config_id"], "by": row["deployed_by"],
            "at": row["deployed_at"], "note": row["note"]}


def retire_body(ids: list[int], at: str) -> Body:
    """Deployments that stop applying (a rollback retires the newest and the one before)."""
    return {"kind": "retire", "ids": sorted(ids), "at": at}


def gm_user_body(row: Mapping) -> Body:
    """A GM user's role and registered verifier key (users from before keys have none)."""
    body: Body = {"kind": "gm_user", "name": row["name"], "role": row["role"],
                  "at": row["created_at"]}
    if row.get("key") is not None:
        body["key"] = row["key"]
    return body


def gm_request_body(row: Mapping) -> Body:
    """A GM command for the host as it was asked for, with the GM's signed request (the
    outcome follows as a GM action)."""
    return {"kind": "gm_request", "id": row["id"], "command": row["kind"],
            "table": row["table_id"], "player": row["player"], "reason": row["reason"],
            "by": row["issued_by"], "at": row["issued_at"], "request": row["request"]}


def opening_body(ledger_id: int, player: str, amount: int, signature: str) -> Body:
    """The host's signature over an opening balance (gmtool.evidence.opening): the
    authority for the ledger row `ledger_id`, which is logged just before it."""
    return {"kind": "opening", "id": ledger_id, "player": player, "delta": amount,
            "signature": signature}


def player_body(row: Mapping) -> Body:
    return {"kind": "player", "name": row["name"], "type": row["kind"],
            "at": row["created_at"]}


def witness_body(row: Mapping) -> Body:
    """A change to the store's witnesses (where its signed checkpoints are kept): `add` or
    `remove` one, of a `type` at a `location` ("folder": its path), with the witness's own
    verifier key where it has one (a witness that cosigns; a folder has none), by the GM
    action `gm_action` (none: the store's first witness, recorded by its first host start)."""
    body: Body = {"kind": "witness", "id": row["id"], "change": row["change"],
                  "type": row["type"], "location": row["location"],
                  "gm_action": row["gm_action_id"], "at": row["at"]}
    if row.get("key") is not None:
        body["key"] = row["key"]
    return body


def seed_key_body(first_hand: int, scheme: str, key: str, at: str, signature: str,
                  host: str | None = None) -> Body:
    """A seed key registered by the host (gmtool.evidence.hand_seeds): the seeds of hands
    from id `first_hand` on are those its `scheme` gives with `key` (an RSA public key, or
    a demo store's published HMAC key), as the host's checkpoint key `signature` says. With
    `host` (a store several hosts share, from 2026-12-04): only the hands that host dealt
    (their rows name it), each host dealing with a key of its own."""
    body: Body = {"kind": "seed_key", "id": first_hand, "scheme": scheme, "key": key,
                  "at": at, "signature": signature}
    if host is not None:
        body["host"] = host
    return body


def index_key(body: Mapping) -> tuple[str | None, int | None]:
    """The indexed key of a record (its `tkey`, `nkey` columns): which row (or table and
    first event) it logs. Audit checks the columns against the body they index."""
    kind = body["kind"]
    if kind == "events":
        return body["table"], body["first"]
    if kind in ("config", "gm_user", "player"):
        return body["name" if kind != "config" else "id"], None
    return None, body.get("id")


def record_text(body: Mapping) -> str:
    """The record as the log stores it: canonical JSON (its UTF-8 bytes are hashed)."""
    return canonical_json(body)


KINDS = ("events", "hand", "hand_end", "ledger", "gm_action", "config", "deployment",
         "retire", "gm_user", "gm_request", "opening", "player", "witness", "seed_key")
