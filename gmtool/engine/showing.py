"""Showing cards: who speaks first on each stud5 street (RULES S7).

Only the face-up cards count (1 to 4 of them). Categories rank in a fixed order, not the
profile's: straight flush > four of a kind > flush > straight > three of a kind > two
pair > pair > high card (four-card straights and flushes count). Ties inside a category
follow the profile's own S6 policy, as the seeds compare showing cards by the same rules
as the showdown: the defining rank(s), then the suit of the deciding card, and where the
policy compares every rank of a category (seed 000's high card, or an operator's
all-ranks variant), every face-up rank from high to low before that suit.

Engines before version 4 compared every rank of a four-card flush and only the top card
of high card, whatever the policy: `ShowingRanking(deck, wrap, BEFORE_4)` keeps that
reading for the hands they recorded (engine/versions.py).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from gmtool.engine.cards import (
    RANK_OF,
    RANK_THEN_SUIT,
    Card,
    Deck,
    HandError,
    card_count,
    category_words,
    hand_text,
    outcome,
)
from gmtool.engine.keyed import pack, tie_reason

# The fixed order of showing categories (S7), strongest first.
SHOWING_ORDER = (
    "straight_flush",
    "four_of_a_kind",
    "flush",
    "straight",
    "three_of_a_kind",
    "two_pair",
    "one_pair",
    "high_card",
)
_STRENGTH = {name: len(SHOWING_ORDER) - i for i, name in enumerate(SHOWING_ORDER)}
BEFORE_4 = frozenset({"flush"})  # engines 2 and 3: every rank of a flush, top card otherwise
MEMO_LIMIT = 1 << 17  # entries kept at most per memo (28 cards: 24,157 showings)
_FIELDS = 6  # at most four rank fields and one suit field per key, with room to spare
_WORDS = {
    "straight_flush": "four-card straight flush to the {0}",
    "four_of_a_kind": "four {0}",
    "straight": "four-card straight to the {0}",
    "two_pair": "two pair, {0} and {1},",
}
_PLURAL = ("four_of_a_kind", "three_of_a_kind", "two_pair", "one_pair")
# (category, rank fields, position of the suit-deciding card in rank-then-suit order)
_Value = tuple[str, tuple[int, ...], int]
# a memo key of face-up cards: the bitmask a caller keeps, else `_mask` of the cards
_MemoKey = int | tuple[int, int] | None
_Memos = tuple[
    dict[_MemoKey, int], dict[_MemoKey, str], dict[tuple[int, ...], tuple[_Value, _Value | None]]
]  # keys, words, shapes
_MEMOS: dict[tuple[Deck, bool, frozenset[str]], _Memos] = {}


class ShowingRanking:
    """Strength of 1 to 4 face-up cards of `deck` (S7), for who speaks first.

    `all_ranks` names the categories whose every face-up rank counts, high to low,
    before the deciding suit (the S6 policy's, or `BEFORE_4`). Compare keys only between
    equal numbers of cards. Rankings of one deck and reading share their memos.
    """

    def __init__(self, deck: Deck, wrap_straights: bool, all_ranks: frozenset[str]) -> None:
        self.deck = deck
        self.wrap_straights = wrap_straights
        self.all_ranks = all_ranks
        self._ranks, self._suits = len(deck.ranks), len(deck.suits)
        self._width = max(self._ranks - 1, self._suits - 1, 1).bit_length()
        self._shift = self._width * _FIELDS
        self._by_mask = {card.mask: card for card in deck.cards}  # the deck's own cards
        self._keys, self._words, self._shapes = _MEMOS.setdefault(
            (deck, wrap_straights, all_ranks), ({}, {}, {})
        )
        # the memo of `key` by mask (read only): a caller holding masks may look there
        # first and call `key` only for a mask not in it
        self.known: Mapping[_MemoKey, int] = self._keys

    def key(self, cards: Sequence[Card], mask: _MemoKey = None) -> int:
        """The strength of face-up `cards`: larger speaks first. Memoised by the cards'
        bitmask; a caller keeping the mask of `cards` up to date may pass it."""
        if mask is None:
            mask = _mask(cards)
        key = self._keys.get(mask)
        if key is None:
            category, fields, card = self.value(cards)
            suit = self._suits - 1 - card.suit
            key = (
                _STRENGTH[category] << self._shift | pack(fields, self._width) << self._width | suit
            )
            if len(self._keys) >= MEMO_LIMIT:
                self._keys.clear()  # bounded memory on large decks (52 cards: 292,825)
            self._keys[mask] = key
        return key

    def describe(self, cards: Sequence[Card], mask: _MemoKey = None) -> str:
        """Face-up cards in words: "pair of kings with the king of spades"."""
        if mask is None:
            mask = _mask(cards)
        text = self._words.get(mask)
        if text is None:
            if len(self._words) >= MEMO_LIMIT:
                self._words.clear()
            text = self._words[mask] = self._describe(cards)
        return text

    def explain(self, a: Sequence[Card], b: Sequence[Card]) -> str:
        """Why face-up cards `a` speak before (or after) `b`: RULES S7."""
        ka, kb = self.key(a), self.key(b)
        (cat_a, fields_a, card_a), (cat_b, fields_b, card_b) = self.value(a), self.value(b)
        head = f"{self.describe(a)} {outcome(ka, kb)} {self.describe(b)}: RULES S7"
        if cat_a != cat_b:
            high, low = (cat_a, cat_b) if ka > kb else (cat_b, cat_a)
            return f"{head}, {category_words(high)} ranks above {category_words(low)}"
        labels = ("rank",) * len(fields_a)
        return f"{head} " + tie_reason(self.deck, labels, fields_a, fields_b, card_a, card_b)

    def value(self, cards: Sequence[Card]) -> tuple[str, tuple[int, ...], Card]:
        """(category, rank fields compared in order, the card whose suit decides)."""
        count = card_count(cards)
        if not 1 <= count <= 4:
            raise HandError(f"showing cards are 1 to 4 face-up cards, got {count} (RULES S7)")
        if not _own(self._by_mask, cards, count):
            _check(self.deck, cards, count)  # (raises, unless they are look-alikes)
        ordered = sorted(cards, key=RANK_THEN_SUIT)
        r = tuple(map(RANK_OF, ordered))
        shape = self._shapes.get(r)
        if shape is None:
            shape = self._shapes[r] = self._shape(r)
        plain, suited = shape
        if suited is not None and len({c.suit for c in ordered}) == 1:
            plain = suited
        category, fields, pos = plain
        return category, fields, ordered[pos]

    def _shape(self, r: tuple[int, ...]) -> tuple[_Value, _Value | None]:
        """The value of face-up ranks `r` (ascending) in several suits and, when that
        differs, all in one suit."""
        groups = sorted(Counter(r).items(), key=lambda rc: (rc[1], rc[0]), reverse=True)
        pattern = tuple(count for _, count in groups)
        by_rank = tuple(rank for rank, _ in groups)  # defining ranks, then the rest high to low
        lead = r.index(by_rank[0])  # the best suit of the first group: first of its rank
        every = self.all_ranks
        suited = None
        if len(r) == 4 and pattern == (1, 1, 1, 1):
            top = (
                3
                if r[3] - r[0] == 3
                else (2 if self.wrap_straights and r == (0, 1, 2, self._ranks - 1) else None)
            )
            if top is not None:
                return ("straight", (r[top],), top), ("straight_flush", (r[top],), top)
            suited = ("flush", by_rank if "flush" in every else by_rank[:1], 3)
        if pattern[0] == 4:
            category = "four_of_a_kind"
        elif pattern[0] == 3:
            category = "three_of_a_kind"
        elif pattern[:2] == (2, 2):
            category = "two_pair"
        elif pattern[0] == 2:
            category = "one_pair"
        else:
            category = "high_card"
        defining = 2 if category == "two_pair" else 1
        fields = by_rank if category in every else by_rank[:defining]
        return (category, fields, lead), suited

    def _describe(self, cards: Sequence[Card]) -> str:
        category, fields, card = self.value(cards)
        if len(cards) == 1:
            return card.name
        name = self.deck.rank_name
        plural = category in _PLURAL
        head = [name(r, plural) for r in fields[: 2 if category == "two_pair" else 1]]
        rest = [name(r) for r in fields[len(head) :]]
        if category == "flush":
            text = (
                "four-card flush, " + "-".join(name(r) for r in fields) + ","
                if rest
                else f"{head[0]}-high four-card flush"
            )
        elif category == "high_card":
            text = "-".join(name(r) for r in fields) + " high"
        elif category in ("three_of_a_kind", "one_pair"):
            of = "three" if category == "three_of_a_kind" else "pair of"
            kickers = ", ".join(rest)
            text = f"{of} {head[0]}" + (
                f", {kickers} kicker{'s' if len(rest) > 1 else ''}," if rest else ""
            )
        else:
            text = _WORDS[category].format(*head)
        return f"{text} with the {card.name}"


def _mask(cards: Sequence[Card]) -> tuple[int, int] | None:
    """A memo key for face-up cards: their bitmask and count (a repeated card keeps the
    count apart from the mask, so it is still checked); None when they are not cards."""
    try:
        mask = 0
        for card in cards:
            mask |= card.mask
        return mask, len(cards)
    except (AttributeError, TypeError):
        return None


def _own(by_mask: Mapping[int, Card], cards: Sequence[Card], size: int) -> bool:
    """Whether `cards` are `size` different cards, each the very card object of the deck
    (`by_mask`: the deck's cards by bit), as dealt ones are: `_check` passes them."""
    mask = 0
    try:
        for card in cards:
            bit = card.mask
            if by_mask.get(bit) is not card:
                return False
            mask |= bit
    except (AttributeError, TypeError):
        return False
    return mask.bit_count() == size


def _check(deck: Deck, cards: Sequence[Card], size: int) -> None:
    """Raise HandError unless `cards` are `size` different cards of `deck`."""
    if isinstance(cards, str):
        raise HandError(f"{cards!r} is text: read it with deck.parse_cards first")
    mask = 0
    for card in cards:
        if card not in deck:
            raise HandError(f"{hand_text(cards)}: {card} is not a card of this deck")
        mask |= card.mask
    # cards of one deck are equal exactly when their bits are: a repeat leaves fewer bits
    if mask.bit_count() != size:
        raise HandError(f"{hand_text(cards)}: a card is repeated")
