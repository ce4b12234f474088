"""Comparing hands for support staff: who wins and why, in words (RULES S3, S6, H9)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gmtool.engine.cards import Card, CardError
from gmtool.engine.config import Compiled, EngineConfig, engine_config
from gmtool.engine.games import game_of, ranking_for
from gmtool.engine.rankings import deck_for


def compare_hands(config: Compiled | EngineConfig, hands: Sequence[str]) -> dict[str, Any]:
    """{"winner": INDEX or None on a tie, "hands": [{"cards", "category", "explanation"}]}."""
    spec = engine_config(config)
    deck = deck_for(spec)
    size = game_of(spec).cards_each
    parsed = [deck.parse_cards(text) for text in hands]
    seen: dict[Card, int] = {}
    for index, cards in enumerate(parsed):
        if len(cards) != size:
            raise CardError(
                f"hand {index + 1} has {len(cards)} cards; a {spec.game} hand has {size}"
            )
        for card in cards:
            if card in seen:
                raise CardError(f"{card} appears in hand {seen[card] + 1} and hand {index + 1}")
            seen[card] = index
    ranking = ranking_for(spec)
    keys = [ranking.key(cards) for cards in parsed]
    best = max(keys)
    winners = [i for i, key in enumerate(keys) if key == best]
    order = sorted(range(len(parsed)), key=lambda i: keys[i], reverse=True)
    runner_up = order[1]
    out = []
    for index, cards in enumerate(parsed):
        other = runner_up if index == order[0] else order[0]
        out.append(
            {
                "cards": deck.format(cards),
                "category": ranking.category(cards),
                "explanation": ranking.explain(cards, parsed[other]),
            }
        )
    return {"winner": winners[0] if len(winners) == 1 else None, "hands": out}
