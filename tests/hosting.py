"""A real host, in this process, on virtual time: what the host tests drive.

`VirtualHost` runs the same `Host` that `gmtool house run` runs, on a real SQLite file,
with the same bots, recorder and GM command queue; only its event loop is virtual
(gmtool/house/virtual_time.py): time jumps to the next timer whenever every task waits. A test
runs it a step at a time (`run_until` an event, `advance` some game seconds) and, between
steps, the host is still: the console (a real subprocess) reads the store at rest. So a
test waits for events, never for wall-clock seconds, and a busy machine only makes it
slower.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from helpers import gm_identity

from gmtool.house.host import HostOptions, HostReport, prepare_host
from gmtool.house.lock import HostLock
from gmtool.house.virtual_time import Stepper
from gmtool.ops.tables import send_command_async
from gmtool.store import tables as table_store
from gmtool.store.db import Store, connect, open_location
from gmtool.store.url import locate

# Start the virtual clock at a fixed moment, so runs with the same seed store the same rows.
# It lies far ahead of any real date, so a console reading the store on the real clock sees
# the host's heartbeat as fresh (never "gone") and its deadlines as still to come, whatever
# day the tests run on.
VIRTUAL_EPOCH = 4_102_444_800.0  # 2100-01-01


class _NoLock:
    """A PostgreSQL store's host holds no file lock (its tables are leased)."""

    def release(self) -> None:
        pass


class VirtualHost:
    """`gmtool house run` in-process on virtual time (see the module's docstring)."""

    def __init__(
        self,
        db: Path | str,
        options: HostOptions,
        plan: list[tuple[str, str, str]] | None = None,
        wall_start: float = VIRTUAL_EPOCH,
        home: Path | None = None,
    ) -> None:
        """`db`: a SQLite file (the host holds `<db>.host.lock`, as `house run` does), or
        a PostgreSQL URL with the host's `home` folder (its tables leased, no file lock)."""
        shared = locate(str(db)).is_postgres
        self.lock = _NoLock() if shared else HostLock(Path(db)).acquire()
        try:
            self.stepper = Stepper(wall_start)
            self.clock = self.stepper.clock
            self.messages: list[str] = []
            if shared:
                assert home is not None, "a host of a PostgreSQL store needs its home"
                self.store: Store = open_location(
                    str(db), write=True, clock=self.clock, postgres=True
                )
                self.store.at_home(home)  # type: ignore[attr-defined]
            else:
                self.store = connect(Path(db), clock=self.clock)
            self.host = prepare_host(
                self.store, options, notify=self.messages.append, plan=plan, clock=self.clock
            )
        except BaseException:
            self.lock.release()  # a refused start, as `house run`'s
            raise
        self.task = self.stepper.start(self.host.run(signals=False))  # Ctrl-C stops pytest
        self.report: HostReport | None = None
        self.closed = False

    # -- driving ------------------------------------------------------------------------

    def run_until(
        self, predicate: Callable[[], Any], within: float = 3600.0, what: str = "the condition"
    ) -> Any:
        """Play until `predicate()` is truthy (checked every 0.05 virtual s); its value."""
        if self.task.done():
            self.task.result()  # the host stopped (or failed): say so
            raise AssertionError(f"the host has stopped; still waiting for {what}")
        return self.stepper.run_until(predicate, within=within, what=what)

    def advance(self, seconds: float) -> None:
        """Let `seconds` of game time pass (at speed 1: virtual seconds)."""
        self.stepper.advance(seconds / self.host.speed)

    def now(self) -> float:
        return self.clock.monotonic()

    def command(
        self,
        actor: str,
        kind: str,
        table_id: str,
        player: str | None = None,
        reason: str | None = None,
        timeout: float = 10.0,
    ) -> dict:
        """A GM command as the console sends it (queued, acknowledged by the host, logged);
        the host plays meanwhile. The outcome, or the console's exception."""
        return self.stepper.run(
            send_command_async(
                self.store, gm_identity(actor), kind, table_id, player, reason, timeout
            )
        )

    def stop(self) -> HostReport:
        """The host's clean stop (as SIGTERM does): running hands finish or are voided."""
        if self.report is None:
            self.host.request_stop()
            self.report = self.stepper.run(self.task)
            self.lock.release()  # as `house run` does when its host has stopped
        return self.report

    def close(self) -> None:
        """Stop if still running, then close the store and the loop (again: nothing)."""
        if self.closed:
            return
        self.closed = True
        try:
            if not self.task.done():
                self.stop()
        finally:
            self.store.close()
            self.stepper.close()
            self.lock.release()

    def __enter__(self) -> VirtualHost:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- what tests look for ---------------------------------------------------------------

    def running_players(
        self, profile: str | None = None, coins_only: bool = False
    ) -> list[tuple[str, str]]:
        """(table, player) for every player still in a running hand, from the snapshots
        the host publishes (what `tables list` shows)."""
        return running_players(self.store, profile, coins_only)


def running_players(
    store: Store, profile: str | None = None, coins_only: bool = False
) -> list[tuple[str, str]]:
    out = []
    for row in table_store.list_tables(store):
        if profile and row["profile_id"] != profile:
            continue
        if coins_only and row["tier"] == "training":
            continue
        running = (row["live"] or {}).get("running")
        if not running or running.get("over"):
            continue
        seated = row["live"].get("seated", [])
        players = [p["name"] for p in running["players"] if not p["folded"]]
        if len(players) >= 2 and all(p in seated for p in players):
            out.extend((row["id"], p) for p in players)
    return out


def hand_events(store: Store, hand_id: int) -> list[tuple[str, dict]]:
    return [
        (r["type"], json.loads(r["payload"]))
        for r in store.all(
            "SELECT type, payload FROM events WHERE hand_id = ? ORDER BY seq", (hand_id,)
        )
    ]
