"""GM users, the hash-chained GM action log and the command queue from console to host.

Every GM action (who, what, target, reason, when, outcome) is appended to `gm_actions`,
chained like the events (`hash = sha256(prev_hash + canonical_json(record))`), refused
ones included. Commands for the host (kick, close) go through `gm_commands`; the host
acknowledges each with its outcome.
"""

from __future__ import annotations

import json
from typing import Any

from gmtool.canonical import ZERO_HASH, canonical_json, chain_hash
from gmtool.errors import Refused, UsageError
from gmtool.store import evidence
from gmtool.store.db import NoSuchRecord, Store
from gmtool.store.hands import set_head

ROLES = ("operator", "support")


def gm_record(row: dict) -> dict:
    """What a GM action's hash covers."""
    return {k: row[k] for k in ("id", "actor", "action", "target", "reason", "outcome", "at")}


def log_action(store: Store, actor: str | None, action: str, target: str | None,
               reason: str | None, outcome: Any) -> int:
    """Append one GM action to the chain (inside the caller's write transaction)."""
    head = store.one("SELECT id, hash FROM gm_actions ORDER BY id DESC LIMIT 1")
    prev = head["hash"] if head else ZERO_HASH
    row = {"id": (head["id"] if head else 0) + 1, "actor": actor, "action": action,
           "target": target, "reason": reason, "outcome": canonical_json(outcome), "at": store.now()}
    digest = chain_hash(prev, gm_record(row))
    store.conn.execute("INSERT INTO gm_actions (id, actor, action, target, reason, outcome, at,"
                       " prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       (row["id"], actor, action, target, reason, row["outcome"], row["at"],
                        prev, digest))
    set_head(store, "gm_actions", row["id"], digest)
    evidence.append(store, evidence.gm_action_body({"id": row["id"], "hash": digest}))
    return row["id"]


def add_user(store: Store, name: str, role: str) -> None:
    if role not in ROLES:
        raise UsageError(f"unknown role {role!r}; use {' or '.join(ROLES)}")
    with store.write():
        before = store.one("SELECT role FROM gm_users WHERE name = ?", (name,))
        if before is not None and before["role"] == role:
            return
        if before is not None and before["role"] == "operator" and store.one(
                "SELECT COUNT(*) FROM gm_users WHERE role = 'operator'")[0] == 1:
            raise Refused(f"{name} is the last operator: make another GM an operator first "
                          "(without one, anyone could make themself operator)")
        store.conn.execute("INSERT INTO gm_users (name, role, created_at) VALUES (?, ?, ?) "
                           "ON CONFLICT(name) DO UPDATE SET role = excluded.role",
                           (name, role, store.now()))
        evidence.append_row(store, evidence.gm_user_body, "gm_users", "name", name)


def has_operator(store: Store) -> bool:
    """Whether any GM user is an operator (until then, bootstrap rules apply)."""
    return store.one("SELECT 1 FROM gm_users WHERE role = 'operator' LIMIT 1") is not None


def users(store: Store) -> list[dict]:
    return [dict(r) for r in store.all("SELECT name, role, created_at FROM gm_users "
                                       "ORDER BY name")]


def role_of(store: Store, name: str | None) -> str | None:
    if not name:
        return None
    row = store.one("SELECT role FROM gm_users WHERE name = ?", (name,))
    return row["role"] if row else None


def enqueue(store: Store, kind: str, table_id: str, player: str | None, reason: str | None,
            issued_by: str | None, gm_action_id: int | None = None) -> int:
    with store.write():
        cursor = store.conn.execute(
            "INSERT INTO gm_commands (kind, table_id, player, reason, issued_by, issued_at, "
            "status, gm_action_id) VALUES (?, ?, ?, ?, ?, ?, 'pending', ?)",
            (kind, table_id, player, reason, issued_by, store.now(), gm_action_id))
        return cursor.lastrowid


def pending_commands(store: Store) -> list[dict]:
    return [dict(r) for r in store.all("SELECT * FROM gm_commands WHERE status = 'pending' "
                                       "ORDER BY id")]


def claim(store: Store, command_id: int) -> bool:
    """The host takes a pending command before carrying it out; False if the console
    withdrew it first (then it must never be carried out)."""
    with store.write():
        return store.conn.execute("UPDATE gm_commands SET status = 'taken' WHERE id = ? AND "
                                  "status = 'pending'", (command_id,)).rowcount == 1


def acknowledge(store: Store, command_id: int, ok: bool, outcome: dict) -> None:
    with store.write():
        store.conn.execute("UPDATE gm_commands SET status = ?, acked_at = ?, outcome = ? "
                           "WHERE id = ?", ("done" if ok else "failed", store.now(),
                                            canonical_json(outcome), command_id))


def expire(store: Store, command_id: int) -> bool:
    """Withdraw a command the console stopped waiting for: True if no host had taken it
    (it never will); False if a host took it (its outcome is coming)."""
    with store.write():
        return store.conn.execute("UPDATE gm_commands SET status = 'expired' WHERE id = ? AND "
                                  "status = 'pending'", (command_id,)).rowcount == 1


def command(store: Store, command_id: int) -> dict:
    row = store.one("SELECT * FROM gm_commands WHERE id = ?", (command_id,))
    if row is None:
        raise NoSuchRecord(f"no command {command_id}")
    out = dict(row)
    out["outcome"] = json.loads(row["outcome"]) if row["outcome"] else None
    return out
