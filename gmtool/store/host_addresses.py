"""Where players reach each live host (issue 26: one lobby over all hosts): one row a
host, the public address of its player gateway, renewed with its leases.

A host started with a player gateway (`house run --listen`) on a store several hosts
share publishes the address its gateway answers at (`publish`), again at every lease
renewal, and removes it when it stops cleanly (`remove`). A host that dies leaves its
row behind until its expiry passes; the next host that publishes clears such rows. The
lobby (`served`) lists every table a live host holds the lease of, with that host and
its address: a player reads it on any host and connects to the one that plays the
table they want.

Times are the store's injected clock, as for leases (store/table_leases.py). Addresses
are not evidence: they say where to connect, not what was played.
"""

from __future__ import annotations

from dataclasses import dataclass

from gmtool.store.db import Store

NOBODY = ""  # a released lease's holder (store/table_leases.py)


@dataclass(frozen=True)
class ServedTable:
    """A table a live host plays, as the lobby lists it."""

    table_id: str
    profile: str
    tier: str
    game: str
    host: str
    address: str | None  # None: its host has no player gateway
    seated: int


def publish(store: Store, host: str, address: str, ttl: float) -> None:
    """Say (again) that `host` answers players at `address` for the next `ttl` seconds;
    the rows of hosts whose expiry has passed go."""
    with store.write():
        now = store.clock.wall()
        store.conn.execute(
            "DELETE FROM host_addresses WHERE expires < ? AND host <> ?", (now, host)
        )
        store.conn.execute(
            "INSERT INTO host_addresses (host, address, expires) VALUES (?, ?, ?) "
            "ON CONFLICT(host) DO UPDATE SET address = excluded.address, "
            "expires = excluded.expires",
            (host, address, now + ttl),
        )


def remove(store: Store, host: str) -> None:
    """The host stopped: players no longer reach it."""
    with store.write():
        store.conn.execute("DELETE FROM host_addresses WHERE host = ?", (host,))


def addresses(store: Store) -> dict[str, str]:
    """Every published address by host, expired or not."""
    return {row[0]: row[1] for row in store.all("SELECT host, address FROM host_addresses")}


def served(store: Store) -> list[ServedTable]:
    """Every table whose lease a live host holds (not expired) and that a GM has not
    closed, with its host, the host's address and how many sit there, by table id."""
    rows = store.all(
        "SELECT l.table_id, t.profile_id, t.tier, t.game, l.host, a.address, "
        "(SELECT COUNT(*) FROM seats s WHERE s.table_id = l.table_id) "
        "FROM table_leases l JOIN tables t ON t.id = l.table_id "
        "LEFT JOIN host_addresses a ON a.host = l.host "
        "WHERE l.host <> ? AND l.expires > ? AND t.status <> 'closed' "
        "ORDER BY l.table_id",
        (NOBODY, store.clock.wall()),
    )
    return [
        ServedTable(r[0], r[1], r[2], r[3], r[4], r[5], int(r[6]))
        for r in rows
        if not r[0].startswith("~")  # the notary's lease, a bot's: not tables
    ]
