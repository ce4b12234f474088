"""Five-card showhand ranking: RULES S3-S7, checked against the rules' own words.

``reference`` below restates S3/S4/S6 literally as a sortable tuple; the engine's
table must order every hand of the 28-card deck exactly as it does. The stored
digests in tests/data/ranking/ freeze that order (see the README there).
"""

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
from gmtool.engine.ranking import DEFAULT_CATEGORIES, RankingError, Stud5Ranking

DECK = Deck.showhand()
FULL = Deck.full()
POLICIES = ("key_then_suit", "ranks_then_suit", "all_ranks_then_suit")
RANKINGS = {policy: Stud5Ranking(DECK, DEFAULT_CATEGORIES, policy, False) for policy in POLICIES}
ALL_HANDS = list(combinations(DECK.cards, 5))
DIGESTS = Path(__file__).parent / "data" / "ranking"
S5_CENSUS = {
    "straight_flush": 12,
    "four_of_a_kind": 168,
    "full_house": 1008,
    "flush": 72,
    "straight": 3060,
    "three_of_a_kind": 6720,
    "two_pair": 15120,
    "one_pair": 53760,
    "high_card": 18360,
}
POKER_CENSUS = {  # 52 cards, the ace also low (A-2-3-4-5): the textbook counts
    "straight_flush": 40,
    "four_of_a_kind": 624,
    "full_house": 3744,
    "flush": 5108,
    "straight": 10200,
    "three_of_a_kind": 54912,
    "two_pair": 123552,
    "one_pair": 1098240,
    "high_card": 1302540,
}


def hand(text: str, deck: Deck = DECK) -> tuple[Card, ...]:
    return deck.parse_cards(text)


def reference(cards, policy: str, wrap: bool = False, order=DEFAULT_CATEGORIES, ranks: int = 7):
    """RULES S3, S4 and S6 read literally; tuples compare like the hands."""
    high_to_low = sorted((c.rank for c in cards), reverse=True)
    count = Counter(high_to_low)
    flush = len({c.suit for c in cards}) == 1
    top = None
    if len(count) == 5 and high_to_low[0] - high_to_low[4] == 4:
        top = high_to_low[0]
    elif len(count) == 5 and wrap and set(high_to_low) == {0, 1, 2, 3, ranks - 1}:
        top = 3

    def suit_of_best(rank: int) -> int:  # larger = stronger suit
        return -min(c.suit for c in cards if c.rank == rank)

    quad = [r for r in count if count[r] == 4]
    trips = [r for r in count if count[r] == 3]
    pairs = sorted((r for r in count if count[r] == 2), reverse=True)
    singles = sorted((r for r in count if count[r] == 1), reverse=True)
    if top is not None and flush:
        category, defining, rest = "straight_flush", [top], []
    elif quad:
        category, defining, rest = "four_of_a_kind", quad, singles
    elif trips and pairs:
        category, defining, rest = "full_house", trips, pairs
    elif flush:
        category, defining, rest = "flush", high_to_low, []
    elif top is not None:
        category, defining, rest = "straight", [top], []
    elif trips:
        category, defining, rest = "three_of_a_kind", trips, singles
    elif len(pairs) == 2:
        category, defining, rest = "two_pair", pairs, singles
    elif pairs:
        category, defining, rest = "one_pair", pairs, singles
    else:
        category, defining, rest = "high_card", high_to_low, []
    every = policy == "all_ranks_then_suit" or (
        policy == "ranks_then_suit" and category == "high_card"
    )
    if every:  # defining ranks, the remaining ranks high to low, then the suit
        ties = (*defining, *rest, suit_of_best(defining[0]))
    elif category in ("four_of_a_kind", "full_house", "three_of_a_kind"):
        ties = (defining[0],)  # "the quad rank", "the trips rank"
    elif category == "two_pair":
        ties = (pairs[0], pairs[1], suit_of_best(pairs[0]))
    else:  # highest card (or the pair) rank, then that card's suit
        ties = (defining[0], suit_of_best(defining[0]))
    return (-order.index(category), ties)


