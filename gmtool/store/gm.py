"""GM users and their keys, the hash-chained GM action log and the command queue.

Every GM action (who, what, target, reason, when, outcome, and the GM's signed request)
is appended to `gm_actions`, chained like the events (`hash = sha256(prev_hash +
canonical_json(record))`), refused ones included. Commands for the host (kick, close) go
through `gm_commands`: the signed request is logged when it is made, the host checks the
signature before it claims the command, and whoever decides its fate (the host: done or
failed; the console: expired when it stopped waiting, withdrawn when it was interrupted;
a host that finds nobody waiting for a command: withdrawn; the next host: interrupted)
logs it as a GM action in the same transaction, so every command has exactly one logged
fate.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from gmtool.canonical import ZERO_HASH, canonical_json, chain_hash
from gmtool.errors import GmtoolError, Refused, UsageError
from gmtool.evidence import records, request
from gmtool.store import dialect, log_append, log_history
from gmtool.store.db import NoSuchRecord, Store
from gmtool.store.hands import set_head

ROLES = ("operator", "support")


def failure(error: GmtoolError) -> dict:
    """The recorded outcome of a GM action or command that was refused or could not be
    carried out: the error's message and exit code."""
    return {"ok": False, "error": str(error), "exit_code": error.exit_code}


def gm_record(row: dict) -> dict:
    """What a GM action's hash covers (the request only where there is one, so actions
    logged before requests were signed keep their hashes)."""
    record = {k: row[k] for k in ("id", "actor", "action", "target", "reason", "outcome", "at")}
    if row.get("request") is not None:
        record["request"] = row["request"]
    return record


def log_action(
    store: Store,
    actor: str | None,
    action: str,
    target: str | None,
    reason: str | None,
    outcome: Any,
    request: str | None = None,
) -> int:
    """Append one GM action to the chain (inside the caller's write transaction)."""
    head = store.one("SELECT id, hash FROM gm_actions ORDER BY id DESC LIMIT 1")
    prev = head["hash"] if head else ZERO_HASH
    row = {
        "id": (head["id"] if head else 0) + 1,
        "actor": actor,
        "action": action,
        "target": target,
        "reason": reason,
        "outcome": canonical_json(outcome),
        "at": store.now(),
        "request": request,
    }
    digest = chain_hash(prev, gm_record(row))
    store.conn.execute(
        "INSERT INTO gm_actions (id, actor, action, target, reason, outcome, at,"
        " request, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            row["id"],
            actor,
            action,
            target,
            reason,
            row["outcome"],
            row["at"],
            request,
            prev,
            digest,
        ),
    )
    set_head(store, "gm_actions", row["id"], digest)
    log_append.append(store, records.gm_action_body({"id": row["id"], "hash": digest}))
    return row["id"]


def add_user(store: Store, name: str, role: str, key: str | None = None) -> bool:
    """Register GM `name` with `role` and verifier `key` (None keeps the key they have)
    inside the caller's write transaction; False when nothing changes. The last operator
    is never demoted (without one, nobody could act)."""
    if role not in ROLES:
        raise UsageError(f"unknown role {role!r}; use {' or '.join(ROLES)}")
    before = store.one("SELECT role, key FROM gm_users WHERE name = ?", (name,))
    if before is not None and before["role"] == role and key in (None, before["key"]):
        return False
    if (
        before is not None
        and before["role"] == "operator"
        and role != "operator"
        and store.one("SELECT COUNT(*) FROM gm_users WHERE role = 'operator'")[0] == 1
    ):
        raise Refused(
            f"{name} is the last operator: make another GM an operator first "
            "(without one, nobody could act)"
        )
    store.conn.execute(
        "INSERT INTO gm_users (name, role, created_at, key) VALUES (?, ?, ?, ?) "
        "ON CONFLICT(name) DO UPDATE SET role = excluded.role, "
        "key = COALESCE(excluded.key, gm_users.key)",
        (name, role, store.now(), key),
    )
    log_append.append_row(store, records.gm_user_body, "gm_users", "name", name)
    return True


def has_operator(store: Store) -> bool:
    """Whether any GM user is an operator (until then, a fresh store is being set up)."""
    return store.one("SELECT 1 FROM gm_users WHERE role = 'operator' LIMIT 1") is not None


