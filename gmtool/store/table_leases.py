"""Which live host plays each table: a lease row per table, with an expiry and a fencing
token (issue 26: several hosts over one store).

A host plays a table only while it holds the table's lease. It takes a free lease (or one
whose expiry has passed) with `take`, keeps it by calling `renew` more often than the
lease's time, and gives it up with `release` when it stops. A host that dies stops
renewing: once the expiry passes, any other host may `take` the table over, and learns
from the lease it gets (`taken_from`) whose hands it must void and whose stakes it must
return, as crash recovery does for a host that restarts.

Every change of holder raises the table's `token` (a fencing token); a renewal by the
holder keeps it. A write a host makes for a table checks, in the same transaction, that
the lease still names it with its token (`still_held`), so a host that lost its lease
without knowing it (held up past the expiry) cannot write over its successor's play.

Times are the store's injected clock (`store.clock.wall()`, seconds since the epoch):
virtual time in tests; on several machines, the machines' clocks, which must agree to
well within a lease's time (NTP does this to milliseconds). Leases are not evidence: they
say who may write, and the evidence log says what was written.

Every operation is one write transaction: SQLite's BEGIN IMMEDIATE holds the whole store;
PostgreSQL's writers take turns under one advisory lock (store/pg.py), so two hosts never
both take one table.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from gmtool.store.db import Store, StoreError

MIN_TTL = 1.0  # a lease shorter than this could not be renewed in time by a busy host
NOBODY = ""  # the holder of a released lease (its row stays: a token never repeats)


class LeaseLost(StoreError):
    """A write for a table whose lease its host no longer holds (rolled back)."""


@dataclass(frozen=True)
class Lease:
    """A host's hold on a table, as the store has it."""

    table_id: str
    host: str
    token: int  # rises at every change of holder
    expires: float  # store-clock seconds
    taken_from: str | None = None  # the previous holder, when this take was a takeover


def _row(row) -> Lease:
    return Lease(row[0], row[1], int(row[2]), float(row[3]))


def _check(host: str, ttl: float) -> None:
    if not isinstance(host, str) or not host.strip():
        raise ValueError("a lease needs a host name")
    if not ttl >= MIN_TTL:  # NaN too
        raise ValueError(f"a lease lasts at least {MIN_TTL:g} s (got {ttl})")


def holder(store: Store, table_id: str) -> Lease | None:
    """The table's lease as stored, expired or not (None: never taken, or released)."""
    row = store.one(
        "SELECT table_id, host, token, expires FROM table_leases WHERE table_id = ? AND host <> ?",
        (table_id, NOBODY),
    )
    return _row(row) if row else None


def leases(store: Store) -> list[Lease]:
    """Every table's lease that a host holds or held last (not released), by table."""
    return [
        _row(row)
        for row in store.all(
            "SELECT table_id, host, token, expires FROM table_leases WHERE host <> ? "
            "ORDER BY table_id",
            (NOBODY,),
        )
    ]


def take(store: Store, table_id: str, host: str, ttl: float) -> Lease | None:
    """Take the table's lease for `ttl` seconds: a new lease, the holder's own renewed, or
    one whose expiry has passed taken over (`taken_from` names its holder). None while
    another host's lease has not expired."""
    _check(host, ttl)
    with store.write():
        now = store.clock.wall()
        row = store.one(
            "SELECT table_id, host, token, expires FROM table_leases WHERE table_id = ?",
            (table_id,),
        )
        if row is None:
            store.conn.execute(
                "INSERT INTO table_leases (table_id, host, token, expires) VALUES (?, ?, 1, ?)",
                (table_id, host, now + ttl),
            )
            return Lease(table_id, host, 1, now + ttl)
        old = _row(row)
        if old.host not in (host, NOBODY) and old.expires > now:
            return None
        token = old.token if old.host == host else old.token + 1
        store.conn.execute(
            "UPDATE table_leases SET host = ?, token = ?, expires = ? WHERE table_id = ?",
            (host, token, now + ttl, table_id),
        )
        taken_from = None if old.host in (host, NOBODY) else old.host
        return Lease(table_id, host, token, now + ttl, taken_from=taken_from)


def renew(store: Store, held: Iterable[Lease], ttl: float) -> tuple[list[Lease], list[Lease]]:
    """Extend every lease in `held` that the store still gives its host with its token,
    even if its expiry has just passed while nobody took it over: (renewed, lost). A lost
    lease was taken over by another host, or released: its host must stop playing that
    table at once (its successor voids the hand it was playing)."""
    renewed, lost = [], []
    with store.write():
        now = store.clock.wall()
        for lease in held:
            _check(lease.host, ttl)
            row = store.one(
                "SELECT table_id, host, token, expires FROM table_leases WHERE table_id = ?",
                (lease.table_id,),
            )
            if row is None or (row[1], int(row[2])) != (lease.host, lease.token):
                lost.append(lease)
                continue
            store.conn.execute(
                "UPDATE table_leases SET expires = ? WHERE table_id = ?",
                (now + ttl, lease.table_id),
            )
            renewed.append(Lease(lease.table_id, lease.host, lease.token, now + ttl))
    return renewed, lost


def still_held(store: Store, lease: Lease) -> bool:
    """Inside a write transaction: whether the store still gives `lease`'s table to its
    host with its token (a write for the table goes ahead only if so)."""
    row = store.one(
        "SELECT host, token FROM table_leases WHERE table_id = ?",
        (lease.table_id,),
    )
    return row is not None and (row[0], int(row[1])) == (lease.host, lease.token)


def release(store: Store, lease: Lease) -> bool:
    """Give the table up (its host stops playing it, having ended its hand): the lease
    then names nobody, its token kept, so the next holder's is higher. False when another
    host had taken it over already."""
    with store.write():
        cursor = store.conn.execute(
            "UPDATE table_leases SET host = ?, expires = 0 WHERE table_id = ? AND host = ? "
            "AND token = ?",
            (NOBODY, lease.table_id, lease.host, lease.token),
        )
        return bool(cursor.rowcount)
