"""The engine's view of a compiled configuration (the dict `gmtool rules compile` prints)."""

from __future__ import annotations

from functools import lru_cache
from typing import Mapping

from gmtool.engine.cards import Deck


def deck_for(compiled: dict) -> Deck:
    return _deck(tuple(compiled["deck"]["ranks"]), tuple(compiled["deck"]["suits"]))


@lru_cache(maxsize=32)
def _deck(ranks: tuple[str, ...], suits: tuple[str, ...]) -> Deck:
    return Deck.from_config(ranks, suits)


def ranking_for(compiled: dict):
    """The hand ranking a compiled profile describes (stud5 or three-card).

    Rankings are shared between configurations that rank alike (same deck, order and
    policy), so each ranking table is built once per process however many configs use it.
    """
    ranking = compiled["ranking"]
    deck = compiled["deck"]
    if compiled["game"] == "three-card":
        return _three_card(tuple(deck["ranks"]), tuple(deck["suits"]),
                           tuple(ranking["categories"]), ranking["low_ace_straight"])
    return _stud5(tuple(deck["ranks"]), tuple(deck["suits"]), tuple(ranking["categories"]),
                  tie_break_of(compiled), ranking["wrap_straights"], ranking["tie_break"])


def tie_break_of(compiled: Mapping) -> str:
    """The S6 policy a compiled stud5 config means.

    Compiled forms before schema version 2 said "ranks_then_suit" for the policy that
    compares every kicker, which RULES S6 (corrected 2026-12-01) no longer calls seed
    000's rule; such configs keep their meaning, so the hands played under them replay
    and audit as they were played (history is never rewritten).
    """
    policy = compiled["ranking"]["tie_break"]
    if policy == "ranks_then_suit" and compiled.get("schema_version", 1) < 2:
        return "all_ranks_then_suit"
    return policy


@lru_cache(maxsize=32)
def _stud5(ranks, suits, categories, tie_break, wrap, named):
    from gmtool.engine.ranking import Stud5Ranking

    return Stud5Ranking(_deck(ranks, suits), categories, tie_break, wrap, named=named)


@lru_cache(maxsize=32)
def _three_card(ranks, suits, categories, low_ace):
    from gmtool.engine.ranking3 import ThreeCardRanking

    return ThreeCardRanking(_deck(ranks, suits), categories, low_ace)
