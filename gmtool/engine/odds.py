"""Exact category counts for a profile's deck, and where the order defies rarity (RULES S3).

Operators choose the category order (S3); in a 28-card deck a flush (72 hands) is rarer
than a full house (1,008) yet the seeds rank it below. ``odds_report`` shows the exact
counts (the census of S5 and H10) and a note for every such inversion, so the choice is
made knowingly. Counts come from enumerating every hand through the ranking itself, so
they describe exactly what the engine will do.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from itertools import combinations_with_replacement
from math import comb
from typing import Protocol


class Ranking(Protocol):
    """What odds needs from ``Stud5Ranking`` or ``ThreeCardRanking``."""

    hand_size: int
    hand_count: int
    precomputed: bool
    categories: tuple[str, ...]

    def hand_keys(self) -> Iterator[int]: ...

    def category_of_key(self, key: int) -> str: ...


def category_counts(ranking: Ranking) -> dict[str, int]:
    """Hands of the deck per category, in the ranking's order (high to low).

    Enumerates every hand's key from the ranking's table (98,280 for 28 cards,
    22,100 for three-card). A deck too large for a table (52-card stud5: 2.6M hands)
    is counted per rank multiset instead, classified by the same ranking code.
    """
    if not ranking.precomputed:
        return _counts_by_rank_multiset(ranking)
    counts = dict.fromkeys(ranking.categories, 0)
    for key, hands in Counter(ranking.hand_keys()).items():
        counts[ranking.category_of_key(key)] += hands
    return counts


def odds_report(ranking: Ranking) -> tuple[list[dict[str, object]], list[str]]:
    """Rows {"name", "count", "probability", "rank"} (rank 1 = highest) and notes.

    A note is written wherever a rarer category ranks below a more frequent one:
    "flush (72 hands) ranks below full_house (1,008 hands) though it is rarer".
    """
    counts = category_counts(ranking)
    total = sum(counts.values())
    rows: list[dict[str, object]] = [
        {
            "name": name,
            "count": count,
            "probability": count / total if total else 0.0,
            "rank": position,
        }
        for position, (name, count) in enumerate(counts.items(), start=1)
    ]
    order = list(counts)
    notes = [
        f"{lower} ({_hands(counts[lower])}) ranks below {higher} ({_hands(counts[higher])}) "
        "though it is rarer"
        for i, lower in enumerate(order)
        for higher in order[:i]
        if counts[lower] < counts[higher]
    ]
    return rows, notes


def _counts_by_rank_multiset(ranking: Ranking) -> dict[str, int]:
    """Stud5 counts without enumerating hands one by one.

    A rank multiset with multiplicities m_i is held in prod C(suits, m_i) ways; when
    its five ranks differ, ``suits`` of those ways are all one suit (flush or straight
    flush). ``ranking.classify`` names the category of both cases.
    """
    deck = ranking.deck  # type: ignore[attr-defined]
    suits = len(deck.suits)
    counts = dict.fromkeys(ranking.categories, 0)
    for multiset in combinations_with_replacement(range(len(deck.ranks)), ranking.hand_size):
        ways = 1
        for held in Counter(multiset).values():
            ways *= comb(suits, held)  # 0 when a rank repeats more often than there are suits
        if not ways:
            continue
        plain, one_suit = ranking.classify(multiset)  # type: ignore[attr-defined]
        if one_suit is not None:
            counts[one_suit] += suits
            ways -= suits
        counts[plain] += ways
    return counts


def _hands(count: int) -> str:
    return f"{count:,} hand" + ("" if count == 1 else "s")
