"""A host's GM commands: which it takes, when, and what it says of each (house/host.py's
`Host` is a `CommandDesk`).

The host reads the store's pending commands every `COMMAND_POLL_S` and hands each to its
table once the console's signed word was written after the host first saw the command
(house/lease.py); while one waits for that word it looks again every `WORD_POLL_S`. A
table claims the command in the store (`claim`): a request that does not hold is refused,
a command nobody waits for any more is withdrawn, both logged; a carried-out command's
fate is acknowledged (`acknowledge`) and said in the host's log.

On a store several hosts share (PostgreSQL) a host takes only the commands of the tables
whose lease it holds and leaves the others to their hosts (a command for a table no live
host holds waits for one, or for its console to give up). It listens for the consoles'
announcements (LISTEN, store/console_words.py) in a thread of its own and looks at its
commands as soon as one comes; the poll stays, for an announcement lost with a connection.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from gmtool.errors import Refused, Unavailable
from gmtool.house.lease import wall, withdrawal, word_since
from gmtool.store import gm
from gmtool.store.console_words import Listener
from gmtool.store.db import Store, StoreError, StoreGone
from gmtool.store.gm import failure

if TYPE_CHECKING:
    from gmtool.house.options import HostReport
    from gmtool.house.ownership import Ownership
    from gmtool.house.table import HostedTable

COMMAND_POLL_S = 0.2
WORD_POLL_S = 0.05  # how often the host looks again while a command waits for its word
LISTEN_S = 0.5  # how often the listening thread looks whether the host stops


def command_summary(outcome: dict) -> str:
    """A GM command's outcome in words, for the host's log."""
    if not outcome.get("ok"):
        return f"refused: {outcome.get('error', 'failed')}"
    if "closed" in outcome:
        voided = outcome.get("voided_hand")
        return f"closed{f', hand {voided} voided' if voided else ''}"
    when = "during a hand" if outcome.get("during_hand") else "between hands"
    if outcome.get("hand") and not outcome.get("during_hand"):
        when = f"while hand {outcome['hand']} ran, with nothing at stake in it"
    return f"kicked {outcome.get('kicked')} {when}"


class _NotYet(Exception):
    """The command's console word is from before the host saw it: not claimed, not withdrawn."""


