"""Five-card showhand ranking: categories, tie-break policies and showing cards (RULES S1-S7).

``Stud5Ranking.key(cards)`` maps a complete hand to an int; a larger key beats a
smaller one and equal keys tie under the profile's policy. A key packs the category's
strength (from the profile's category order, S3) above the tie-break fields of the
policy (S6): rank fields, then the strength of the one suit that decides.

Every 5-card hand of a small deck (98,280 for 28 cards) is keyed once, lazily, into a
table indexed by a card bitmask, so ranking a hand is one dict look-up (benchmarks/README.md,
"Budgets"). Larger decks (52 cards: 2.6M hands) are evaluated directly with a cache.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from enum import StrEnum
from itertools import combinations
from math import comb

from gmtool.engine.cards import (
    RANK_OF,
    RANK_THEN_SUIT,
    SUIT_BITS,
    Card,
    Deck,
    HandError,
    card_count,
    category_words,
    hand_text,
    listing,
    outcome,
    with_article,
)
from gmtool.engine.keyed import KeyedRanking, pack, tie_reason
from gmtool.engine.showing import BEFORE_4, ShowingRanking
from gmtool.errors import UsageError


class Category(StrEnum):
    """Stud5 hand categories; the profile orders them (RULES S3)."""

    STRAIGHT_FLUSH = "straight_flush"
    FOUR_OF_A_KIND = "four_of_a_kind"
    FULL_HOUSE = "full_house"
    FLUSH = "flush"
    STRAIGHT = "straight"
    THREE_OF_A_KIND = "three_of_a_kind"
    TWO_PAIR = "two_pair"
    ONE_PAIR = "one_pair"
    HIGH_CARD = "high_card"


class TieBreak(StrEnum):
    """Tie-break policies inside a category (RULES S6).

    - key_then_suit (seeds 001, 003, 004): the defining rank(s), then the suit of the
      deciding card; kickers never count.
    - ranks_then_suit (seed 000, 2.5): as key_then_suit, but high card compares all five
      ranks from high to low before the suit of the highest card.
    - all_ranks_then_suit (an operator's variant, not a seed's rule): every category
      compares its defining ranks, then every kicker high to low, then the suit. Configs
      compiled before schema version 2 that say ranks_then_suit meant this.
    """

    KEY_THEN_SUIT = "key_then_suit"
    RANKS_THEN_SUIT = "ranks_then_suit"
    ALL_RANKS_THEN_SUIT = "all_ranks_then_suit"


# The categories whose hands compare all their ranks (kickers included) under each policy.
ALL_RANKS: dict[TieBreak, frozenset[str]] = {
    TieBreak.KEY_THEN_SUIT: frozenset(),
    TieBreak.RANKS_THEN_SUIT: frozenset({"high_card"}),
    TieBreak.ALL_RANKS_THEN_SUIT: frozenset(str(c) for c in Category),
}


DEFAULT_CATEGORIES = tuple(str(c) for c in Category)
WORDS_LIMIT = 1 << 17  # memo entries kept at most (28 cards: 98,280 hands, 24,157 showings)
TABLE_LIMIT = 400_000  # precompute when a deck has at most this many 5-card hands
_FIELDS = 6  # at most five rank fields and one suit field per key


class RankingError(UsageError, ValueError):
    """A ranking setting the engine cannot use (category order, tie-break, deck)."""


def checked_categories(
    categories: Sequence[str], allowed: Sequence[str], game: str
) -> tuple[str, ...]:
    """The profile's category order, refused unless it names each category once."""
    order = tuple(str(c) for c in categories)
    if sorted(order) != sorted(allowed):
        missing = [c for c in allowed if c not in order]
        unknown = sorted({c for c in order if c not in allowed})
        repeated = sorted({c for c in order if order.count(c) > 1})
        parts = [
            f"missing {', '.join(missing)}" if missing else "",
            f"unknown {', '.join(unknown)}" if unknown else "",
            f"repeated {', '.join(repeated)}" if repeated else "",
        ]
        raise RankingError(
            f"{game} categories must list each of {' '.join(allowed)} once: "
            + "; ".join(p for p in parts if p)
        )
    return order


