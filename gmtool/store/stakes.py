"""Coins a player has brought to running hands: one balance, never spent twice.

A hand's seats say what each player brought to it (D-9: the most it can take from them),
and coins leave a balance only when the hand settles. So a hand starts only if every
seated player's balance, less what they brought to the other running hands, covers what
they bring to this one (`cover`, inside the hand's first transaction: writers take turns
under the store's write lock, so two tables cannot both spend the same coins), and a
table seats a player with what they have left (`free_coins`). On PostgreSQL several hosts
share the store and a person may sit at tables of two hosts; on one SQLite host a person
at the gateway may stand up mid-hand (the hand plays on, their stake in it) and sit at
another table: until 2026-12-05 the SQLite host trusted its pool to know where everyone
sat, and that person spent the same coins twice (an outside probe's balance of -15).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

from gmtool.store.db import Store, StoreError
from gmtool.store.dialect import PG_SEATS, POSTGRESQL, SQLITE, SQLITE_SEATS

_BROUGHT = {
    POSTGRESQL: "SELECT s.value ->> 'player', SUM(CASE WHEN jsonb_typeof(s.value -> 'coins') "
    "= 'number' THEN (s.value ->> 'coins')::numeric ELSE 0 END) FROM hands h, "
    + PG_SEATS.format(seats="h.seats")
    + " AS s (value) WHERE h.outcome = 'running' AND s.value ->> 'player' = ANY(?) "
    "AND h.table_id IS DISTINCT FROM ? GROUP BY 1",
    # A seat that is not an object, or coins that are not a number, bring nothing (as
    # above); the players are given as a JSON list.
    SQLITE: "SELECT player, SUM(coins) FROM (SELECT json_extract(o, '$.player') AS player, "
    "CASE WHEN json_type(o, '$.coins') IN ('integer', 'real') THEN json_extract(o, "
    "'$.coins') ELSE 0 END AS coins FROM (SELECT CASE WHEN s.type = 'object' THEN s.value "
    "END AS o FROM hands h, "
    + SQLITE_SEATS.format(seats="h.seats")
    + " s WHERE h.outcome = 'running' AND h.table_id IS NOT ?) WHERE o IS NOT NULL) WHERE "
    "player IN (SELECT value FROM json_each(?)) GROUP BY player",
}
_BALANCES = {  # locked until the transaction ends (SQLite: the whole store already is)
    POSTGRESQL: "SELECT name, coins FROM players WHERE name = ANY(?) ORDER BY name FOR UPDATE",
    SQLITE: "SELECT name, coins FROM players WHERE name IN (SELECT value FROM json_each(?))",
}


class NotCovered(StoreError):
    """A hand whose players' coins are already at stake at other tables (not started)."""


def _players(store: Store, names: list[str]) -> object:
    """A list of names as a statement's parameter: an array, or SQLite's JSON text."""
    return names if store.dialect == POSTGRESQL else json.dumps(names)


def brought(store: Store, players: list[str], table: str | None = None) -> dict[str, int]:
    """What each of `players` brought to the hands running now, but `table`'s (0: none)."""
    if not players:
        return {}
    params = (players, table) if store.dialect == POSTGRESQL else (table, _players(store, players))
    found = {name: int(total) for name, total in store.all(_BROUGHT[store.dialect], params)}
    return {name: found.get(name, 0) for name in players}


def free_coins(
    store: Store, balances: Mapping[str, int], table: str | None = None
) -> dict[str, int]:
    """`balances` less what each player brought to running hands at tables other than
    `table`."""
    elsewhere = brought(store, list(balances), table)
    return {name: max(0, coins - elsewhere[name]) for name, coins in balances.items()}


def cover(store: Store, seats: Iterable[Mapping]) -> None:
    """Inside a new hand's write transaction, before its row exists: refuse (NotCovered)
    when a player's balance, less what they brought to other running hands, is less than
    what they bring to this one. Their balances are locked until the transaction ends."""
    wanted = {seat["player"]: int(seat.get("coins") or 0) for seat in seats}
    names = sorted(wanted)
    balances = dict(store.all(_BALANCES[store.dialect], (_players(store, names),)))
    elsewhere = brought(store, names)
    short = [name for name in names if balances.get(name, 0) - elsewhere[name] < wanted[name]]
    if short:
        staked = [name for name in short if elsewhere[name]]
        raise NotCovered(
            f"{', '.join(short)}: "
            + (
                "coins already at stake at another table (a hand there has not ended)"
                if staked
                else "the balance is less than the hand seats them with"
            )
            + "; the hand did not start"
        )
