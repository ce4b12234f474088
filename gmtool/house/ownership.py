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

Each host seats bots of its own: it holds a lease for each bot it enrolled (`BOT` and
the bot's name), so no bot is seated at two hosts' tables at once. One of the hosts is
the store's notary, the one that signs checkpoints of its one log: it
holds the lease named `NOTARY` (taken at a start if free, taken over like a table's).

A host with a player gateway publishes the address players reach it at
(store/host_addresses.py), renewed with its leases and removed with them when it stops,
so the lobby of every host tells which host serves each table and where (`publish`).

A SQLite store has one host (its lock file, house/lock.py): it takes no lease and
publishes no address.
"""

from __future__ import annotations

import os
import secrets
import socket

from gmtool.store import host_addresses, table_leases
from gmtool.store import tables as table_store
from gmtool.store.db import Store
from gmtool.store.table_leases import Lease

LEASE_S = 10.0  # a table's lease: renewed every heartbeat, taken over once this has passed
NOTARY = "~notary"  # the lease of the one host that signs checkpoints (no table id has "~")
BOT = "~bot:"  # a bot's lease: the host that seats it (`take_bot`)


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
        self.address: str | None = None  # where players reach this host (`publish`)

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
        if self.address is not None:
            host_addresses.publish(self.store, self.name, self.address, self.ttl)
        for lease in renewed:
            self.held[lease.table_id] = lease
        for lease in lost:
            self.held.pop(lease.table_id, None)
        return [lease.table_id for lease in lost]

    def publish(self, address: str) -> None:
        """Players reach this host's gateway at `address`: published now, renewed with
        the leases (`renew`), removed when the host stops (`release_all`)."""
        self.address = address
        host_addresses.publish(self.store, self.name, address, self.ttl)

    def lead(self) -> bool:
        """Whether this host is the store's notary: it holds the notary's lease, taken now
        if free (at a start, or once a dead notary's lease expired)."""
        return NOTARY in self.held or self.take(NOTARY) is not None

    def take_bot(self, name: str) -> bool:
        """Whether this host may seat bot `name`: it holds the bot's lease (one host's
        bots are never another's, so a bot never sits at two hosts' tables)."""
        return self.take(f"{BOT}{name}") is not None

    def orphans(self) -> list[str]:
        """Tables whose host stopped renewing (its lease expired, never released) and that
        a GM has not closed: the tables this host may take over."""
        now = self.store.clock.wall()
        closed = table_store.closed_ids(self.store)
        return [
            lease.table_id
            for lease in table_leases.leases(self.store)
            if lease.host != self.name
            and lease.expires <= now
            and lease.table_id not in closed
            and not lease.table_id.startswith("~")  # the notary's, a bot's
        ]

    def release(self, table_id: str) -> None:
        lease = self.held.pop(table_id, None)
        if lease is not None:
            table_leases.release(self.store, lease)

    def release_all(self) -> None:
        for table_id in list(self.held):
            self.release(table_id)
        if self.address is not None:
            host_addresses.remove(self.store, self.name)
            self.address = None
