"""Deck strings of a profile (`ranks = "8 9 T J Q K A"`, `suits = "S H C D"`) to symbol lists."""

from __future__ import annotations

from gmtool.errors import UsageError

RANK_SYMBOLS = ("2", "3", "4", "5", "6", "7", "8", "9", "T", "J", "Q", "K", "A")
SUIT_SYMBOLS = ("S", "H", "C", "D")
_RANK_ALIASES = {"10": "T"}
_SUIT_ALIASES = {"♠": "S", "♥": "H", "♣": "C", "♦": "D"}


class DeckSpecError(UsageError, ValueError):
    """A deck string names an unknown or repeated rank or suit."""


def _symbols(text: str, known: tuple[str, ...], aliases: dict[str, str], what: str) -> list[str]:
    symbols: list[str] = []
    for token in text.replace(",", " ").split():
        symbol = aliases.get(token, token.upper())
        if symbol not in known:
            raise DeckSpecError(f"unknown {what} {token!r}; use {' '.join(known)}")
        if symbol in symbols:
            raise DeckSpecError(f"{what} {token!r} appears twice")
        symbols.append(symbol)
    if len(symbols) < 2:
        raise DeckSpecError(f"a deck needs at least two {what}s")
    return symbols


def parse_ranks(text: str) -> list[str]:
    """Ranks low to high as canonical symbols; "10" is accepted for "T"."""
    return _symbols(text, RANK_SYMBOLS, _RANK_ALIASES, "rank")


def parse_suits(text: str) -> list[str]:
    """Suits high to low as canonical symbols; ♠ ♥ ♣ ♦ are accepted."""
    return _symbols(text, SUIT_SYMBOLS, _SUIT_ALIASES, "suit")
