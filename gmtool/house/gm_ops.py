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

from gmtool.bounds import MAX_BALANCE
from gmtool.errors import GmtoolError, NotFound, Refused, Unavailable, UsageError
from gmtool.store import gm, ledger
from gmtool.store import hands as hand_store
from gmtool.store import tables as table_store
from gmtool.store.db import Store

PRIVILEGED = {"kick", "close", "adjust", "deploy", "rollback", "users_add"}


class CommandFailed(GmtoolError):
    """The host carried out no part of a GM command; its recorded outcome says why."""

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def failure(error: GmtoolError) -> dict:
    """The recorded outcome of a command the host refused or could not carry out."""
    return {"ok": False, "error": str(error), "exit_code": error.exit_code}


def authorize(store: Store, actor: str | None, action: str, target: str | None,
              reason: str | None = None) -> None:
    """Raise Refused (after logging the refusal) unless `actor` may perform `action`."""
    if action not in PRIVILEGED:
        return
    role = gm.role_of(store, actor)
    if role == "operator":
        return
    if action == "users_add" and not gm.has_operator(store):
        return  # bootstrap: the first operator
    if action in ("deploy", "rollback") and not gm.has_operator(store):
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


MAX_TEXT = 500  # the longest name or reason a GM may give


def text(value: str | None, what: str, required: bool = True) -> str | None:
    """A GM user name or a reason as the log will keep it: not blank (when `required`), no
    control characters, at most MAX_TEXT characters. UsageError otherwise."""
    if value is None or not value.strip():
        if required:
            raise UsageError(f"{what} may not be empty")
        return None
    if any(ord(c) < 32 or 127 <= ord(c) < 160 for c in value):
        raise UsageError(f"{what} {value!r} contains control characters")
    if len(value) > MAX_TEXT:
        raise UsageError(f"{what} is {len(value)} characters long; at most {MAX_TEXT}")
    return value.strip()


def add_user(store: Store, actor: str | None, name: str, role: str) -> None:
    name = text(name, "a GM user name")
    authorize(store, actor, "users_add", name)
    try:
        gm.add_user(store, name, role)
    except Refused as refused:
        log(store, actor, "users_add", name, None, {**failure(refused), "role": role})
        raise
    log(store, actor, "users_add", name, None, {"ok": True, "role": role})


def adjust(store: Store, actor: str | None, player: str, delta: int, reason: str) -> dict:
    """A GM coin adjustment: one ledger row tied to the GM action that made it.

    A balance is never negative, now or when a hand settles: a deduction from a player
    seated in a running hand must leave them at least the coins they brought to it (the
    most that hand can take, D-9); deduct after the hand ends. Balances stay within
    MAX_BALANCE.
    """
    reason = text(reason, "the reason")
    if delta == 0:
        raise UsageError("an adjustment of 0 changes nothing")
    authorize(store, actor, "adjust", player, reason)
    error: GmtoolError | None = None
    with store.write(durable=True):
        held = ledger.coins_or_none(store, player)
        stake = hand_store.at_stake(store, player) if held is not None else None
        if held is None:
            error = NotFound(f"no player {player!r}")
        elif held + delta < 0:
            error = Refused(f"{player} holds {held}; an adjustment of {delta} would make it "
                            "negative")
        elif delta < 0 and stake and held + delta < stake[1]:
            error = Refused(f"{player} is in running hand {stake[0]} and could lose up to "
                            f"{stake[1]} there; a deduction of {-delta} could leave a negative "
                            "balance when it settles: deduct after the hand ends")
        elif held + delta > MAX_BALANCE:
            error = Refused(f"{player} would hold {held + delta}, above the most a player may "
                            f"hold ({MAX_BALANCE})")
        outcome = failure(error) if error else {"ok": True, "coins_before": held,
                                                "coins": held + delta}
        action_id = gm.log_action(store, actor, "adjust", player, reason,
                                  {**outcome, "delta": delta})
        if error is None:
            ledger.post(store, [(player, delta, "gm_adjust")], gm_action_id=action_id)
    if error is not None:
        raise error  # logged above, with the refusal
    return outcome


