"""Each player's tallies and score are what their settled hands record (RULES S22).

A settled hand's settlement event names each seat's result (win, loss, draw, escape,
disconnect) and score change, and the host adds them to the player's row in the
settlement's transaction. The table passes add up the settlement events they replay
(`add_settlement`); a full audit then holds every player's row to the sums. An audit of
some hands, or from a checkpoint, sees only some of them and leaves this to a full one.
A player seated in a settled hand whose settlement event is gone is not held to sums
that miss it: the hand is reported, and naming every player at it would add nothing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from gmtool.findings import Finding
from gmtool.store import scan
from gmtool.store.db import Store
from gmtool.store.ledger import TALLY_COLUMNS

COLUMNS = (*TALLY_COLUMNS.values(), "score")


def add_settlement(tallies: Counter, settlement: dict) -> None:
    """Count one settled hand's results and score changes into `tallies` by (player,
    column); a malformed part counts nothing (the replay reports the settlement)."""
    results, score = settlement.get("results"), settlement.get("score", {})
    if isinstance(results, dict):
        for player, result in results.items():
            column = TALLY_COLUMNS.get(result) if isinstance(result, str) else None
            if column:
                tallies[player, column] += 1
    if isinstance(score, dict):
        for player, delta in score.items():
            if type(delta) is int and delta:
                tallies[player, "score"] += delta


def verify_tallies(
    store: Store, tallies: Counter, untallied: set[str] = frozenset()
) -> Iterator[Finding]:
    """Every player's row against the sums of every settled hand's settlement event, but
    for the `untallied`: those seated in a settled hand whose settlement event is gone or
    unreadable (reported as such, with the hand)."""
    for row in scan.tallies(store):
        player = row["name"]
        if player in untallied:
            continue
        wrong = [
            f"{column} {row[column]!r} where their settled hands record {tallies[player, column]}"
            for column in COLUMNS
            if row[column] != tallies[player, column]
        ]
        if wrong:
            yield Finding("tallies", f"{player}: {', '.join(wrong)} (edited)", player=player)
