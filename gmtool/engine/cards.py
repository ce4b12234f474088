"""Cards and decks: what a card is, how a profile's deck is declared, how text is read.

A profile declares its deck as rank symbols low to high and suit symbols high to low
(RULES S1/S2: ``8 9 T J Q K A`` and ``S H C D`` for showhand, 2..A for three-card).
A ``Card`` holds indices into those lists, so every comparison in the engine is
integer arithmetic and no ranking code assumes a 28-card deck.

Card text is what operators and players type: ``"AS KS QS JS TS"``, ``"10D"``, ``"a♠"``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from operator import attrgetter

from gmtool.errors import UsageError

# Suit glyphs (black and white forms) and the letters they stand for.
SUIT_GLYPHS = {"♠": "S", "♥": "H", "♣": "C", "♦": "D", "♤": "S", "♡": "H", "♧": "C", "♢": "D"}
PRETTY_SUITS = {"S": "♠", "H": "♥", "C": "♣", "D": "♦"}
SUIT_WORDS = {"S": "spades", "H": "hearts", "C": "clubs", "D": "diamonds"}
RANK_WORDS = {
    "2": "two",
    "3": "three",
    "4": "four",
    "5": "five",
    "6": "six",
    "7": "seven",
    "8": "eight",
    "9": "nine",
    "T": "ten",
    "J": "jack",
    "Q": "queen",
    "K": "king",
    "A": "ace",
}
_VARIATION_SELECTOR = "\ufe0f"  # "♠️" as typed on phones
SUIT_BITS = 3  # a card's mask bit is rank * 8 + suit, so a deck has at most 8 suits
RANK_THEN_SUIT = attrgetter("rank", "suit")  # a card's canonical order: a sort key
RANK_OF = attrgetter("rank")


class CardError(UsageError, ValueError):
    """A card or card list that cannot be read for this deck."""


class DeckError(UsageError, ValueError):
    """A deck declaration (ranks, suits) that cannot be used."""


class HandError(UsageError, ValueError):
    """A hand that cannot be ranked: wrong number of cards, a repeat or a foreign card."""


def rank_word(symbol: str, plural: bool = False) -> str:
    """English name of a rank symbol for explanations: "king", "kings", "sixes"."""
    word = RANK_WORDS.get(symbol, symbol)
    if not plural:
        return word
    return word + ("es" if word.endswith(("x", "s")) else "s")


def with_article(word: str) -> str:
    """A word with its indefinite article: "an ace", "a nine"."""
    return ("an " if word[:1] in "aeiou" else "a ") + word


def suit_word(symbol: str) -> str:
    """English name of a suit symbol for explanations: "spades"."""
    return SUIT_WORDS.get(symbol, symbol)


def listing(items: Sequence[str]) -> str:
    """Words as an English list: "ace, queen and nine"."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def category_words(category: str) -> str:
    """A category id as words for sentences: "one_pair" -> "one pair"."""
    return category.replace("_", " ")


def outcome(key_a: int, key_b: int) -> str:
    """The verb for hand ``a`` against hand ``b`` given their keys."""
    return "beats" if key_a > key_b else "loses to" if key_a < key_b else "ties with"


def hand_text(cards: object) -> str:
    """Cards as text for an error message, whatever was passed."""
    try:
        return " ".join(str(card) for card in cards)  # type: ignore[attr-defined]
    except TypeError:
        return repr(cards)


def card_count(cards: object) -> int:
    """How many cards were passed (0 for something that is not a sequence)."""
    try:
        return len(cards)  # type: ignore[arg-type]
    except TypeError:
        return 0


@dataclass(frozen=True, slots=True, repr=False)
class Card:
    """One card of a deck: rank index (low to high) and suit index (0 = strongest).

    The indices make ranking integer arithmetic; the symbols render the card ("AS",
    "A♠") and keep the 8 of spades of a 28-card deck distinct from the 2 of spades of
    a 52-card deck, which has the same indices. Decks build their cards: use
    ``deck.parse_card`` or ``deck.card``.

    ``mask`` is the card's bit for hand bitmasks (bit ``rank * 8 + suit``): a hand's
    mask is the OR of its cards' masks, which is what ranking tables are keyed by.
    """

    rank: int
    suit: int
    rank_symbol: str
    suit_symbol: str
    mask: int = field(init=False, repr=False, compare=False)
    text: str = field(init=False, repr=False, compare=False)  # "AS", as events record it

    def __post_init__(self) -> None:
        if self.rank < 0 or not 0 <= self.suit < 1 << SUIT_BITS:
            raise CardError(f"card indices out of range: rank {self.rank}, suit {self.suit}")
        object.__setattr__(self, "mask", 1 << (self.rank << SUIT_BITS | self.suit))
        object.__setattr__(self, "text", self.rank_symbol + self.suit_symbol)

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Card({self}: rank={self.rank}, suit={self.suit})"

    @property
    def pretty(self) -> str:
        """The card with a suit glyph: "A♠"."""
        return self.rank_symbol + PRETTY_SUITS.get(self.suit_symbol, self.suit_symbol)

    @property
    def name(self) -> str:
        """The card in words: "king of spades"."""
        return f"{rank_word(self.rank_symbol)} of {suit_word(self.suit_symbol)}"


def _rank_symbol(text: str) -> str:
    symbol = text.strip().upper()
    return "T" if symbol == "10" else symbol


def _suit_symbol(text: str) -> str:
    symbol = text.strip().replace(_VARIATION_SELECTOR, "").upper()
    return SUIT_GLYPHS.get(symbol, symbol)