POLL_S = 0.05  # how often the console looks for the host's answer


def send_command(store: Store, actor: str | None, kind: str, table_id: str,
                 player: str | None, reason: str | None, timeout: float = 10.0) -> dict:
    """Queue a kick/close for the host, wait for its acknowledgement, log the outcome.

    Returns the host's outcome; raises (after logging) when there is no such table, no
    host answered in time, or the host refused or could not carry out the command.
    """
    reason = text(reason, "the reason", required=kind == "kick")
    command_id = _queue(store, actor, kind, table_id, player, reason)
    deadline = time.monotonic() + timeout
    while (outcome := _answer(store, command_id)) is None and time.monotonic() < deadline:
        time.sleep(POLL_S)
    return _conclude(store, actor, kind, table_id, player, reason, command_id, timeout, outcome)


async def send_command_async(store: Store, actor: str | None, kind: str, table_id: str,
                             player: str | None, reason: str | None,
                             timeout: float = 10.0) -> dict:
    """`send_command` for a caller on the host's own event loop (in-process tests and
    simulations): it waits with asyncio, so the host runs meanwhile."""
    import asyncio

    loop = asyncio.get_running_loop()
    reason = text(reason, "the reason", required=kind == "kick")
    command_id = _queue(store, actor, kind, table_id, player, reason)
    deadline = loop.time() + timeout
    while (outcome := _answer(store, command_id)) is None and loop.time() < deadline:
        await asyncio.sleep(POLL_S)
    return _conclude(store, actor, kind, table_id, player, reason, command_id, timeout, outcome)


def _queue(store: Store, actor: str | None, kind: str, table_id: str, player: str | None,
           reason: str | None) -> int:
    authorize(store, actor, kind, f"{table_id}/{player}" if player else table_id, reason)
    if not table_store.exists(store, table_id):
        error = NotFound(f"no table {table_id!r} (see `gmtool tables list`)")
        log(store, actor, kind, table_id, reason, failure(error))
        raise error
    return gm.enqueue(store, kind, table_id, player, reason, actor)


def _answer(store: Store, command_id: int) -> dict | None:
    """The host's recorded outcome, or None while the command is pending."""
    current = gm.command(store, command_id)
    if current["status"] in ("pending", "taken"):
        return None
    return current["outcome"] or {"ok": current["status"] == "done"}


def _answer_of_taken(store: Store, command_id: int, timeout: float) -> dict:
    """The outcome of a command a host has taken: it answers in the same step it acts,
    so wait for that (up to `timeout` more); a host that died meanwhile leaves it unknown."""
    deadline = time.monotonic() + timeout
    while (outcome := _answer(store, command_id)) is None and time.monotonic() < deadline:
        time.sleep(POLL_S)
    if outcome is not None:
        return outcome
    return failure(Unavailable(f"the host took command {command_id} but has not said what "
                               "came of it (it may have stopped); see `gmtool tables show` "
                               "and the GM log before sending it again"))


def _conclude(store: Store, actor: str | None, kind: str, table_id: str, player: str | None,
              reason: str | None, command_id: int, timeout: float,
              outcome: dict | None) -> dict:
    if outcome is None and gm.expire(store, command_id):
        outcome = failure(Unavailable(
            f"no host acknowledged within {timeout:g} s (is `gmtool house run` hosting "
            f"{table_id}?); the command was withdrawn: it will not be carried out"))
    elif outcome is None:  # a host took it as the console gave up: its answer decides
        outcome = _answer_of_taken(store, command_id, timeout)
    target = f"{table_id}/{player}" if player else table_id
    outcome = {**outcome, "command": command_id}
    log(store, actor, kind, target, reason, outcome)
    if not outcome.get("ok"):
        raise CommandFailed(str(outcome.get("error", outcome)), outcome.get("exit_code", 2))
    return outcome
