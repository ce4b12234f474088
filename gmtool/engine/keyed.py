"""What every ranking keyed by a lookup table shares: categories and comparison from keys.

A key packs the category's strength above `_shift` bits of tie-break fields, so the
category of a key is one shift and one dict look-up (stud5 and three-card alike).
"""

from __future__ import annotations

from typing import Sequence

from gmtool.engine.cards import Card


class KeyedRanking:
    """Mixin: needs `key(cards)`, `_shift` and `_by_strength` (strength -> category id)."""

    _shift: int
    _by_strength: dict[int, str]

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