def sign(x) -> int:
    return (x > 0) - (x < 0)


def cmp(x, y) -> int:
    return (x > y) - (x < y)


# ---- S5 / S4: census and straights -------------------------------------------------------


@pytest.mark.parametrize("policy", POLICIES)
def test_s5_census_of_28_card_deck(policy: str) -> None:
    """S5 Exact census of the 28-card deck: straight flush 12, four of a kind 168, full
    house 1,008, flush 72, straight 3,060, three of a kind 6,720, two pair 15,120, one
    pair 53,760, high card 18,360; total 98,280."""
    ranking = RANKINGS[policy]
    assert ranking.precomputed and ranking.hand_count == 98_280
    ranking.prepare()  # the whole table at once (else a hand's key is made on first use)
    assert len(ranking._load()) == 98_280  # the table holds every hand once
    assert Counter(ranking.category(cards) for cards in ALL_HANDS) == S5_CENSUS
    assert category_counts(ranking) == S5_CENSUS
    assert sum(category_counts(ranking).values()) == 98_280


def test_s5_census_by_rank_multiset_matches_the_table() -> None:
    """S5: the census path used for decks too large for a table gives the same counts."""
    untabled = Stud5Ranking(DECK, table_limit=0)
    assert not untabled.precomputed
    assert category_counts(untabled) == S5_CENSUS
    bigger = Deck.from_config("7 8 9 T J Q K A", "S H C D")
    untabled_bigger = Stud5Ranking(bigger, table_limit=0)
    assert category_counts(Stud5Ranking(bigger)) == category_counts(untabled_bigger)


def test_s4_exactly_three_straights_8_q_9_k_t_a() -> None:
    """S4 Straights need five consecutive ranks; with 8..A there are exactly three
    straights: 8-Q, 9-K, 10-A."""
    ranking = RANKINGS["key_then_suit"]
    runs = {
        "".join(sorted({c.rank_symbol for c in cards}, key=DECK.ranks.index))
        for cards in ALL_HANDS
        if ranking.category(cards) in ("straight", "straight_flush")
    }
    assert runs == {"89TJQ", "9TJQK", "TJQKA"}


def test_s4_no_wrap_a_8_9_t_j_is_not_a_straight() -> None:
    """S4: there is no wrap: A-8-9-10-J is not a straight (seed 001)."""
    assert RANKINGS["key_then_suit"].category(hand("AS 8H 9C TD JS")) == "high_card"
    assert RANKINGS["key_then_suit"].category(hand("AS 8S 9S TS JS")) == "flush"


def test_s4_wrap_straights_make_a_8_9_t_j_the_lowest_straight() -> None:
    """S4 profile switch wrap_straights: the ace plays low, so A-8-9-T-J is a straight
    topped by the jack, below 8-Q; in 52 cards this gives the textbook census."""
    wrap = Stud5Ranking(DECK, wrap_straights=True)
    assert wrap.category(hand("AS 8H 9C TD JS")) == "straight"
    assert wrap.category(hand("AS 8S 9S TS JS")) == "straight_flush"
    assert wrap.key(hand("AS 8H 9C TD JS")) < wrap.key(hand("8D 9D TC JD QD"))
    assert wrap.category(hand("KS AH 8C 9D TS")) == "high_card"  # no round-the-corner runs
    assert category_counts(Stud5Ranking(FULL, wrap_straights=True)) == POKER_CENSUS
    no_wrap = category_counts(Stud5Ranking(FULL))
    assert (no_wrap["straight_flush"], no_wrap["straight"]) == (36, 9180)


# ---- S6: tie-break policies ---------------------------------------------------------------

