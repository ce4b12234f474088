"""Settlement (RULES S20, S22) and titles (S23).

A settlement is a set of ledger entries that sums to zero: coins only move between
players (no rake exists in the seeds). Training rooms move no coins at all; their
settlement carries results and score changes instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, NamedTuple

from gmtool.engine.config import Ladder, Title


class Result(StrEnum):
    """A player's result of one hand, as counted in training rooms (S22)."""

    WIN = "win"
    LOSS = "loss"
    DRAW = "draw"
    ESCAPE = "escape"
    DISCONNECT = "disconnect"
    VOID = "void"


class Entry(NamedTuple):
    """One ledger row of a settlement (a named tuple: every hand makes a few)."""

    player: str
    delta: int
    reason: str


@dataclass(frozen=True)
class Settlement:
    """How a hand ended: ledger entries (zero-sum), results and score changes."""

    entries: tuple[Entry, ...]
    results: Mapping[str, Result]
    score: Mapping[str, int] = field(default_factory=dict)
    winners: tuple[str, ...] = ()
    reason: str = "showdown"

    def __post_init__(self) -> None:
        total = 0
        for entry in self.entries:  # (a loop: a generator to sum costs twice as much)
            total += entry.delta
        if total != 0:
            raise AssertionError(f"settlement does not sum to zero: {total}")  # a bug, not input

    def delta(self, player: str) -> int:
        return sum(entry.delta for entry in self.entries if entry.player == player)

    def as_json(self) -> dict[str, Any]:
        return {
            "reason": self.reason,
            "winners": list(self.winners),
            "entries": [
                {"player": player, "delta": delta, "reason": reason}
                for player, delta, reason in self.entries
            ],
            "results": {player: str(result) for player, result in self.results.items()},
            "score": dict(self.score),
        }


def split_pot(pot: int, winners: Sequence[str]) -> dict[str, int]:
    """Equal shares of the pot; odd chips go to the winners in the order given.

    Ties cannot happen in a four-suit showhand deck (RULES S6), but a 52-card profile can
    tie; then the pot is shared and the remainder goes, a chip each, to the tied players
    nearest the banker counterclockwise (the order `winners` is given in).
    """
    share, odd = divmod(pot, len(winners))
    return {player: share + (1 if index < odd else 0) for index, player in enumerate(winners)}


def player_title(coins: int, score: int, ladder: Ladder | Mapping[str, Any] | None) -> str | None:
    """S23/D-3: a player's title under a ladder, by coins or by score as its metric says."""
    ladder = as_ladder(ladder)
    if ladder is None:
        return None
    return title_for(score if ladder.metric == "score" else coins, ladder)


def title_for(value: int, ladder: Ladder | Mapping[str, Any] | None) -> str | None:
    """The highest title whose step `value` reaches (S23); None below the first step."""
    ladder = as_ladder(ladder)
    if ladder is None:
        return None
    title = None
    for step in ladder.titles:
        if value >= step.at:
            title = step.title
    return title


def as_ladder(ladder: Ladder | Mapping[str, Any] | None) -> Ladder | None:
    """A ladder as the engine reads it (the compiled JSON's `ladder`, or one already read)."""
    if ladder is None or not isinstance(ladder, Mapping):
        return ladder or None
    return Ladder(ladder["metric"], tuple(Title(s["title"], s["at"]) for s in ladder["titles"]))
