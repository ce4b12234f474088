"""Suihua three-card ranking: RULES H9 (order, straights, no suit ties) and H10 (census)."""

from __future__ import annotations

import hashlib
import os
from collections import Counter, defaultdict
from itertools import combinations
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gmtool.engine.cards import Card, Deck, HandError
from gmtool.engine.odds import category_counts, odds_report
from gmtool.engine.ranking import RankingError
from gmtool.engine.ranking3 import DEFAULT_CATEGORIES3, ThreeCardRanking

DECK = Deck.full()
RANKING = ThreeCardRanking(DECK, DEFAULT_CATEGORIES3, True)
ALL_HANDS = list(combinations(DECK.cards, 3))
DIGEST = Path(__file__).parent / "data" / "ranking" / "three-card-52.sha256"
H10_CENSUS = {
    "trips": 52,
    "straight_flush": 48,
    "straight": 720,
    "flush": 1096,
    "pair": 3744,
    "high_card": 16440,
}


def hand(text: str):
    return DECK.parse_cards(text)


def reference(cards, low_ace: bool = True, order=DEFAULT_CATEGORIES3):
    """RULES H9 read literally; tuples compare like the hands (suits play no part)."""
    values = sorted((c.rank for c in cards), reverse=True)
    count = Counter(values)
    flush = len({c.suit for c in cards}) == 1
    straight = len(count) == 3 and values[0] - values[2] == 2
    if low_ace and set(values) == {12, 0, 1}:  # A-2-3, the lowest straight
        straight, values = True, [1, 0, -1]
    if len(count) == 1:
        category = "trips"
    elif len(count) == 2:
        pair = next(r for r in count if count[r] == 2)
        category, values = "pair", [pair, next(r for r in count if count[r] == 1)]
    elif straight:
        category = "straight_flush" if flush else "straight"
    else:
        category = "flush" if flush else "high_card"
    return (-order.index(category), tuple(values))


def cmp(x, y) -> int:
    return (x > y) - (x < y)


def test_h10_census_of_three_cards_from_52() -> None:
    """H10 Exact census of 3 cards from 52: trips 52, straight flush 48, straight 720,
    flush 1,096, pair 3,744, high card 16,440; total 22,100."""
    assert RANKING.hand_count == 22_100 and len(RANKING._load()) == 22_100
    assert Counter(RANKING.category(cards) for cards in ALL_HANDS) == H10_CENSUS
    assert category_counts(RANKING) == H10_CENSUS


def test_h9_every_hand_is_ordered_as_the_rules_say() -> None:
    """H9 Ranking: trips > straight flush > straight > flush > pair > high card; within a
    category highest card, then second, then third; pair: the pair, then the single."""
    pairs = sorted((reference(cards), RANKING.key(cards)) for cards in ALL_HANDS)
    for (ref_a, key_a), (ref_b, key_b) in zip(pairs, pairs[1:]):
        assert (key_a < key_b) if ref_a < ref_b else (key_a == key_b)


@pytest.mark.parametrize(
    "stronger, weaker",
    [
        ("2S 2H 2C", "AS KS QS"),  # trips above straight flush
        ("AS 2S 3S", "KH AH QC"),  # straight flush above straight
        ("2S 3H 4C", "AS KS 9S"),  # straight above flush
        ("AS KS 9S", "AH AD KC"),  # flush above pair
        ("2S 2H 3C", "AS KD JC"),  # pair above high card
        ("QS KH AC", "JS QH KC"),  # Q-K-A is the highest straight
        ("2S 3H 4C", "AS 2H 3C"),  # A-2-3 is the lowest straight
        ("KS KH 2C", "QS QH AC"),  # pair: the pair first
        ("KS KH AC", "KC KD QS"),  # then the single
        ("AS KH 3C", "AH KD 2S"),  # high card: third card decides
    ],
)
def test_h9_examples(stronger: str, weaker: str) -> None:
    """H9 Ranks 2..A with A high; A-2-3 is the lowest straight and Q-K-A the highest."""
    assert RANKING.compare(hand(stronger), hand(weaker)) == 1


def test_h9_k_a_2_is_not_a_straight() -> None:
    """H9: only A-2-3 wraps; K-A-2 is ace-high."""
    assert RANKING.category(hand("KS AH 2C")) == "high_card"
    assert RANKING.category(hand("AS 2H 3C")) == "straight"
    assert RANKING.describe(hand("AS 2H 3C")) == "three-high straight (ace low)"