_BY_PATTERN = {
    (4, 1): "four_of_a_kind",
    (3, 2): "full_house",
    (3, 1, 1): "three_of_a_kind",
    (2, 2, 1): "two_pair",
    (2, 1, 1, 1): "one_pair",
}
_CARDS = ("top card", "second card", "third card", "fourth card", "fifth card")
_KICKERS = ("top kicker", "second kicker", "third kicker")
# Names of the rank fields of each category when all its ranks count, in comparison order
# (RULES S6); otherwise a prefix of them is compared (two_pair: two, others: one).
_LABELS = {
    "straight_flush": ("top card",),
    "four_of_a_kind": ("four-of-a-kind rank", "kicker"),
    "full_house": ("three-of-a-kind rank", "pair rank"),
    "flush": _CARDS,
    "straight": ("top card",),
    "three_of_a_kind": ("three-of-a-kind rank",) + _KICKERS[:2],
    "two_pair": ("high pair", "low pair", "kicker"),
    "one_pair": ("pair rank",) + _KICKERS,
    "high_card": _CARDS,
}

# (category, rank fields, position of the suit-deciding card or None, key without suit)
_Entry = tuple[str, tuple[int, ...], "int | None", int]


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


class Stud5Ranking(KeyedRanking):
    """Ranks 5-card hands of ``deck`` under a profile's category order and tie-break.

    Not a dataclass because it owns a lazily built look-up table; its settings
    (``deck``, ``categories``, ``tie_break``, ``wrap_straights``) never change.
    With ``wrap_straights`` the top rank may also play low (A-8-9-T-J, the lowest
    straight, topped by the jack), as the ace does in A-2-3-4-5.
    """

    hand_size = 5

    def __init__(
        self,
        deck: Deck,
        categories: Sequence[str] = DEFAULT_CATEGORIES,
        tie_break: str = TieBreak.KEY_THEN_SUIT,
        wrap_straights: bool = False,
        *,
        table_limit: int = TABLE_LIMIT,
        named: str | None = None,
    ) -> None:
        if len(deck) < 5:
            raise RankingError(f"a stud5 deck needs at least 5 cards, this one has {len(deck)}")
        try:
            self.tie_break = TieBreak(tie_break)
        except ValueError:
            raise RankingError(
                f"tie_break {tie_break!r} is not one of {', '.join(TieBreak)} (RULES S6)"
            ) from None
        self.deck = deck
        self._all_ranks = ALL_RANKS[self.tie_break]
        self.policy_name = named or str(self.tie_break)  # as the config names it (explain)
        self.categories = checked_categories(categories, DEFAULT_CATEGORIES, "stud5")
        self.wrap_straights = bool(wrap_straights)
        self.hand_count = comb(len(deck), 5)
        self.precomputed = self.hand_count <= table_limit
        self._ranks, self._suits = len(deck.ranks), len(deck.suits)
        self._width = max(self._ranks - 1, self._suits - 1, 1).bit_length()
        self._shift = self._width * _FIELDS
        self._strength = {name: len(self.categories) - i for i, name in enumerate(self.categories)}
        self._by_strength = {v: k for k, v in self._strength.items()}
        self._deck_mask = sum(card.mask for card in deck.cards)
        self._shapes: dict[tuple[int, ...], tuple[_Entry, _Entry | None]] = {}
        self._table: dict[int, int] | _DirectLookup | None = None
        self._words: dict[tuple[int, int] | None, str] = {}
        # Showing cards (S7): ties follow this policy; engines before 4 read them alike
        # under every policy (engine/showing.py).
        self.showing = ShowingRanking(deck, self.wrap_straights, self._all_ranks)
        self.showing_before_4 = ShowingRanking(deck, self.wrap_straights, BEFORE_4)

    def key(self, cards: Sequence[Card]) -> int:
        """Strength of a complete hand: larger beats smaller, equal ties (S3, S6).

        One look-up by the hand's bitmask; the cards are checked only when it fails, so
        pass this deck's cards (``deck.parse_cards``), not look-alikes from another deck.
        """
        table = self._table if self._table is not None else self._load()
        try:
            a, b, c, d, e = cards
            return table[a.mask | b.mask | c.mask | d.mask | e.mask]
        except (TypeError, ValueError, AttributeError, KeyError):
            self._check(cards, 5)
            raise

    def hand_keys(self) -> Iterator[int]:
        """The key of every 5-card hand of the deck (from the table when precomputed)."""
        self.prepare()
        lookup = self._load()
        if self.precomputed:
            yield from lookup.values()
            return
        for hand in combinations([card.mask for card in self.deck.cards], 5):
            yield lookup[sum(hand)]

    def classify(self, ranks: tuple[int, ...]) -> tuple[str, str | None]:
        """Category of ascending rank indices in several suits, and in one suit (or None).

        Lets odds count hands by rank multiset on decks too large to enumerate.
        """
        plain, suited = self._shape(ranks)
        return plain[0], (suited[0] if suited is not None else None)

    # ---- words ------------------------------------------------------------------------
    def describe(self, cards: Sequence[Card]) -> str:
        """The hand in words, naming what decides ties: "pair of kings with the king of spades".

        Memoised by the hand's bitmask (showdowns and explanations ask again and again).
        """
        self.key(cards)  # validates the hand
        mask = _mask(cards)
        text = self._words.get(mask)
        if text is None:
            if len(self._words) >= WORDS_LIMIT:
                self._words.clear()  # bounded memory on large decks
            text = self._words[mask] = self._describe(cards)
        return text

    def _describe(self, cards: Sequence[Card]) -> str:
        category, fields, card = self._value(cards)
        name = self.deck.rank_name
        every = category in self._all_ranks  # all ranks count in this category (S6)
        top, tops = name(fields[0]), name(fields[0], True)
        rest = [name(r) for r in fields[1:]] if every else []
        kicker = f", {with_article(rest[-1])} kicker," if rest else ""
        if category in ("straight_flush", "straight"):
            text = f"{top}-high {category_words(category)}"
        elif category == "four_of_a_kind":
            text = f"four {tops}{kicker}"
        elif category == "full_house":
            pair = next(c.rank for c in cards if c.rank != fields[0])
            text = f"full house, {tops} full of {name(pair, True)}"
        elif category in ("flush", "high_card"):
            ranks = "-".join([top, *rest]) if every else top
            suffix = " high" if category == "high_card" else " flush" if every else "-high flush"
            text = ranks + suffix
        elif category == "two_pair":
            text = f"two pair, {tops} and {name(fields[1], True)}{kicker or ','}"
        else:
            of = "three" if category == "three_of_a_kind" else "pair of"
            text = f"{of} {tops}" + (f", {listing(rest)} kickers," if rest else "")
        return f"{text} with the {card.name}" if card is not None else text

    def explain(self, a: Sequence[Card], b: Sequence[Card]) -> str:
        """Why ``a`` beats, loses to or ties with ``b``, naming the rule and policy.

        "pair of kings with the king of spades beats pair of kings with the king of
        hearts: RULES S6, key_then_suit (equal ranks; suit of the deciding card: ...)"
        """
        ka, kb = self.key(a), self.key(b)
        head = f"{self.describe(a)} {outcome(ka, kb)} {self.describe(b)}"
        (cat_a, fields_a, card_a), (cat_b, fields_b, card_b) = self._value(a), self._value(b)
        if cat_a != cat_b:
            high, low = (cat_a, cat_b) if ka > kb else (cat_b, cat_a)
            custom = "" if self.categories == DEFAULT_CATEGORIES else " in this profile's order"
            return (
                f"{head}: RULES S3, {category_words(high)} ranks above "
                f"{category_words(low)}{custom}"
            )
        return f"{head}: RULES S6, {self.policy_name} " + tie_reason(
            self.deck, _LABELS[cat_a], fields_a, fields_b, card_a, card_b
        )

    # ---- showing cards (S7): this policy's `showing` ---------------------------------------
    def showing_key(self, cards: Sequence[Card], mask: int | None = None) -> int:
        """Strength of 1 to 4 face-up cards for who speaks first (RULES S7)."""
        return self.showing.key(cards, mask)

    def describe_showing(self, cards: Sequence[Card], mask: int | None = None) -> str:
        """Face-up cards in words: "pair of kings with the king of spades"."""
        return self.showing.describe(cards, mask)

    def explain_showing(self, a: Sequence[Card], b: Sequence[Card]) -> str:
        """Why face-up cards ``a`` speak before (or after) ``b``: RULES S7."""
        return self.showing.explain(a, b)

    # ---- internals ----------------------------------------------------------------------
    def _load(self) -> dict[int, int] | _DirectLookup:
        """The look-up on first use: hands are evaluated as they come and kept (a replay
        of a few thousand hands meets a few thousand: building the whole table of a small
        deck first would cost more than an audit of them). `prepare` builds it at once."""
        if self._table is None:
            self._table = _DirectLookup(
                self, max(self.hand_count, 1 << 18) if self.precomputed else 1 << 18
            )
        return self._table

    def prepare(self) -> None:
        """Build the whole table of a small deck now (a benchmark's set-up, a long run):
        every `key` after it is one dict look-up."""
        if self.precomputed and type(self._table) is not dict:
            self._table = self._build_table()

    def _build_table(self) -> dict[int, int]:
        cards = [(c.rank, c.suit, c.mask) for c in self.deck.cards]
        key_of = self._key_of
        return {
            b0 | b1 | b2 | b3 | b4: key_of((r0, r1, r2, r3, r4), (s0, s1, s2, s3, s4))
            for (r0, s0, b0), (r1, s1, b1), (r2, s2, b2), (r3, s3, b3), (
                r4,
                s4,
                b4,
            ) in combinations(cards, 5)
        }

    def _key_of(self, ranks: tuple[int, ...], suits: Sequence[int]) -> int:
        """Key of a hand given ranks ascending, suits aligned (canonical card order)."""
        plain, suited = self._shape(ranks)
        s = suits[0]
        _, _, pos, base = suited if suited is not None and all(x == s for x in suits) else plain
        return base if pos is None else base + self._suits - 1 - suits[pos]

    def _shape(self, r: tuple[int, ...]) -> tuple[_Entry, _Entry | None]:
        """Category, fields and deciding position for a rank tuple, plain and one-suited."""
        if r in self._shapes:
            return self._shapes[r]
        groups = sorted(Counter(r).items(), key=lambda rc: (rc[1], rc[0]), reverse=True)
        pattern = tuple(count for _, count in groups)
        # RULES S6: where all ranks count, the defining ranks, then the rest high to low;
        # the deciding suit is the best card of the first group (cards are in canonical
        # order, so the first card of a rank has its strongest suit).
        by_rank = tuple(rank for rank, _ in groups)
        lead = r.index(by_rank[0])
        top = None
        if pattern == (1,) * 5:
            if r[4] - r[0] == 4:
                top = (r[4], 4)
            elif self.wrap_straights and r == (0, 1, 2, 3, self._ranks - 1):
                top = (3, 3)  # A-8-9-T-J: the ace plays low, the jack tops it
        every = self._all_ranks
        plain: tuple[str, tuple[int, ...], int | None]  # as `_entry` takes them
        suited: tuple[str, tuple[int, ...], int | None] | None
        if top is not None:
            plain, suited = ("straight", top[:1], top[1]), ("straight_flush", top[:1], top[1])
        else:
            category = _BY_PATTERN.get(pattern, "high_card")
            if category in every:
                plain = (category, by_rank, lead)
            elif category in ("four_of_a_kind", "full_house", "three_of_a_kind"):
                plain = (category, by_rank[:1], None)  # kickers never count, no suit needed
            else:
                plain = (category, by_rank[:2] if category == "two_pair" else by_rank[:1], lead)
            flush = ("flush", by_rank if "flush" in every else by_rank[:1], 4)
            suited = flush if category == "high_card" else None
        shape = self._shapes[r] = self._entry(*plain), (self._entry(*suited) if suited else None)
        return shape

    def _entry(self, category: str, fields: tuple[int, ...], pos: int | None) -> _Entry:
        packed = pack(fields, self._width)
        packed = packed if pos is None else packed << self._width  # room for the suit
        base = self._strength[category] << self._shift | packed
        return category, fields, pos, base

    def _value(self, cards: Sequence[Card]) -> tuple[str, tuple[int, ...], Card | None]:
        self.key(cards)  # validates the hand
        ordered = sorted(cards, key=RANK_THEN_SUIT)
        plain, suited = self._shape(tuple(map(RANK_OF, ordered)))
        one_suit = len({c.suit for c in ordered}) == 1
        category, fields, pos, _ = suited if suited is not None and one_suit else plain
        return category, fields, (ordered[pos] if pos is not None else None)

    def _check(self, cards: Sequence[Card], size: int) -> None:
        """Raise HandError unless ``cards`` are ``size`` different cards of the deck."""
        if isinstance(cards, str):
            raise HandError(f"{cards!r} is text: read it with deck.parse_cards first")
        if card_count(cards) != size:
            raise HandError(f"{hand_text(cards)}: expected {size} cards, got {card_count(cards)}")
        for card in cards:
            if card not in self.deck:
                raise HandError(f"{hand_text(cards)}: {card} is not a card of this deck")
        if len(set(cards)) != size:
            raise HandError(f"{hand_text(cards)}: a card is repeated")


class _DirectLookup(dict[int, int]):
    """The table's stand-in on large decks: a key is evaluated on first use and kept."""

    def __init__(self, ranking: Stud5Ranking, limit: int = 1 << 18) -> None:
        super().__init__()
        self._ranking, self._limit = ranking, limit

    def __missing__(self, mask: int) -> int:
        ranking = self._ranking
        if mask.bit_count() != 5 or mask & ~ranking._deck_mask:
            raise KeyError(mask)
        if len(self) >= self._limit:
            self.clear()  # bounded memory: 2.6M keys of a 52-card deck would be ~300 MB
        bits = []  # the five bits, low to high: canonical order
        rest = mask
        while rest:
            low = rest & -rest
            bits.append(low.bit_length() - 1)
            rest ^= low
        key = self[mask] = ranking._key_of(
            tuple(b >> SUIT_BITS for b in bits), [b & ((1 << SUIT_BITS) - 1) for b in bits]
        )
        return key