class CommandDesk:
    """The command part of the host (what `Host` has that it uses)."""

    store: Store
    seen: dict[int, float]
    _dispatched: set[int]
    tables: dict[str, HostedTable]
    report: HostReport
    stopping_now: bool
    ownership: Ownership | None
    notify: Callable[[str], None]
    checkpoint_due: Callable[[], None]
    lose_store: Callable[[StoreGone], None]

    def sighted(self, command_id: int, now: float | None = None) -> float:
        """When this host first saw the pending command (`now`, else read now), on the
        clock its console's word is dated by (house/lease.py's `wall`)."""
        if command_id not in self.seen:
            self.seen[command_id] = wall(self.store) if now is None else now
        return self.seen[command_id]

    def ours(self, table_id: str) -> bool:
        """Whether this host carries out the commands of `table_id`: on a shared store only
        while it holds the table's lease (another host's table is left to that host)."""
        return self.ownership is None or table_id in self.ownership.held

    def claim(self, command: dict) -> bool:
        """Take `command` to carry it out: False when its request does not hold (failed)
        or nobody waits for it any more (withdrawn: house/lease.py), both logged, and when
        its console's word is from before this host first saw it (then it is neither: the
        command loop looks again until a newer word or none)."""
        seen = self.sighted(command["id"])
        gone: list[dict] = []

        def withdrawn(row: dict) -> dict | None:
            carry = word_since(self.store, row, seen)
            if carry is False:
                raise _NotYet()
            gone.extend([] if carry else [withdrawal(self.store, row)])
            return gone[0] if gone else None

        try:
            taken = gm.claim(self.store, command["id"], partial(refusal, self.store), withdrawn)
        except _NotYet:
            self._dispatched.discard(command["id"])  # the command loop dispatches it again
            return False
        if gone:
            self.notify(
                f"command {command['id']} ({command['kind']} {command['table_id']}): "
                "withdrawn: the console that sent it is gone"
            )
        return taken

    def acknowledge(self, command: dict, outcome: dict) -> None:
        gm.acknowledge(self.store, command["id"], outcome.get("ok", False), outcome)
        self.report.commands += 1
        self.checkpoint_due()
        self.notify(
            f"command {command['id']} ({command['kind']} {command['table_id']}"
            f"{' ' + command['player'] if command.get('player') else ''}): "
            f"{command_summary(outcome)}"
        )

    async def _poll_commands(self) -> None:
        """Hand each pending command to its table once its console's word was written
        after this host first saw it (or nobody waits: the table's claim withdraws it)."""
        wake = asyncio.Event()
        stop_listening = self._listen(wake)
        try:
            while not self.stopping_now:
                wake.clear()  # (an announcement from here on wakes the next round)
                try:
                    waiting = self._command_round()
                except StoreGone as error:
                    self.lose_store(error)  # the host stops at once
                    return
                pause = WORD_POLL_S if waiting else COMMAND_POLL_S
                if stop_listening is None:
                    await asyncio.sleep(pause)
                    continue
                try:
                    await asyncio.wait_for(wake.wait(), pause)
                except TimeoutError:
                    pass
        finally:
            if stop_listening is not None:
                stop_listening()

    def _command_round(self) -> bool:
        """One look at the pending commands: each of this host's tables' is handed to its
        table, or refused when the table is not hosted here. True when one waits for its
        console's next word."""
        pending = gm.pending_commands(self.store)
        new = [c for c in pending if c["id"] not in self.seen]
        now = wall(self.store) if new else None  # right after reading them, before any word
        for command in new:
            self.sighted(command["id"], now)
        self.seen = {c["id"]: self.seen[c["id"]] for c in pending}
        waiting = False
        for command in pending:
            if command["id"] in self._dispatched:
                continue
            if not self.ours(command["table_id"]):
                continue  # another host's table, or one no live host holds yet
            table = self.tables.get(command["table_id"])
            if table is None or table.closed:
                self._dispatched.add(command["id"])
                self.acknowledge(
                    command,
                    failure(Unavailable(f"table {command['table_id']} is not hosted here")),
                )
                continue
            if word_since(self.store, command, self.seen[command["id"]]) is False:
                waiting = True  # its console's next word, or its word going stale
                continue
            self._dispatched.add(command["id"])
            table.commands.put_nowait(command)
            table.wake.set()
        return waiting

    def _listen(self, wake: asyncio.Event) -> Callable[[], None] | None:
        """On a shared store, a thread that sets `wake` whenever a console announces a
        command: how to stop it (None on SQLite, where the poll alone looks)."""
        if self.ownership is None:
            return None
        loop = asyncio.get_running_loop()
        url = self.store.url  # type: ignore[attr-defined]
        stop = threading.Event()

        def said(message: str) -> None:
            try:
                loop.call_soon_threadsafe(self.notify, message)
            except RuntimeError:
                pass  # the host's loop is closed: it stopped

        def listen() -> None:
            try:
                listener = Listener(url)
            except StoreError as error:
                said(f"{error}: GM commands are looked for every {COMMAND_POLL_S:g} s")
                return
            try:
                while not stop.is_set():
                    if listener.wait(LISTEN_S):
                        loop.call_soon_threadsafe(wake.set)
            except StoreError as error:
                said(f"{error}: GM commands are looked for every {COMMAND_POLL_S:g} s")
            except RuntimeError:
                pass  # the host's loop is closed: it stopped
            finally:
                listener.close()

        threading.Thread(target=listen, name="gmtool-commands", daemon=True).start()
        return stop.set


def refusal(store: Store, command: dict) -> dict | None:
    """The host's check before it claims a command: its signed request must hold for an
    operator's registered key and ask for exactly this command; else the refusal."""
    why = gm.request_problem(
        store,
        command["request"],
        command["issued_by"],
        command["kind"],
        gm.command_target(command),
        command["reason"],
        {},
    )
    return None if why is None else {**failure(Refused(f"refused: {why}")), "refused": why}