S6_EXAMPLES = [  # hand a, hand b, winner under key_then_suit, ranks_then_suit (seed 000),
    # all_ranks_then_suit (the operators' every-kicker variant)
    ("KS KH 8S 9S JC", "KC KD AS QS JS", "a", "a", "b"),  # pair: best suit, not kickers
    ("KS KH 8S 8H 9C", "KC KD 8C 8D AS", "a", "a", "b"),  # two pair: suit in the high pair
    ("AS AD KC KD 8C", "AH AC KS KH QS", "a", "a", "b"),  # seed 000 2.5 example 1
    ("KS KH 9S 9H 8C", "KC KD 8S 8H AS", "a", "a", "a"),  # two pair: low pair first
    ("AH KS QC JD 9S", "AS KH QD 9C 8H", "b", "a", "a"),  # high card: seed 000 2.5 example 2
    ("AH KH QH JH 9H", "AS KS QS TS 9S", "b", "b", "a"),  # flush: only the top card (rule 3)
    ("TS JH QC KD AH", "TH JS QD KC AS", "b", "b", "b"),  # straight: top card, then its suit
    ("9S TS JS QS KS", "TH JH QH KH AH", "b", "b", "b"),  # straight flush: top card
    ("AS AH AC 8S 8H", "KS KH KC QS QH", "a", "a", "a"),  # full house: the trips rank
    ("AS AH AC AD 8S", "KS KH KC KD QS", "a", "a", "a"),  # four of a kind: the quad rank
    ("QS QH QC 8S 9H", "JS JH JC AS KH", "a", "a", "a"),  # three of a kind: the trips rank
    ("AS KS JS 9S 8S", "QH QD QC QS 8H", "b", "b", "b"),  # S3: four of a kind above flush
    ("AS KS JS 9S 8S", "KH KD KC 9H 9D", "b", "b", "b"),  # S3: full house above flush
]


@pytest.mark.parametrize("a, b, key_winner, seed000_winner, every_winner", S6_EXAMPLES)
def test_s6_tie_break_examples_for_every_policy(
    a: str, b: str, key_winner: str, seed000_winner: str, every_winner: str
) -> None:
    """S6 key_then_suit: highest card rank then suit, the quad or trips rank, two pair by
    high pair, low pair, suit in the high pair, one pair by rank then suit; kickers never
    count. Seed 000 (ranks_then_suit): the same, except that high card compares all five
    ranks, then the suit of the highest card. all_ranks_then_suit (not a seed's rule):
    defining ranks, every kicker high to low, then the suit."""
    assert not set(hand(a)) & set(hand(b))
    for policy, winner in (
        ("key_then_suit", key_winner),
        ("ranks_then_suit", seed000_winner),
        ("all_ranks_then_suit", every_winner),
    ):
        expected = 1 if winner == "a" else -1
        assert RANKINGS[policy].compare(hand(a), hand(b)) == expected, policy
        assert RANKINGS[policy].compare(hand(b), hand(a)) == -expected, policy


@pytest.mark.parametrize("policy", POLICIES)
def test_s6_two_players_complete_hands_never_tie_in_28_card_deck(policy: str) -> None:
    """S6 Consequence (both policies, 4-suit deck): two different players' complete
    hands never tie. Hands with equal keys always share a card, so no deal holds both."""
    ranking = RANKINGS[policy]
    groups: dict[int, list[int]] = defaultdict(list)
    bit = {card: 1 << DECK.index(card) for card in DECK.cards}
    for cards in ALL_HANDS:
        groups[ranking.key(cards)].append(sum(bit[c] for c in cards))
    for masks in groups.values():
        common = masks[0]
        for mask in masks:
            common &= mask
        if not common:  # no card in all of them: check every pair
            assert all(x & y for x, y in combinations(masks, 2))


@pytest.mark.parametrize("policy", POLICIES)
def test_s3_s6_every_hand_is_ordered_as_the_rules_say(policy: str) -> None:
    """S3 category order, then S6 inside a category, for all 98,280 hands: the engine's
    key and the literal reading of the rules order every hand the same way."""
    ranking = RANKINGS[policy]
    pairs = sorted((reference(cards, policy), ranking.key(cards)) for cards in ALL_HANDS)
    for (ref_a, key_a), (ref_b, key_b) in zip(pairs, pairs[1:]):
        assert (key_a < key_b) if ref_a < ref_b else (key_a == key_b)