def _symbols(
    values: str | Sequence[str], normalise: Callable[[str], str], what: str
) -> tuple[str, ...]:
    items = values.replace(",", " ").split() if isinstance(values, str) else list(values)
    symbols = tuple(normalise(str(item)) for item in items)
    if not symbols:
        raise DeckError(f"a deck needs at least one {what}")
    for symbol in symbols:
        if len(symbol) != 1 or symbol.isspace() or symbol == ",":
            raise DeckError(f"{what} symbol {symbol!r} must be one character (T for ten)")
    if len(set(symbols)) != len(symbols):
        raise DeckError(f"{what} symbols repeat: {' '.join(symbols)}")
    if what == "suit" and len(symbols) > 1 << SUIT_BITS:
        raise DeckError(f"a deck has at most {1 << SUIT_BITS} suits, not {len(symbols)}")
    return symbols


@dataclass(frozen=True)
class Deck:
    """A deck declared by a profile: every rank in every suit, in canonical order.

    ``cards`` runs rank ascending, then suit in listed order (8S 8H 8C 8D 9S ...);
    that order is the one the shuffle starts from, so it is part of the audit trail.
    """

    ranks: tuple[str, ...]
    suits: tuple[str, ...]
    cards: tuple[Card, ...] = field(init=False, repr=False, compare=False)
    _by_symbols: dict[tuple[str, str], Card] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        ranks = _symbols(self.ranks, _rank_symbol, "rank")
        suits = _symbols(self.suits, _suit_symbol, "suit")
        cards = tuple(
            Card(rank, suit, rank_symbol, suit_symbol)
            for rank, rank_symbol in enumerate(ranks)
            for suit, suit_symbol in enumerate(suits)
        )
        object.__setattr__(self, "ranks", ranks)
        object.__setattr__(self, "suits", suits)
        object.__setattr__(self, "cards", cards)
        object.__setattr__(self, "_by_symbols", {(c.rank_symbol, c.suit_symbol): c for c in cards})

    @classmethod
    def from_config(cls, ranks: str | Sequence[str], suits: str | Sequence[str]) -> Deck:
        """Build a deck from a profile's ranks (low to high) and suits (high to low).

        Either lists (``["8", "9", "T"]``) or the profile's strings (``"8 9 T"``);
        "10" is read as "T" and suit glyphs as letters. Raises DeckError.
        """
        return cls(ranks, suits)  # type: ignore[arg-type]  # __post_init__ normalises

    @classmethod
    def showhand(cls) -> Deck:
        """The 28-card showhand deck of RULES S1: 8 9 T J Q K A in S H C D."""
        return cls.from_config("8 9 T J Q K A", "S H C D")

    @classmethod
    def full(cls) -> Deck:
        """The 52-card deck of RULES H1: 2..A in S H C D."""
        return cls.from_config("2 3 4 5 6 7 8 9 T J Q K A", "S H C D")

    def __len__(self) -> int:
        return len(self.cards)

    def __iter__(self) -> Iterator[Card]:
        return iter(self.cards)

    def __contains__(self, card: object) -> bool:
        if not isinstance(card, Card):
            return False
        found = self._by_symbols.get((card.rank_symbol, card.suit_symbol))
        return found is card or found == card  # (the deck's own card: no __eq__ call)

    def card(self, rank: int, suit: int) -> Card:
        """The deck's card at rank index ``rank`` and suit index ``suit``."""
        if not (0 <= rank < len(self.ranks) and 0 <= suit < len(self.suits)):
            raise CardError(f"no card with rank index {rank} and suit index {suit} in this deck")
        return self.cards[rank * len(self.suits) + suit]

    def index(self, card: Card) -> int:
        """Position of ``card`` in canonical order (0 = lowest rank, strongest suit)."""
        if card not in self:
            raise CardError(f"{card} is not a card of this deck")
        return card.rank * len(self.suits) + card.suit

    def parse_card(self, text: str) -> Card:
        """Read one card: rank then suit, "AS", "10d", "T♦", "a♠" (case-insensitive)."""
        token = text.strip().replace(_VARIATION_SELECTOR, "")
        if len(token) < 2:
            raise CardError(f"{text!r} is not a card: write rank then suit, like AS or 10D")
        key = (_rank_symbol(token[:-1]), _suit_symbol(token[-1]))
        card = self._by_symbols.get(key)
        if card is None:
            raise CardError(
                f"{text!r} is not a card of this deck (ranks {' '.join(self.ranks)}; "
                f"suits {' '.join(self.suits)})"
            )
        return card

    def parse_cards(self, text: str | Iterable[str]) -> tuple[Card, ...]:
        """Read cards separated by spaces or commas, "AS KS QS JS TS"; refuse duplicates.

        Raises CardError naming the first bad or repeated token.
        """
        tokens = text.replace(",", " ").split() if isinstance(text, str) else list(text)
        cards: list[Card] = []
        for token in tokens:
            card = self.parse_card(token)
            if card in cards:
                raise CardError(f"{token!r} is listed twice (as {card})")
            cards.append(card)
        return tuple(cards)

    def rank_name(self, rank: int, plural: bool = False) -> str:
        """Rank index in words for explanations: "king" (or "kings")."""
        return rank_word(self.ranks[rank], plural)

    def suit_name(self, suit: int) -> str:
        """Suit index in words for explanations: "spades"."""
        return suit_word(self.suits[suit])

    def format(self, cards: Iterable[Card]) -> str:
        """Cards as text the parser reads back: "AS KS QS JS TS"."""
        return " ".join(str(card) for card in cards)
