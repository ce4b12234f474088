"""Which tables this host plays, on a store several hosts share (PostgreSQL): the table
leases of store/table_leases.py, taken, renewed, checked and given up.

A host plays a table only while it holds the table's lease. It takes the lease before it
opens the table (a table another live host holds is passed over, as a closed one is),
renews all of its leases at every heartbeat, and releases them when it stops, after its
hands have ended. Every write of a table's events checks the lease in its own transaction
(the fence, `hand_store.TableLog`), so a host held up past its lease's expiry cannot write
over the host that took the table over. A host that dies stops renewing; once its leases
expire, every live host looks for such tables at each heartbeat and takes them over
(`orphans`), voiding the hand that was running, every stake returned, as crash recovery
does at a restart.

A SQLite store has one host (its lock file, house/lock.py): it takes no lease.
"""

from __future__ import annotations

import os
import secrets
import socket

from gmtool.store import table_leases
from gmtool.store import tables as table_store
from gmtool.store.db import Store
from gmtool.store.table_leases import Lease

LEASE_S = 10.0  # a table's lease: renewed every heartbeat, taken over once this has passed


def host_name() -> str:
    """This host process, as its leases name it: machine, process id and a random part (a
    process id is reused after a restart; the lease must tell the two apart)."""
    return f"{socket.gethostname()}/{os.getpid()}/{secrets.token_hex(3)}"


class Ownership:
    """The leases one host holds, by table."""

    def __init__(self, store: Store, ttl: float = LEASE_S, name: str | None = None) -> None:
        self.store = store
        self.ttl = ttl
        self.name = name or host_name()
        self.held: dict[str, Lease] = {}

    def take(self, table_id: str) -> Lease | None:
        """The table's lease for this host (None: another live host holds it)."""
        lease = table_leases.take(self.store, table_id, self.name, self.ttl)
        if lease is not None:
            self.held[table_id] = lease
        return lease

    def renew(self) -> list[str]:
        """Renew every lease held: the tables whose lease was lost (taken over by another
        host while this one was held up), which this host must stop playing at once."""
        renewed, lost = table_leases.renew(self.store, list(self.held.values()), self.ttl)
        for lease in renewed:
            self.held[lease.table_id] = lease
        for lease in lost:
            self.held.pop(lease.table_id, None)
        return [lease.table_id for lease in lost]

    def orphans(self) -> list[str]:
        """Tables whose host stopped renewing (its lease expired, never released) and that
        a GM has not closed: the tables this host may take over."""
        now = self.store.clock.wall()
        closed = table_store.closed_ids(self.store)
        return [
            lease.table_id
            for lease in table_leases.leases(self.store)
            if lease.host != self.name and lease.expires <= now and lease.table_id not in closed
        ]

    def release(self, table_id: str) -> None:
        lease = self.held.pop(table_id, None)
        if lease is not None:
            table_leases.release(self.store, lease)

    def release_all(self) -> None:
        for table_id in list(self.held):
            self.release(table_id)
