"""Suihua three-card ranking (RULES H9-H10): trips down to high card, suits never count.

``ThreeCardRanking.key(cards)`` maps three cards to an int: larger beats smaller and
equal keys are equal hands, which the betting rules then resolve (H7: the buyer loses;
H8: the opened player wins). The key packs the category's strength (profile order)
above the three comparison ranks, highest first (pair: the pair, then the single).

A hand is keyed on first use into a table indexed by its card bitmask, so ranking is
one dict look-up after that (`hand_keys` keys all 22,100 hands of the 52-card deck).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from enum import StrEnum
from itertools import combinations, combinations_with_replacement
from math import comb

from gmtool.engine.cards import (
    SUIT_BITS,
    Card,
    Deck,
    HandError,
    card_count,
    category_words,
    hand_text,
    outcome,
    with_article,
)
from gmtool.engine.keyed import KeyedRanking, pack
from gmtool.engine.ranking import RankingError, checked_categories


class Category3(StrEnum):
    """Three-card categories, in the default order of RULES H9."""

    TRIPS = "trips"
    STRAIGHT_FLUSH = "straight_flush"
    STRAIGHT = "straight"
    FLUSH = "flush"
    PAIR = "pair"
    HIGH_CARD = "high_card"


DEFAULT_CATEGORIES3 = tuple(str(c) for c in Category3)
_LABELS = {"trips": ("trips rank",), "pair": ("pair rank", "single card")}
_CARDS = ("highest card", "second card", "third card")


class ThreeCardRanking(KeyedRanking):
    """Ranks 3-card hands of ``deck`` under a profile's category order (RULES H9).

    With ``low_ace_straight`` the top rank also plays below the lowest one, so A-2-3
    is the lowest straight and Q-K-A the highest; K-A-2 is never a straight. Not a
    dataclass because it owns a lazily built look-up table.
    """

    hand_size = 3

    def __init__(
        self,
        deck: Deck,
        categories: Sequence[str] = DEFAULT_CATEGORIES3,
        low_ace_straight: bool = True,
    ) -> None:
        if len(deck) < 3:
            raise RankingError(f"a three-card deck needs at least 3 cards, not {len(deck)}")
        self.deck = deck
        self.categories = checked_categories(categories, DEFAULT_CATEGORIES3, "three-card")
        self.low_ace_straight = bool(low_ace_straight)
        self.hand_count = comb(len(deck), 3)
        self.precomputed = True
        self._ranks, self._suits = len(deck.ranks), len(deck.suits)
        self._width = self._ranks.bit_length()  # fields are rank + 1, 0 = an ace played low
        self._shift = self._width * 3
        self._strength = {name: len(self.categories) - i for i, name in enumerate(self.categories)}
        self._by_strength = {v: k for k, v in self._strength.items()}
        self._table: dict[int, int] | None = None  # every hand, once `_load` has run
        self._keys = _Keys(self)  # the hands met so far, keyed as they come
        self._words: dict[int, str] = {}

    def key(self, cards: Sequence[Card]) -> int:
        """Strength of a hand: larger beats smaller, equal keys are equal hands (H9).

        One look-up by the hand's bitmask; pass this deck's cards (``deck.parse_cards``).
        """
        table = self._table if self._table is not None else self._keys
        try:
            a, b, c = cards
            return table[a.mask | b.mask | c.mask]
        except (TypeError, ValueError, AttributeError, KeyError):
            self._check(cards)
            raise

    def hand_keys(self) -> Iterator[int]:
        """The key of every 3-card hand of the deck, from the table."""
        yield from (self._table if self._table is not None else self._load()).values()

    def describe(self, cards: Sequence[Card]) -> str:
        """The hand in words: "pair of kings with an ace", "three-high straight (ace low)".

        Memoised by the hand's bitmask (22,100 hands in 52 cards at most).
        """
        self.key(cards)  # validates the hand
        a, b, c = cards
        mask = a.mask | b.mask | c.mask
        text = self._words.get(mask)
        if text is None:
            text = self._words[mask] = self._describe(cards)
        return text

    def _describe(self, cards: Sequence[Card]) -> str:
        category, fields = self._value(cards)
        names = [self._name(v) for v in fields]
        if category == "trips":
            return f"trips, three {self._name(fields[0], True)}"
        if category == "pair":
            return f"pair of {self._name(fields[0], True)} with {with_article(names[1])}"
        if category in ("straight", "straight_flush"):
            low = " (ace low)" if fields[-1] == 0 else ""
            return f"{names[0]}-high {category_words(category)}{low}"
        return "-".join(names) + (" flush" if category == "flush" else " high")

    def explain(self, a: Sequence[Card], b: Sequence[Card]) -> str:
        """Why ``a`` beats, loses to or equals ``b``, naming the rule.

        "pair of kings with an ace beats pair of kings with a queen: RULES H9 (single
        card: ace against queen)"; equal hands say how the betting rules resolve them.
        """
        ka, kb = self.key(a), self.key(b)
        (cat_a, fields_a), (cat_b, fields_b) = self._value(a), self._value(b)
        if ka == kb:
            return (
                f"{self.describe(a)} and {self.describe(b)} are equal hands: RULES H9, "
                "suits never break ties (buying: the buyer loses, H7; "
                "opening: the opened player wins, H8)"
            )
        head = f"{self.describe(a)} {outcome(ka, kb)} {self.describe(b)}: RULES H9"
        if cat_a != cat_b:
            high, low = (cat_a, cat_b) if ka > kb else (cat_b, cat_a)
            return f"{head}, {category_words(high)} ranks above {category_words(low)}"
        labels = _LABELS.get(cat_a, _CARDS)
        i = next(i for i, (x, y) in enumerate(zip(fields_a, fields_b)) if x != y)
        return f"{head} ({labels[i]}: {self._name(fields_a[i])} against {self._name(fields_b[i])})"

    # ---- internals ----------------------------------------------------------------------
    def _load(self) -> dict[int, int]:
        """Key every 3-card hand of the deck once (22,100 for 52 cards): `hand_keys`.

        A key depends only on the ranks (ascending) and whether one suit holds all three,
        so each of those shapes (910 for 13 ranks) is keyed once and every hand looks its
        shape up: a twentieth of the work of keying every hand (an audit of a few hundred
        three-card hands paid more for this table than for replaying them)."""
        if self._table is None:
            cards = [(c.rank, c.suit, c.mask) for c in self.deck.cards]
            ranks = sorted({rank for rank, _, _ in cards})
            shapes = {
                (*r, one_suit): self._key_of(r, one_suit)
                for r in combinations_with_replacement(ranks, 3)
                for one_suit in (False, True)
            }
            self._table = {
                b0 | b1 | b2: shapes[r0, r1, r2, s0 == s1 == s2]
                for (r0, s0, b0), (r1, s1, b1), (r2, s2, b2) in combinations(cards, 3)
            }
        return self._table

    def _key_of(self, ranks: tuple[int, int, int], one_suit: bool) -> int:
        category, fields = self._classify(ranks, one_suit)
        return self._strength[category] << self._shift | pack(fields, self._width)

    def _classify(self, r: tuple[int, int, int], one_suit: bool) -> tuple[str, tuple[int, ...]]:
        """Category and comparison fields (rank + 1, highest first) of ascending ranks."""
        low, mid, high = r
        if low == high:
            return "trips", (high + 1,)
        if low == mid or mid == high:
            pair, single = (mid, high if low == mid else low)
            return "pair", (pair + 1, single + 1)
        fields = (high + 1, mid + 1, low + 1)
        if high - low != 2:
            if not (self.low_ace_straight and r == (0, 1, self._ranks - 1)):
                return ("flush" if one_suit else "high_card"), fields
            fields = (2, 1, 0)  # A-2-3: the ace plays below the two
        return ("straight_flush" if one_suit else "straight"), fields

    def _value(self, cards: Sequence[Card]) -> tuple[str, tuple[int, ...]]:
        low, mid, high = sorted(card.rank for card in cards)
        return self._classify((low, mid, high), len({card.suit for card in cards}) == 1)

    def _name(self, field: int, plural: bool = False) -> str:
        return self.deck.rank_name(field - 1 if field else self._ranks - 1, plural)

    def _check(self, cards: Sequence[Card]) -> None:
        """Raise HandError unless ``cards`` are three different cards of the deck."""
        if isinstance(cards, str):
            raise HandError(f"{cards!r} is text: read it with deck.parse_cards first")
        if card_count(cards) != 3:
            raise HandError(f"a three-card hand has 3 cards, got {card_count(cards)}")
        for card in cards:
            if card not in self.deck:
                raise HandError(f"{hand_text(cards)}: {card} is not a card of this deck")
        if len(set(cards)) != 3:
            raise HandError(f"{hand_text(cards)}: a card is repeated")


class _Keys(dict[int, int]):
    """The keys of the hands met so far, by bitmask: a hand is keyed on first use (an audit
    of a thousand three-card hands meets a few thousand of the 22,100, and keying all of
    them first cost it more than replaying them). A mask that is not three cards of the
    deck is a KeyError, as it is in the whole table."""

    def __init__(self, ranking: ThreeCardRanking) -> None:
        super().__init__()
        self._ranking = ranking
        self._deck_mask = sum(card.mask for card in ranking.deck.cards)

    def __missing__(self, mask: int) -> int:
        if type(mask) is not int or mask.bit_count() != 3 or mask & ~self._deck_mask:
            raise KeyError(mask)
        # the three bits low to high: canonical order, so the ranks come ascending
        low = mask & -mask
        rest = mask ^ low
        mid = rest & -rest
        high = rest ^ mid
        b0, b1, b2 = low.bit_length() - 1, mid.bit_length() - 1, high.bit_length() - 1
        suit = (1 << SUIT_BITS) - 1
        one_suit = b0 & suit == b1 & suit == b2 & suit
        key = self[mask] = self._ranking._key_of(
            (b0 >> SUIT_BITS, b1 >> SUIT_BITS, b2 >> SUIT_BITS), one_suit
        )
        return key
