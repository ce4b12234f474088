"""What every ranking keyed by a lookup table shares: categories and comparison from keys.

A key packs the category's strength above `_shift` bits of tie-break fields, so the
category of a key is one shift and one dict look-up (stud5 and three-card alike).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from gmtool.engine.cards import Card, Deck


class KeyedRanking:
    """Mixin: needs `key(cards)`, `_shift` and `_by_strength` (strength -> category id)."""

    _shift: int
    _by_strength: dict[int, str]

    if TYPE_CHECKING:

        def key(self, cards: Sequence[Card]) -> int:
            """The hand's strength: larger beats smaller (each ranking's own)."""

    def category(self, cards: Sequence[Card]) -> str:
        """The hand's category id, such as "one_pair" or "pair"."""
        return self.category_of_key(self.key(cards))

    def category_of_key(self, key: int) -> str:
        """The category id a key belongs to."""
        return self._by_strength[key >> self._shift]

    def compare(self, a: Sequence[Card], b: Sequence[Card]) -> int:
        """1 when `a` beats `b`, -1 when it loses, 0 for equal hands."""
        ka, kb = self.key(a), self.key(b)
        return (ka > kb) - (ka < kb)


def pack(fields: Sequence[int], width: int) -> int:
    """Fields as one int, first field most significant, each ``width`` bits."""
    packed = 0
    for value in fields:
        packed = packed << width | value
    return packed


def tie_reason(
    deck: Deck,
    labels: Sequence[str],
    fields_a: Sequence[int],
    fields_b: Sequence[int],
    card_a: Card | None,
    card_b: Card | None,
) -> str:
    """The parenthesis naming the tie-break step that decided, or "(equal hands)"."""
    for label, x, y in zip(labels, fields_a, fields_b):
        if x != y:
            return f"({label}: {deck.rank_name(x)} against {deck.rank_name(y)})"
    if card_a is not None and card_b is not None and card_a.suit != card_b.suit:
        return (
            f"(equal ranks; suit of the deciding card: {deck.suit_name(card_a.suit)} "
            f"against {deck.suit_name(card_b.suit)})"
        )
    return "(equal hands)"
