"""Coins a player has brought to running hands, on a store several hosts share
(PostgreSQL): one balance, never spent twice.

A hand's seats say what each player brought to it (D-9: the most it can take from them),
and coins leave a balance only when the hand settles. On one host its bot pool never seats
a player at two tables at once; several hosts each have their own pool, and a person may
sit at tables of two hosts. So on PostgreSQL a hand starts only if every seated player's
balance, less what they brought to the other running hands, covers what they bring to
this one (`cover`, inside the hand's first transaction: writers take turns under the
store's write lock, so two hosts cannot both spend the same coins), and a host seats a
player with what they have left (`free_coins`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from gmtool.store.db import Store, StoreError
from gmtool.store.dialect import PG_SEATS

_BROUGHT = (
    "SELECT s.value ->> 'player', SUM(CASE WHEN jsonb_typeof(s.value -> 'coins') = 'number' "
    "THEN (s.value ->> 'coins')::numeric ELSE 0 END) FROM hands h, "
    + PG_SEATS.format(seats="h.seats")
    + " AS s (value) WHERE h.outcome = 'running' AND s.value ->> 'player' = ANY(?) "
    "AND h.table_id IS DISTINCT FROM ? GROUP BY 1"
)


class NotCovered(StoreError):
    """A hand whose players' coins are already at stake at other tables (not started)."""


def _shared(store: Store) -> bool:
    return getattr(store, "is_postgres", False)


def brought(store: Store, players: list[str], table: str | None = None) -> dict[str, int]:
    """What each of `players` brought to the hands running now, but `table`'s (0: none)."""
    if not players:
        return {}
    found = {name: int(total) for name, total in store.all(_BROUGHT, (players, table))}
    return {name: found.get(name, 0) for name in players}


def free_coins(
    store: Store, balances: Mapping[str, int], table: str | None = None
) -> dict[str, int]:
    """`balances` less what each player brought to running hands at tables other than
    `table` (on one host's store, unchanged: its pool knows where its players sit)."""
    if not _shared(store):
        return dict(balances)
    elsewhere = brought(store, list(balances), table)
    return {name: max(0, coins - elsewhere[name]) for name, coins in balances.items()}


def cover(store: Store, seats: Iterable[Mapping]) -> None:
    """Inside a new hand's write transaction, before its row exists: refuse (NotCovered)
    when a player's balance, less what they brought to other running hands, is less than
    what they bring to this one. Their balances are locked until the transaction ends."""
    if not _shared(store):
        return
    wanted = {seat["player"]: int(seat.get("coins") or 0) for seat in seats}
    names = sorted(wanted)
    balances = dict(
        store.all(
            "SELECT name, coins FROM players WHERE name = ANY(?) ORDER BY name FOR UPDATE",
            (names,),
        )
    )
    elsewhere = brought(store, names)
    short = [name for name in names if balances.get(name, 0) - elsewhere[name] < wanted[name]]
    if short:
        raise NotCovered(
            f"{', '.join(short)}: coins already at stake at another table (a host's hand "
            "there has not ended); the hand did not start"
        )
