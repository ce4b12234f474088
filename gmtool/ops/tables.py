"""GM commands to tables: kick and close through the host, reopening by the console.

A kick or close goes to the host that runs the table (it voids a running hand, or makes a
kick an escape): the console queues it with the GM's signed request, holds its lease
while it waits (house/lease.py: a host carries out nothing nobody waits for) and reports
its fate. On a store several hosts share (PostgreSQL) the host that holds the table's
lease carries it out; the console announces the command (NOTIFY) so that host looks at
once. A closed table has no host and no hand, so `gmtool tables open` needs none: the
operator's signed request, the table made hostable again (the next host start hosts it)
and the GM action that logs it are one transaction, checked by `gmtool audit` like every
signed GM action.
"""

from __future__ import annotations

import time
from pathlib import Path

from gmtool.errors import GmtoolError, NotFound, Refused, Unavailable
from gmtool.evidence.request import Gm
from gmtool.house.lease import ConsoleLease
from gmtool.house.lock import STALE_S, host_running, seconds_since
from gmtool.ops.gm import authorize, log, plain_name, signed_here, text
from gmtool.store import console_words, gm, table_leases
from gmtool.store import tables as table_store
from gmtool.store.db import Store, StoreError
from gmtool.store.gm import failure


class CommandFailed(GmtoolError):
    """The host carried out no part of a GM command; its recorded outcome says why."""

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def reopen(store: Store, actor: Gm, table_id: str, reason: str | None = None) -> dict:
    """Reopen closed table `table_id` (operators): `opened`, or `not_closed` (its status)
    when there was nothing to reopen (then nothing is logged)."""
    reason = text(reason, "the reason", required=False)
    request = authorize(store, actor, "open", table_id, reason)
    error: GmtoolError | None = None
    with store.write(durable=True):
        request = signed_here(store, actor, request)  # bound to the log as it is now
        state = table_store.status(store, table_id)
        if state is None:
            error = NotFound(f"no table {table_id!r} (see `gmtool tables list --closed`)")
            gm.log_action(store, actor.name, "open", table_id, reason, failure(error), request)
        elif state["status"] != "closed":
            return {"ok": True, "not_closed": state["status"], "table": table_id}
        else:
            table_store.reopen_table(store, table_id)
            outcome = {"ok": True, "opened": table_id}
            gm.log_action(store, actor.name, "open", table_id, reason, outcome, request)
    if error is not None:
        raise error  # logged above, with the request
    return outcome


POLL_S = 0.05  # how often the console looks for the host's answer

INTERRUPTED = (
    "withdrawn: the console was interrupted (Ctrl-C) before a host took it, so it is not "
    "carried out; send it again if it is still wanted"
)


def send_command(
    store: Store,
    actor: Gm,
    kind: str,
    table_id: str,
    player: str | None,
    reason: str | None,
    timeout: float = 10.0,
    wait: bool = False,
) -> dict:
    """Queue a kick/close for the host (its signed request logged), wait for its fate.

    Returns the host's outcome; raises (after logging) when there is no such table, no
    host runs it (unless `wait`: then a host has `timeout` seconds to start and take it),
    no host answered in time, or the host refused or could not carry out the command. A
    close of a table already closed is answered at once (`already_closed`), unsent.
    While it waits the console holds the command's lease (house/lease.py): interrupted
    (Ctrl-C) it withdraws the command; killed, the host finds the lease free and does.
    It renews its word there every `REFRESH_S` (a host carries the command out only on
    a word written after it first saw it).
    """
    reason = text(reason, "the reason", required=kind == "kick")
    queued = _queue(store, actor, kind, table_id, player, reason, wait)
    if queued is None:
        return _already_closed(store, table_id)
    command_id, lease = queued
    try:
        deadline = time.monotonic() + timeout
        while (outcome := _answer(store, command_id)) is None and time.monotonic() < deadline:
            lease.renew()
            time.sleep(POLL_S)
        return _conclude(store, table_id, command_id, timeout, outcome)
    except KeyboardInterrupt:
        _interrupted(store, command_id)
        raise
    finally:
        lease.release()


async def send_command_async(
    store: Store,
    actor: Gm,
    kind: str,
    table_id: str,
    player: str | None,
    reason: str | None,
    timeout: float = 10.0,
    wait: bool = False,
) -> dict:
    """`send_command` for a caller on the host's own event loop (in-process tests and
    simulations): it waits with asyncio, so the host runs meanwhile."""
    import asyncio

    loop = asyncio.get_running_loop()
    reason = text(reason, "the reason", required=kind == "kick")
    queued = _queue(store, actor, kind, table_id, player, reason, wait)
    if queued is None:
        return _already_closed(store, table_id)
    command_id, lease = queued
    try:
        deadline = loop.time() + timeout
        while (outcome := _answer(store, command_id)) is None and loop.time() < deadline:
            lease.renew(loop.time())  # paced by this loop's time (a virtual one jumps)
            await asyncio.sleep(POLL_S)
        return _conclude(store, table_id, command_id, timeout, outcome)
    finally:
        lease.release()