def has_keys(store: Store) -> bool:
    """Whether any GM user has a registered key (until then, `db init` may register the
    first operator's)."""
    return store.one("SELECT 1 FROM gm_users WHERE key IS NOT NULL LIMIT 1") is not None


def registered_key(store: Store, name: str | None) -> str | None:
    row = store.one("SELECT key FROM gm_users WHERE name = ?", (name,)) if name else None
    return row["key"] if row else None


def users(store: Store) -> list[dict]:
    return [
        dict(r) for r in store.all("SELECT name, role, key, created_at FROM gm_users ORDER BY name")
    ]


def role_of(store: Store, name: str | None) -> str | None:
    if not name:
        return None
    row = store.one("SELECT role FROM gm_users WHERE name = ?", (name,))
    return row["role"] if row else None


def enqueue(
    store: Store,
    kind: str,
    table_id: str,
    player: str | None,
    reason: str | None,
    issued_by: str | None,
    request: str | None,
) -> int:
    """Queue a command for the host with the GM's signed request, logged as evidence in
    the same transaction."""
    with store.write():
        command_id = dialect.insert_id(
            store,
            "INSERT INTO gm_commands (kind, table_id, player, reason, issued_by, issued_at, "
            "status, request) VALUES (?, ?, ?, ?, ?, ?, 'pending', ?)",
            (kind, table_id, player, reason, issued_by, store.now(), request),
        )
        log_append.append_row(store, records.gm_request_body, "gm_commands", "id", command_id)
        return command_id


def pending_commands(store: Store) -> list[dict]:
    return [
        dict(r) for r in store.all("SELECT * FROM gm_commands WHERE status = 'pending' ORDER BY id")
    ]


def command_target(command: dict) -> str:
    """A command's target as its request and its GM action name it: table/player or table."""
    return (
        f"{command['table_id']}/{command['player']}" if command["player"] else command["table_id"]
    )


def _conclude(store: Store, command: dict, status: str, outcome: dict) -> None:
    """Record a command's fate and log it as a GM action (inside the caller's transaction).
    The command row's status, outcome and time are copies of what the action logs (the
    fate by name: done, failed, expired, interrupted), so audit can hold them to it."""
    action = log_action(
        store,
        command["issued_by"],
        command["kind"],
        command_target(command),
        command["reason"],
        {**outcome, "command": command["id"], "fate": status},
    )
    at = store.one("SELECT at FROM gm_actions WHERE id = ?", (action,))[0]
    store.conn.execute(
        "UPDATE gm_commands SET status = ?, acked_at = ?, outcome = ?, "
        "gm_action_id = ? WHERE id = ?",
        (status, at, canonical_json(outcome), action, command["id"]),
    )


def claim(
    store: Store,
    command_id: int,
    refusal: Callable[[dict], dict | None],
    withdrawal: Callable[[dict], dict | None] = lambda command: None,
) -> bool:
    """The host takes a pending command before carrying it out. False if the console
    withdrew it first (then it must never be carried out), if `refusal(command)` gives
    an outcome (a request whose signature does not hold: its logged fate, failed), or if
    `withdrawal(command)` gives one (nobody waits for it any more: withdrawn)."""
    with store.write():
        row = store.one(
            "SELECT * FROM gm_commands WHERE id = ? AND status = 'pending'", (command_id,)
        )
        if row is None or fate_logged(store, command_id):
            return False  # withdrawn or done, or made 'pending' again by hand: never redone
        refused = refusal(dict(row))
        if refused is not None:
            _conclude(store, dict(row), "failed", refused)
            return False
        withdrawn = withdrawal(dict(row))
        if withdrawn is not None:
            _conclude(store, dict(row), "withdrawn", withdrawn)
            return False
        store.conn.execute("UPDATE gm_commands SET status = 'taken' WHERE id = ?", (command_id,))
        return True


def acknowledge(store: Store, command_id: int, ok: bool, outcome: dict) -> bool:
    """The host's outcome of a command it took (or could not take): logged as its fate;
    False if the command already has one."""
    with store.write():
        row = store.one(
            "SELECT * FROM gm_commands WHERE id = ? AND status IN ('pending', 'taken')",
            (command_id,),
        )
        if row is None or fate_logged(store, command_id):
            return False
        _conclude(store, dict(row), "done" if ok else "failed", outcome)
        return True