def test_the_large_deck_path_equals_the_table() -> None:
    """A ranking that may not precompute (52 cards) evaluates exactly like the table."""
    direct = Stud5Ranking(
        DECK,
        "straight_flush four_of_a_kind full_house flush straight "
        "three_of_a_kind two_pair one_pair high_card".split(),
        table_limit=0,
    )
    table = RANKINGS["key_then_suit"]
    assert all(direct.key(cards) == table.key(cards) for cards in ALL_HANDS)
    assert not Stud5Ranking(FULL).precomputed


def order_digest(ranking: Stud5Ranking, hands) -> str:
    """sha256 of the ranking order: one line per key from weakest to strongest, tied
    hands on the same line separated by " | ", each hand as canonical card text."""
    by_key: dict[int, list[str]] = defaultdict(list)
    for cards in hands:
        by_key[ranking.key(cards)].append(" ".join(str(c) for c in cards))
    text = "".join(" | ".join(by_key[key]) + "\n" for key in sorted(by_key))
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.mark.parametrize("policy", POLICIES)
def test_s6_order_of_all_98280_hands_matches_stored_digest(policy: str) -> None:
    """S3/S6: the complete order of the 28-card deck under each policy is frozen as data;
    a change to it must be deliberate (regenerate: see tests/data/ranking/README.md)."""
    path = DIGESTS / f"stud5-28-{policy}.sha256"
    digest = order_digest(RANKINGS[policy], ALL_HANDS)
    if os.environ.get("GMTOOL_UPDATE_DIGESTS") == "1":
        path.write_text(digest + "\n", encoding="utf-8")
        pytest.skip(f"wrote {path.name}")
    assert digest == path.read_text(encoding="utf-8").strip()


# ---- properties (hypothesis) --------------------------------------------------------------

hands28 = st.lists(st.sampled_from(DECK.cards), min_size=5, max_size=5, unique=True)
hands52 = st.lists(st.sampled_from(FULL.cards), min_size=5, max_size=5, unique=True)
SAMPLES = {
    c: [h for h in ALL_HANDS if RANKINGS["key_then_suit"].category(h) == c][::97][:40]
    for c in DEFAULT_CATEGORIES
}
representatives = st.sampled_from([h for group in SAMPLES.values() for h in group])


@given(a=hands28, b=hands28, c=hands28, policy=st.sampled_from(POLICIES))
def test_ranking_is_a_total_order(a, b, c, policy) -> None:
    """Ranking is a total order: antisymmetric and transitive, and it agrees with S3/S6."""
    ranking = RANKINGS[policy]
    assert ranking.compare(a, b) == -ranking.compare(b, a)
    if ranking.compare(a, b) >= 0 and ranking.compare(b, c) >= 0:
        assert ranking.compare(a, c) >= 0
    if ranking.compare(a, b) == 0:
        assert ranking.compare(a, c) == ranking.compare(b, c)
    assert ranking.compare(a, b) == cmp(reference(a, policy), reference(b, policy))


@settings(max_examples=30, deadline=None)
@given(
    order=st.permutations(DEFAULT_CATEGORIES),
    a=representatives,
    b=representatives,
    policy=st.sampled_from(POLICIES),
)
def test_s3_changing_category_order_changes_keys_accordingly(order, a, b, policy) -> None:
    """S3 The order is a profile setting: a hand of a category listed earlier beats one
    listed later; inside one category the order of hands does not change."""
    ranking = Stud5Ranking(DECK, order, policy, False)
    default = RANKINGS[policy]
    cat_a, cat_b = ranking.category(a), ranking.category(b)
    assert (cat_a, cat_b) == (default.category(a), default.category(b))
    if cat_a != cat_b:
        assert ranking.compare(a, b) == (1 if order.index(cat_a) < order.index(cat_b) else -1)
    else:
        assert ranking.compare(a, b) == default.compare(a, b)


