"""Cards and decks: RULES S1/S2 (the 28-card deck) and reading card text."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from gmtool.engine.cards import Card, CardError, Deck, DeckError

ENGINE = Path(__file__).resolve().parents[1] / "gmtool" / "engine"
ENGINE_MODULES = ["__init__.py", "cards.py", "ranking.py", "ranking3.py", "deck.py", "odds.py"]
ALLOWED_IMPORTS = {
    "__future__",
    "hashlib",
    "hmac",
    "struct",
    "itertools",
    "functools",
    "dataclasses",
    "enum",
    "math",
    "operator",
    "typing",
    "collections",
    "gmtool",
}


@pytest.fixture(scope="module")
def deck() -> Deck:
    return Deck.showhand()


def test_s1_deck_has_28_cards_8_to_ace_in_four_suits(deck: Deck) -> None:
    """S1 Deck: ranks 8 9 10 J Q K A, suits spade > heart > club > diamond: 28 cards."""
    assert len(deck) == 28
    assert deck.ranks == ("8", "9", "T", "J", "Q", "K", "A")
    assert deck.suits == ("S", "H", "C", "D")


def test_s1_canonical_order_is_rank_then_listed_suit(deck: Deck) -> None:
    """S1: the deck's canonical order (the shuffle's starting point) is 8S 8H 8C 8D 9S ..."""
    assert deck.format(deck.cards[:6]) == "8S 8H 8C 8D 9S 9H"
    assert str(deck.cards[-1]) == "AD"
    assert [deck.index(card) for card in deck.cards] == list(range(28))


def test_s2_rank_and_suit_indices_follow_the_rule_order(deck: Deck) -> None:
    """S2 Rank order A > K > ... > 8; suit order spade > heart > club > diamond."""
    ace, eight = deck.parse_card("AS"), deck.parse_card("8S")
    assert ace.rank > eight.rank
    spade, heart, club, diamond = (deck.parse_card(t).suit for t in ("KS", "KH", "KC", "KD"))
    assert spade < heart < club < diamond  # suit 0 is the strongest


def test_s1_a_profile_may_declare_another_deck() -> None:
    """S1: a profile may declare another deck, for example all 52 cards."""
    full = Deck.full()
    assert len(full) == 52
    assert str(full.cards[0]) == "2S"
    declared = Deck.from_config(["8", "9", "10", "J", "Q", "K", "A"], ["♠", "♥", "♣", "♦"])
    assert declared == Deck.showhand()
    assert Deck.from_config("8 9 T J Q K A", "S H C D") == Deck.showhand()


@pytest.mark.parametrize(
    "text, expected",
    [
        ("10D", "TD"),
        ("td", "TD"),
        ("A♠", "AS"),
        ("a♠", "AS"),
        ("A♠\ufe0f", "AS"),
        ("k♥", "KH"),
        ("Q♣", "QC"),
        ("j♦", "JD"),
        (" 9s ", "9S"),
    ],
)
def test_parse_card_accepts_ten_glyphs_and_any_case(deck: Deck, text: str, expected: str) -> None:
    assert str(deck.parse_card(text)) == expected
    assert deck.parse_card(text) == deck.parse_card(expected)


def test_parse_cards_splits_on_spaces_and_commas(deck: Deck) -> None:
    cards = deck.parse_cards("AS, KS QS,JS  10S")
    assert deck.format(cards) == "AS KS QS JS TS"
    assert deck.parse_cards("") == ()


@pytest.mark.parametrize(
    "text, bad",
    [
        ("AS KS 1S", "'1S'"),
        ("AS ZZ", "'ZZ'"),
        ("AS 2S", "'2S'"),
        ("AS X", "'X'"),
        ("AS K", "'K'"),
    ],
)
def test_parse_cards_names_the_bad_token(deck: Deck, text: str, bad: str) -> None:
    with pytest.raises(CardError, match=bad):
        deck.parse_cards(text)


def test_parse_cards_refuses_duplicates(deck: Deck) -> None:
    with pytest.raises(CardError, match="'as' is listed twice"):
        deck.parse_cards("AS KS as")
    with pytest.raises(CardError, match="twice"):
        deck.parse_cards("10D TD")


def test_card_renders_as_text_glyph_and_words(deck: Deck) -> None:
    card = deck.parse_card("AS")
    assert (str(card), card.pretty, card.name) == ("AS", "A♠", "ace of spades")
    assert Deck.full().parse_card("6H").name == "six of hearts"
    assert deck.rank_name(5, plural=True) == "kings"
    assert Deck.full().rank_name(4, plural=True) == "sixes"
    assert deck.suit_name(3) == "diamonds"
    assert "AS" in repr(card)


def test_card_from_another_deck_is_not_in_this_one(deck: Deck) -> None:
    two_of_spades = Deck.full().parse_card("2S")  # same indices as 8S of the 28-card deck
    assert two_of_spades != deck.parse_card("8S")
    assert two_of_spades not in deck
    with pytest.raises(CardError):
        deck.index(two_of_spades)
    assert deck.card(0, 0) == deck.parse_card("8S")
    with pytest.raises(CardError):
        deck.card(7, 0)


def test_card_refuses_negative_indices() -> None:
    with pytest.raises(CardError):
        Card(-1, 0, "8", "S")


@pytest.mark.parametrize(
    "ranks, suits, message",
    [
        ("8 9 9", "S H", "repeat"),
        ("", "S H", "at least one rank"),
        ("8 9 T", "", "at least one suit"),
        ("8 9", "A B C D E F G H I", "at most 8 suits"),
        ("8 9 XY", "S H", "one character"),
        ("8 9", "S ♠", "repeat"),
    ],
)
def test_bad_deck_declarations_are_refused(ranks: str, suits: str, message: str) -> None:
    with pytest.raises(DeckError, match=message):
        Deck.from_config(ranks, suits)


def test_decks_are_values() -> None:
    assert hash(Deck.showhand()) == hash(Deck.from_config("8 9 T J Q K A", "S H C D"))
    assert Deck.showhand() != Deck.full()


@pytest.mark.parametrize("module", ENGINE_MODULES)
def test_engine_imports_only_the_standard_library(module: str) -> None:
    """docs/architecture.md: the engine is pure; it imports no I/O library (no random,
    time, typer ...)."""
    tree = ast.parse((ENGINE / module).read_text(encoding="utf-8"))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add((node.module or "").split(".")[0])
    assert imported <= ALLOWED_IMPORTS, imported - ALLOWED_IMPORTS