def test_h9_without_low_ace_a_2_3_is_ace_high() -> None:
    """H9 profile switch low_ace_straight = false: A-2-3 is no straight."""
    plain = ThreeCardRanking(DECK, DEFAULT_CATEGORIES3, False)
    assert plain.category(hand("AS 2H 3C")) == "high_card"
    counts = category_counts(plain)
    assert (counts["straight_flush"], counts["straight"], sum(counts.values())) == (44, 660, 22_100)


def test_h9_suits_never_break_ties() -> None:
    """H9 Suits never break ties (equal hands resolve by H7/H8)."""
    a, b = hand("KS KH AC"), hand("KC KD AH")
    assert RANKING.key(a) == RANKING.key(b) and RANKING.compare(a, b) == 0
    assert RANKING.key(hand("AS KS 9S")) == RANKING.key(hand("AD KD 9D"))
    text = RANKING.explain(a, b)
    assert "equal hands" in text and "RULES H9" in text and "H7" in text and "H8" in text


def test_h9_explain_names_the_rule() -> None:
    assert RANKING.explain(hand("KS KH AC"), hand("KC KD QS")) == (
        "pair of kings with an ace beats pair of kings with a queen: RULES H9 "
        "(single card: ace against queen)"
    )
    assert RANKING.explain(hand("2S 3H 4C"), hand("2H 2D 2C")) == (
        "four-high straight loses to trips, three twos: RULES H9, trips ranks above straight"
    )
    assert RANKING.describe(hand("AS KS 9S")) == "ace-king-nine flush"
    assert RANKING.describe(hand("AS KH 9S")) == "ace-king-nine high"


def order_digest(ranking: ThreeCardRanking, hands) -> str:
    """Same format as test_engine_ranking.order_digest (tests/data/ranking/README.md)."""
    by_key: dict[int, list[str]] = defaultdict(list)
    for cards in hands:
        by_key[ranking.key(cards)].append(" ".join(str(c) for c in cards))
    text = "".join(" | ".join(by_key[key]) + "\n" for key in sorted(by_key))
    return hashlib.sha256(text.encode()).hexdigest()


def test_h9_order_of_all_22100_hands_matches_stored_digest() -> None:
    """H9: the complete three-card order (equal hands grouped) is frozen as data."""
    digest = order_digest(RANKING, ALL_HANDS)
    if os.environ.get("GMTOOL_UPDATE_DIGESTS") == "1":
        DIGEST.write_text(digest + "\n", encoding="utf-8")
        pytest.skip(f"wrote {DIGEST.name}")
    assert digest == DIGEST.read_text(encoding="utf-8").strip()


hands = st.lists(st.sampled_from(DECK.cards), min_size=3, max_size=3, unique=True)


@given(a=hands, b=hands, c=hands)
def test_three_card_ranking_is_a_total_preorder(a, b, c) -> None:
    """Antisymmetric and transitive; equal only where H9 says the hands are equal."""
    assert RANKING.compare(a, b) == -RANKING.compare(b, a)
    if RANKING.compare(a, b) >= 0 and RANKING.compare(b, c) >= 0:
        assert RANKING.compare(a, c) >= 0
    assert RANKING.compare(a, b) == cmp(reference(a), reference(b))


@settings(max_examples=40, deadline=None)
@given(order=st.permutations(DEFAULT_CATEGORIES3), a=hands, b=hands)
def test_h9_changing_category_order_changes_keys_accordingly(order, a, b) -> None:
    """The category order is a profile setting for three-card too."""
    ranking = ThreeCardRanking(DECK, order, True)
    cat_a, cat_b = ranking.category(a), ranking.category(b)
    if cat_a != cat_b:
        assert ranking.compare(a, b) == (1 if order.index(cat_a) < order.index(cat_b) else -1)
    else:
        assert ranking.compare(a, b) == RANKING.compare(a, b)


def test_h10_odds_note_the_rarer_straight_flush_below_trips() -> None:
    rows, notes = odds_report(RANKING)
    assert [(row["name"], row["count"], row["rank"]) for row in rows][:2] == [
        ("trips", 52, 1),
        ("straight_flush", 48, 2),
    ]
    assert notes == ["straight_flush (48 hands) ranks below trips (52 hands) though it is rarer"]


def test_wrong_three_card_hands_raise() -> None:
    with pytest.raises(HandError, match="3 cards"):
        RANKING.key(hand("AS KS"))
    ace = hand("AS")[0]
    with pytest.raises(HandError, match="repeated"):
        RANKING.key([ace, ace, hand("KS")[0]])
    with pytest.raises(HandError, match="not a card of this deck"):
        RANKING.key([*hand("AS KS"), Card(13, 0, "X", "S")])
    with pytest.raises(RankingError, match="missing high_card"):
        ThreeCardRanking(DECK, DEFAULT_CATEGORIES3[:-1], True)