@settings(max_examples=150, deadline=None)
@given(a=hands52, b=hands52, policy=st.sampled_from(POLICIES), wrap=st.booleans())
def test_s1_52_card_deck_ranks_by_the_same_rules(a, b, policy, wrap) -> None:
    """S1 ranking code must not assume 28 cards: a 52-card deck follows S3/S4/S6 too."""
    ranking = _full_rankings()[(policy, wrap)]
    expected = cmp(reference(a, policy, wrap, ranks=13), reference(b, policy, wrap, ranks=13))
    assert ranking.compare(a, b) == expected


_FULL_RANKINGS: dict = {}


def _full_rankings() -> dict:
    if not _FULL_RANKINGS:
        _FULL_RANKINGS.update(
            {
                (p, w): Stud5Ranking(FULL, DEFAULT_CATEGORIES, p, w)
                for p in POLICIES
                for w in (False, True)
            }
        )
    return _FULL_RANKINGS


# ---- S7: showing cards --------------------------------------------------------------------


def showing(text: str, ranking: Stud5Ranking | None = None) -> int:
    return (ranking or RANKINGS["key_then_suit"]).showing_key(hand(text))


@pytest.mark.parametrize(
    "stronger, weaker",
    [
        ("AS", "AH"),
        ("AD", "KS"),
        ("8H", "8C"),  # 1 card: rank, then suit
        ("8S 8H", "AS KS"),
        ("KS KD", "KH KC"),
        ("AS 8H", "AH KD"),  # 2: pair > high; the top card
        ("8S 8H 8C", "AS AH KS"),
        ("9S 9D AC", "AS KS QS"),
        ("AC KC QC", "AD KD QD"),  # 3
        ("KS KC QH QD", "KH KD JS JC"),
        ("KS KH 9S 9H", "KC KD 9C 9D"),  # 4: two pair ties
        ("AS KS JS 8S", "AH KH JH 9H"),  # 4: flush, the top card
        ("AH QH 9H 8H", "AD KD TD 8D"),  # 4: then that card's suit
        ("AH 8S", "AD 9S"),  # 2: high card, the top card
    ],
)
def test_s7_showing_cards_decide_who_speaks_first(stronger: str, weaker: str) -> None:
    """S7 compare only face-up cards. With 1 face-up card: rank, then suit. With 2: pair >
    high. With 3: trips > pair > high. Ties inside a category follow the profile's S6
    policy: under key_then_suit the defining rank, then the suit of the deciding card (a
    four-card flush's top card, not its kickers: corrected 2026-12-02)."""
    assert showing(stronger) > showing(weaker)


@pytest.mark.parametrize(
    "stronger, weaker",
    [
        ("AD 9S", "AH 8S"),  # the street 3: nine over eight first
        ("KS QD 9C 8H", "KH QS 8C 9D"),  # every rank equal: the top card's suit
        ("AH QH 9H 8H", "AD KD TD 8D"),  # a four-card flush: only its top card, then suit
    ],
)
def test_s7_seed_000_showing_high_cards_compare_every_rank(stronger: str, weaker: str) -> None:
    """S7 under seed 000's policy (ranks_then_suit): high card compares every face-up rank
    from high to low, then the top card's suit; other categories as key_then_suit."""
    seed000 = RANKINGS["ranks_then_suit"]
    assert showing(stronger, seed000) > showing(weaker, seed000)


def test_s7_engines_before_4_keep_their_reading_of_showing_cards() -> None:
    """Hands recorded by engines 2 and 3 replay with the reading they were played by: every
    rank of a four-card flush, only the top card of high card, under every policy."""
    for policy in POLICIES:
        before = RANKINGS[policy].showing_before_4
        assert before.key(hand("AD KD TD 8D")) > before.key(hand("AH QH 9H 8H"))
        assert before.key(hand("AH 8S")) > before.key(hand("AD 9S"))
        assert before.describe(hand("AH KH JH 9H")) == (
            "four-card flush, ace-king-jack-nine, with the ace of hearts"
        )


