"""The engine's view of a compiled configuration (the dict `gmtool rules compile` prints)."""

from __future__ import annotations

from gmtool.engine.cards import Deck


def deck_for(compiled: dict) -> Deck:
    return Deck.from_config(compiled["deck"]["ranks"], compiled["deck"]["suits"])


def ranking_for(compiled: dict):
    """The hand ranking a compiled profile describes (stud5 or three-card)."""
    deck = deck_for(compiled)
    ranking = compiled["ranking"]
    if compiled["game"] == "three-card":
        from gmtool.engine.ranking3 import ThreeCardRanking

        return ThreeCardRanking(deck, ranking["categories"], ranking["low_ace_straight"])
    from gmtool.engine.ranking import Stud5Ranking

    return Stud5Ranking(deck, ranking["categories"], ranking["tie_break"],
                        ranking["wrap_straights"])
