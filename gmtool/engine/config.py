"""The engine's view of a compiled configuration (the dict `gmtool rules compile` prints)."""

from __future__ import annotations

from functools import lru_cache

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
                  ranking["tie_break"], ranking["wrap_straights"])


@lru_cache(maxsize=32)
def _stud5(ranks, suits, categories, tie_break, wrap):
    from gmtool.engine.ranking import Stud5Ranking

    return Stud5Ranking(_deck(ranks, suits), categories, tie_break, wrap)


@lru_cache(maxsize=32)
def _three_card(ranks, suits, categories, low_ace):
    from gmtool.engine.ranking3 import ThreeCardRanking

    return ThreeCardRanking(_deck(ranks, suits), categories, low_ace)
