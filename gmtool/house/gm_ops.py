"""GM actions with roles: who may do what, and a log entry for every attempt.

Roles (issue: GM console): support may read, replay and audit; only operators may kick,
close tables, adjust coins, deploy and roll back, and manage GM users. Reading needs no
role (whoever can open the database file can read it; file permissions guard that).
Bootstrap: while no operator exists, the first `gm users add NAME --role operator` is
allowed to anyone; after that every privileged action needs an operator, and a refusal
is itself logged.
"""

from __future__ import annotations

import time

from gmtool.store import gm, ledger
from gmtool.store.db import Store

PRIVILEGED = {"kick", "close", "adjust", "deploy", "rollback", "users_add"}


class Refused(Exception):
    """The acting user may not do this; the refusal was logged."""


def _has_operator(store: Store) -> bool:
    return store.one("SELECT 1 FROM gm_users WHERE role = 'operator' LIMIT 1") is not None


def authorize(store: Store, actor: str | None, action: str, target: str | None,
              reason: str | None = None) -> None:
    """Raise Refused (after logging the refusal) unless `actor` may perform `action`."""
    if action not in PRIVILEGED:
        return
    role = gm.role_of(store, actor)
    if role == "operator":
        return
    if action == "users_add" and not _has_operator(store):
        return  # bootstrap: the first operator
    if action in ("deploy", "rollback") and not _has_operator(store):
        return  # no GM users yet: a fresh store is set up by whoever holds the file
    why = (f"{actor!r} is {role}" if role else f"{actor!r} is not a GM user") + \
        f"; only operators may {action.replace('_', ' ')}"
    with store.write():
        gm.log_action(store, actor, action, target, reason, {"ok": False, "refused": why})
    raise Refused(f"refused: {why} (logged)")


def log(store: Store, actor: str | None, action: str, target: str | None,
        reason: str | None, outcome: dict) -> int:
    with store.write():
        return gm.log_action(store, actor, action, target, reason, outcome)


def add_user(store: Store, actor: str | None, name: str, role: str) -> None:
    authorize(store, actor, "users_add", name)
    gm.add_user(store, name, role)
    log(store, actor, "users_add", name, None, {"ok": True, "role": role})


def adjust(store: Store, actor: str | None, player: str, delta: int, reason: str) -> dict:
    """A GM coin adjustment: one ledger row tied to the GM action that made it."""
    authorize(store, actor, "adjust", player, reason)
    with store.write(durable=True):
        row = store.one("SELECT coins FROM players WHERE name = ?", (player,))
        if row is None:
            outcome = {"ok": False, "error": f"no player {player!r}"}
        elif row["coins"] + delta < 0:
            outcome = {"ok": False, "error": f"{player} holds {row['coins']}; an adjustment of "
                       f"{delta} would make it negative"}
        else:
            outcome = {"ok": True, "coins_before": row["coins"], "coins": row["coins"] + delta}
        action_id = gm.log_action(store, actor, "adjust", player, reason,
                                  {**outcome, "delta": delta})
        if outcome["ok"]:
            ledger.post(store, [(player, delta, "gm_adjust")], gm_action_id=action_id)
    return outcome


def send_command(store: Store, actor: str | None, kind: str, table_id: str,
                 player: str | None, reason: str | None, timeout: float = 10.0) -> dict:
    """Queue a kick/close for the host, wait for its acknowledgement, log the outcome."""
    authorize(store, actor, kind, f"{table_id}/{player}" if player else table_id, reason)
    if store.one("SELECT 1 FROM tables WHERE id = ?", (table_id,)) is None:
        outcome = {"ok": False, "error": f"no table {table_id!r}"}
        log(store, actor, kind, table_id, reason, outcome)
        return outcome
    command_id = gm.enqueue(store, kind, table_id, player, reason, actor)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        current = gm.command(store, command_id)
        if current["status"] != "pending":
            outcome = current["outcome"] or {"ok": current["status"] == "done"}
            break
        time.sleep(0.05)
    else:
        with store.write():
            store.conn.execute("UPDATE gm_commands SET status = 'expired' WHERE id = ? AND "
                               "status = 'pending'", (command_id,))
        outcome = {"ok": False, "error": f"no host acknowledged within {timeout:g} s (is "
                   f"`gmtool house run` hosting {table_id}?); the command was withdrawn"}
    target = f"{table_id}/{player}" if player else table_id
    outcome = {**outcome, "command": command_id}
    log(store, actor, kind, target, reason, outcome)
    return outcome