def test_s7_four_showing_cards_follow_the_full_order() -> None:
    """S7 With 4: straight flush > four of a kind > flush > straight > trips > two pair >
    pair > high (four-card straight/flush count)."""
    ladder = [
        "9S TS JS QS",
        "8S 8H 8C 8D",
        "AH KH JH 9H",
        "TC JD QS KH",
        "AS AC AD 9C",
        "KS KC QH QD",
        "AH AD 9S TC",
        "AS KD QC TH",
    ]
    keys = [showing(text) for text in ladder]
    assert keys == sorted(keys, reverse=True) and len(set(keys)) == len(keys)
    ranking = RANKINGS["key_then_suit"]
    assert [ranking.showing.value(hand(t))[0] for t in ladder] == [
        "straight_flush",
        "four_of_a_kind",
        "flush",
        "straight",
        "three_of_a_kind",
        "two_pair",
        "one_pair",
        "high_card",
    ]


def test_s7_four_card_straights_wrap_only_with_the_profile_switch() -> None:
    """S4/S7: A-8-9-10 is not a four-card straight unless wrap_straights is set."""
    assert showing("AS 8H 9C TD") < showing("8S 9H TC JD")
    described = RANKINGS["key_then_suit"].describe_showing(hand("AS 8H 9C TD"))
    assert described == "ace high with the ace of spades"
    wrap = Stud5Ranking(DECK, wrap_straights=True)
    assert showing("AS 8H 9C TD", wrap) > showing("AS AH AC 9D", wrap)
    assert showing("AS 8H 9C TD", wrap) < showing("8S 9H TC JD", wrap)


@pytest.mark.parametrize(
    "text, words",
    [
        ("KS", "king of spades"),
        ("KH KS", "pair of kings with the king of spades"),
        ("KD 9C QH", "king high with the king of diamonds"),
        ("9S TS JS QS", "four-card straight flush to the queen with the queen of spades"),
        ("AH KH JH 9H", "ace-high four-card flush with the ace of hearts"),
        ("KS KC QH QD", "two pair, kings and queens, with the king of spades"),
    ],
)
def test_s7_describe_showing(text: str, words: str) -> None:
    assert RANKINGS["key_then_suit"].describe_showing(hand(text)) == words


def test_s7_describe_showing_names_every_rank_where_the_policy_compares_them() -> None:
    assert RANKINGS["ranks_then_suit"].describe_showing(hand("KD 9C QH")) == (
        "king-queen-nine high with the king of diamonds"
    )
    assert RANKINGS["all_ranks_then_suit"].describe_showing(hand("KH KS 9C 8D")) == (
        "pair of kings, nine, eight kickers, with the king of spades"
    )


def test_s7_showing_needs_one_to_four_cards() -> None:
    ranking = RANKINGS["key_then_suit"]
    for text in ("", "AS KS QS JS TS"):
        with pytest.raises(HandError, match="S7"):
            ranking.showing_key(hand(text))
    assert "RULES S7" in ranking.explain_showing(hand("KS QH"), hand("KH AD"))


# ---- words, errors, odds ------------------------------------------------------------------


def test_s6_explain_names_the_rule_and_the_policy() -> None:
    """A support agent can read the explanation to a player (S3 or S6 plus the policy)."""
    kts, rts = RANKINGS["key_then_suit"], RANKINGS["all_ranks_then_suit"]
    a, b = hand("KS KC 8S 9S JC"), hand("KH KD AS QS JS")
    assert kts.explain(a, b).startswith(
        "pair of kings with the king of spades beats pair of kings with the king of hearts: "
        "RULES S6, key_then_suit"
    )
    assert kts.explain(b, a).startswith("pair of kings with the king of hearts loses to")
    assert rts.explain(a, b) == (
        "pair of kings, jack, nine and eight kickers, with the king of spades loses to pair of "
        "kings, ace, queen and jack kickers, with the king of hearts: RULES S6, "
        "all_ranks_then_suit "
        "(top kicker: jack against ace)"
    )
    assert kts.explain(hand("AS KS JS 9S 8S"), hand("KH KD KC 9H 9D")) == (
        "ace-high flush with the ace of spades loses to full house, kings full of nines: "
        "RULES S3, full house ranks above flush"
    )
    assert kts.explain(a, a).endswith("(equal hands)")