def expire(store: Store, command_id: int, outcome: dict) -> bool:
    """Withdraw a command the console stopped waiting for, logging `outcome` as its fate:
    True if no host had taken it (it never will); False if a host took it (its outcome is
    coming)."""
    with store.write():
        row = store.one(
            "SELECT * FROM gm_commands WHERE id = ? AND status = 'pending'", (command_id,)
        )
        if row is None or fate_logged(store, command_id):
            return False
        _conclude(store, dict(row), "expired", outcome)
        return True


def withdraw(store: Store, command_id: int, outcome: dict) -> bool:
    """Withdraw a pending command nobody waits for any more (its console was interrupted
    or is gone), logging `outcome` as its fate, withdrawn: True if no host had taken it
    (none ever will); False if one took it first (or it has a fate already)."""
    with store.write():
        row = store.one(
            "SELECT * FROM gm_commands WHERE id = ? AND status = 'pending'", (command_id,)
        )
        if row is None or fate_logged(store, command_id):
            return False
        _conclude(store, dict(row), "withdrawn", outcome)
        return True


def interrupt_taken(store: Store, outcome: dict) -> list[int]:
    """Commands a host took and never answered (it was killed): their fate is `outcome`,
    logged. Only a host holding the store's lock calls this, before it takes any."""
    with store.write():
        rows = [
            dict(r)
            for r in store.all("SELECT * FROM gm_commands WHERE status = 'taken' ORDER BY id")
        ]
        for row in rows:
            _conclude(store, row, "interrupted", outcome)
    return [row["id"] for row in rows]


def command(store: Store, command_id: int) -> dict:
    row = store.one("SELECT * FROM gm_commands WHERE id = ?", (command_id,))
    if row is None:
        raise NoSuchRecord(f"no command {command_id}")
    out = dict(row)
    out["outcome"] = json.loads(row["outcome"]) if row["outcome"] else None
    return out


def request_problem(
    store: Store,
    note: str | None,
    by: str | None,
    action: str,
    target: str | None,
    reason: str | None,
    args: dict | None = None,
) -> str | None:
    """Why `note` is not a request that `by`, an operator now, signed with their registered
    key for exactly this action on this store, on this store's history (not a copy's);
    None when it is one. A request that names no history (signed by a gmtool from before
    2026-12-02) is no longer carried out."""
    why = request.problem(
        note,
        by,
        role_of(store, by),
        registered_key(store, by),
        log_append.store_id(store),
        action,
        target,
        reason,
        args,
    )
    if why is not None or note is None:
        return why
    size, _ = log_history.now(store)
    why = request.history_problem(note, size, lambda n: log_history.root_at(store, n))
    if why is None and "log" not in request.fields_of(note):
        why = (
            "the request names no history (a gmtool from before 2026-12-02 signed it): "
            "sign it again"
        )
    return why


def actions_by_id(store: Store) -> dict[int, dict]:
    """Every GM action row, by id (the GM log is small: one row per GM action)."""
    return {r["id"]: dict(r) for r in store.all("SELECT * FROM gm_actions")}


def fate_logged(store: Store, command_id: int) -> bool:
    """Whether a GM action already logs the fate of command `command_id`."""
    return store.one(dialect.statement(store, "gm.fate_logged"), (command_id,)) is not None


FATES = ("done", "failed", "expired", "interrupted", "withdrawn")  # a command's status once decided
IN_FLIGHT = ("pending", "taken")  # its status before


def command_states(store: Store) -> list[dict]:
    """Every command's live state (status, acked_at, outcome, gm_action_id), in id order."""
    return [
        dict(r)
        for r in store.all(
            "SELECT id, status, acked_at, outcome, gm_action_id FROM gm_commands ORDER BY id"
        )
    ]


def token_keys(store: Store) -> list[str]:
    """The player-token keys operators registered (`token_key` actions that succeeded),
    as their `ed25519:...` text, oldest first."""
    out = []
    for row in store.all("SELECT outcome FROM gm_actions WHERE action = 'token_key' ORDER BY id"):
        try:
            outcome = json.loads(row["outcome"])
        except (TypeError, ValueError):
            continue
        if isinstance(outcome, dict) and outcome.get("ok") and isinstance(outcome.get("key"), str):
            out.append(outcome["key"])
    return out
