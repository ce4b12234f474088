"""A host's part in a store several hosts share (PostgreSQL): taking a table before it
plays it, keeping it, giving it up, and taking over the tables of a host that died
(house/host.py's `Host` is a `TakeoverDesk`; the leases themselves: house/ownership.py).

On such a store a host's start voids no hand but those of the tables it takes: another
host may be playing the rest. A table is taken (its lease, then its unfinished hand
voided under that lease, every stake returned) before the host opens it; a table that
another live host holds is passed over, as a closed one is. At every heartbeat the host
renews its leases, stops playing any table it lost, and takes over every table whose
host stopped renewing, voiding the hand that was running there.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from typing import TYPE_CHECKING

from gmtool.house.ownership import NOTARY, Ownership
from gmtool.house.recovery import void_unfinished
from gmtool.store import tables as table_store
from gmtool.store.db import Store, StoreError

if TYPE_CHECKING:
    from gmtool.house.options import HostOptions, HostReport
    from gmtool.house.table import HostedTable


class TakeoverDesk:
    """The lease part of the host (what `Host` has that it uses)."""

    store: Store
    options: HostOptions
    report: HostReport
    tables: dict[str, HostedTable]
    tasks: dict[str, asyncio.Task]
    ownership: Ownership | None
    stopping: bool
    notify: Callable[[str], None]
    _numbers: dict[str, int]
    open_table: Callable[[str, str, str, str], HostedTable]  # Host's: opened, fenced
    play: Callable[[HostedTable], None]  # Host's: its loop started

    def take_table(self, table_id: str) -> bool:
        """Take the table's lease (always granted on a store with one host): its hand left
        running by a host that died is voided under the new lease. False: another live
        host holds it."""
        if self.ownership is None:
            return True
        lease = self.ownership.take(table_id)
        if lease is None:
            return False
        self._numbers.pop(table_id, None)  # its numbers go on from the store's
        voided = void_unfinished(
            self.store, self.options.seed, self.notify, self.options.verbose, table_id, lease
        )
        self.report.recovered.extend(voided)
        if lease.taken_from is not None:
            gone = f"; hand {', '.join(map(str, voided))} voided, stakes returned" if voided else ""
            self.notify(
                f"took table {table_id} over from host {lease.taken_from}, which stopped "
                f"renewing its lease{gone}"
            )
        return True

    def fence(self, table: HostedTable) -> None:
        """Every write of the table's events checks, in its transaction, that this host
        still holds the table (a host held up past its lease writes nothing more)."""
        if self.ownership is not None:
            table.recorder.log.lease = self.ownership.held[table.id]

    @property
    def signs(self) -> bool:
        """Whether this host signs checkpoints: the store's one host, or the notary of a
        store several hosts share (whose lease it renews with its tables')."""
        return self.ownership is None or NOTARY in self.ownership.held

    def keep_tables(self) -> None:
        """At a heartbeat: renew the leases, stop playing any table lost, take over the
        tables of hosts that died, and the notary's part if its host died."""
        if self.ownership is None:
            return
        lost = self.ownership.renew()
        if not self.stopping and not self.signs and self.ownership.lead():
            self.notify("signing this store's checkpoints now (its notary stopped renewing)")
        for table_id in lost:
            table = self.tables.get(table_id)
            if table is not None and not table.closed:
                table.closed = True
                table.wake.set()
                self.notify(f"table {table_id}: another host took it over; not playing it")
        if self.stopping:
            return
        for table_id in self.ownership.orphans():
            self._take_over(table_id)

    def _take_over(self, table_id: str) -> None:
        described = table_store.described(self.store, table_id)
        if described is None or not self.take_table(table_id):
            return
        try:
            table = self.open_table(table_id, *described)
        except StoreError as error:  # its room is no longer deployed, say
            assert self.ownership is not None
            self.ownership.release(table_id)
            self.notify(f"table {table_id}: not taken over ({error})")
            return
        self.report.tables.append(table_id)
        self.play(table)

    def release_tables(self) -> None:
        """The host stopped, its hands ended: its tables are free for the next host."""
        if self.ownership is not None:
            self.ownership.release_all()


def table_rng(seed: str | None, table_id: str, rng: random.Random) -> random.Random:
    """A table's bots' and owner draws' randomness: reproducible under `--seed`."""
    return random.Random(f"{seed}:{table_id}" if seed else rng.random())