def test_s6_seed_000_names_all_five_ranks_only_in_high_card() -> None:
    """Seed 000 (ranks_then_suit): high card is described and decided by all five ranks;
    a pair by its rank and suit, with no kicker words (RULES S6, corrected)."""
    seed000 = RANKINGS["ranks_then_suit"]
    assert seed000.explain(hand("AH KS QC JD 9S"), hand("AS KH QD 9C 8H")) == (
        "ace-king-queen-jack-nine high with the ace of hearts beats ace-king-queen-nine-eight "
        "high with the ace of spades: RULES S6, ranks_then_suit (fourth card: jack against nine)"
    )
    assert seed000.describe(hand("KS KH 8S 9S JC")) == "pair of kings with the king of spades"


@pytest.mark.parametrize(
    "cards, message",
    [
        ("AS KS QS JS", "expected 5 cards"),
        ("AS KS QS JS TS 9S", "expected 5 cards"),
    ],
)
def test_wrong_hands_raise_hand_error(cards: str, message: str) -> None:
    with pytest.raises(HandError, match=message):
        RANKINGS["key_then_suit"].key(hand(cards))


def test_repeated_and_foreign_cards_raise_hand_error() -> None:
    ranking = RANKINGS["key_then_suit"]
    ace = hand("AS")[0]
    with pytest.raises(HandError, match="repeated"):
        ranking.key([ace, ace, *hand("KS QS JS")])
    with pytest.raises(HandError, match="not a card of this deck"):
        ranking.key([*hand("KS QS JS TS"), FULL.parse_card("AS")])
    with pytest.raises(HandError, match="parse_cards"):
        ranking.key("AS KS QS JS TS")


@pytest.mark.parametrize(
    "categories, tie_break, message",
    [
        (DEFAULT_CATEGORIES[:-1], "key_then_suit", "missing high_card"),
        ([*DEFAULT_CATEGORIES, "flush"], "key_then_suit", "repeated flush"),
        ([*DEFAULT_CATEGORIES[:-1], "royal"], "key_then_suit", "unknown royal"),
        (DEFAULT_CATEGORIES, "suit_first", "S6"),
    ],
)
def test_bad_ranking_settings_raise_ranking_error(categories, tie_break, message) -> None:
    with pytest.raises(RankingError, match=message):
        Stud5Ranking(DECK, categories, tie_break, False)


def test_s3_odds_show_the_rarer_flush_below_the_full_house() -> None:
    """S3 Operators must be able to see that a flush (72 of 98,280 hands) is rarer than a
    full house (1,008), yet ranks below it (exact category counts), and change the order."""
    rows, notes = odds_report(RANKINGS["key_then_suit"])
    assert [row["name"] for row in rows] == list(DEFAULT_CATEGORIES)
    assert [row["rank"] for row in rows] == list(range(1, 10))
    assert rows[3] == {"name": "flush", "count": 72, "probability": 72 / 98_280, "rank": 4}
    assert abs(sum(row["probability"] for row in rows) - 1) < 1e-12
    assert notes == [
        "flush (72 hands) ranks below four_of_a_kind (168 hands) though it is rarer",
        "flush (72 hands) ranks below full_house (1,008 hands) though it is rarer",
        "high_card (18,360 hands) ranks below one_pair (53,760 hands) though it is rarer",
    ]
    by_rarity = [
        "straight_flush",
        "flush",
        "four_of_a_kind",
        "full_house",
        "straight",
        "three_of_a_kind",
        "two_pair",
        "high_card",
        "one_pair",
    ]
    assert odds_report(Stud5Ranking(DECK, by_rarity, "key_then_suit", False))[1] == []
    flush_first = Stud5Ranking(DECK, by_rarity)
    assert flush_first.compare(hand("AS KS JS 9S 8S"), hand("KH KD KC 9H 9D")) == 1
    assert flush_first.explain(hand("AS KS JS 9S 8S"), hand("KH KD KC 9H 9D")).endswith(
        "RULES S3, flush ranks above full house in this profile's order"
    )