def _interrupted(store: Store, command_id: int) -> None:
    """Ctrl-C while waiting: withdraw the command (logged) unless a host took it first,
    and say which (exit 130, as every interrupted command)."""
    if gm.withdraw(store, command_id, {**failure(Unavailable(INTERRUPTED)), "withdrawn": True}):
        raise CommandFailed(
            f"interrupted: command {command_id} was withdrawn (logged in `gmtool gm log`); "
            "it will not be carried out",
            130,
        ) from None
    status = gm.command(store, command_id)["status"]
    if status in ("expired", "withdrawn"):  # withdrawn as the interrupt came
        raise CommandFailed(
            f"interrupted: command {command_id} was withdrawn (logged in `gmtool gm log`); "
            "it will not be carried out",
            130,
        ) from None
    raise CommandFailed(
        f"interrupted: a host had already taken command {command_id} ({status}); what "
        "came of it is in `gmtool gm log`",
        130,
    ) from None


def _queue(
    store: Store,
    actor: Gm,
    kind: str,
    table_id: str,
    player: str | None,
    reason: str | None,
    wait: bool = False,
) -> tuple[int, ConsoleLease] | None:
    """The queued command's id and the lease the console holds on it; None, with nothing
    queued or logged, for a close of a table a GM closed already (no host hosts it, and
    there is nothing left to do). Unless `wait`, a table no host runs is refused at once,
    logged."""
    table_id = plain_name(table_id, "the table")
    player = plain_name(player, "the player") if player is not None else None
    target = f"{table_id}/{player}" if player else table_id
    request = authorize(store, actor, kind, target, reason)
    state = table_store.status(store, table_id)
    error: GmtoolError | None = None
    if state is None:
        error = NotFound(f"no table {table_id!r} (see `gmtool tables list`)")
    elif kind == "close" and state["status"] == "closed":
        return None
    elif state["status"] == "closed":
        error = Unavailable(
            f"{table_id} is closed (a GM closed it): nobody sits there and no host hosts it; "
            f"`gmtool tables open {table_id}` reopens it for the next host start"
        )
    elif not wait and (idle := _not_hosted(store, state, table_id)):
        error = Unavailable(
            f"no host runs {table_id} ({idle}): nothing was sent. Start `gmtool house run` "
            f"on this store and send it again, or add --wait to let a host that starts "
            "within --timeout seconds carry it out"
        )
    if error is not None:
        log(store, actor.name, kind, target, reason, failure(error), request)
        raise error
    if request is None or actor.signer is None:  # kick and close are privileged: signed
        raise Refused(f"{kind} needs a GM's signed request")
    lease = ConsoleLease(store, request, actor.signer).acquire()
    try:
        command_id = gm.enqueue(store, kind, table_id, player, reason, actor.name, request)
    except BaseException:
        lease.release()
        raise
    if getattr(store, "is_postgres", False):
        try:
            console_words.announce(store, table_id)
        except StoreError:
            pass  # the hosts' poll finds it
    return command_id, lease


def _not_hosted(store: Store, state: dict, table_id: str) -> str | None:
    """Why no host runs a table in `state` now (None when one may): the table is not
    hosted, the store's host lock is free (on PostgreSQL: no live host holds the table's
    lease), or its host stopped saying it is alive."""
    if state["status"] != "open":
        return f"it is {state['status']}"
    if getattr(store, "is_postgres", False):
        lease = table_leases.holder(store, table_id)
        if lease is None or lease.expires <= store.clock.wall():
            return "no live `gmtool house run` holds its lease"
    elif host_running(Path(store.path)) is False:
        return "no `gmtool house run` holds this store"
    age = seconds_since(state.get("updated_at"), store.clock.wall())
    if age is not None and age > STALE_S:  # no heartbeat yet: a host is just starting
        return "its host stopped saying it is alive"
    return None


def _already_closed(store: Store, table_id: str) -> dict:
    state = table_store.status(store, table_id) or {}
    return {"ok": True, "closed": table_id, "already_closed": state.get("closed_at") or True}


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
    return failure(
        Unavailable(
            f"the host took command {command_id} but has not said what "
            "came of it (it may have stopped); see `gmtool tables show` "
            "and the GM log before sending it again"
        )
    )


def _conclude(
    store: Store, table_id: str, command_id: int, timeout: float, outcome: dict | None
) -> dict:
    """The command's fate as the GM is told it; whoever decided it (the host, or the
    console withdrawing it here) logged it with the command."""
    if outcome is None:
        withdrawn = failure(
            Unavailable(
                f"no host acknowledged within {timeout:g} s (is `gmtool house run` hosting "
                f"{table_id}?); the command was withdrawn: it will not be carried out"
            )
        )
        outcome = (
            withdrawn
            if gm.expire(store, command_id, withdrawn)
            else _answer_of_taken(store, command_id, timeout)
        )  # a host took it as we gave up
    outcome = {**outcome, "command": command_id}
    if not outcome.get("ok"):
        raise CommandFailed(str(outcome.get("error", outcome)), outcome.get("exit_code", 2))
    return outcome
