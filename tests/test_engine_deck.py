"""The committed shuffle (docs/architecture.md, "The engine's contract"): deterministic,
verifiable, unbiased."""

from __future__ import annotations

import hashlib
import hmac
from itertools import count

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gmtool.engine.cards import Deck
from gmtool.engine.deck import (
    ALGORITHM,
    SeedError,
    _Draws,
    _fisher_yates,
    commitment,
    shuffle,
    uniform_below,
    verify,
)

DECK = Deck.showhand()
KAT_SEED = b"gmtool-kat"
KAT_ORDER = "AH AD 8C 9H JD 9D JH TS TC QC QS 8H JC TH KC KD QH JS 8S 8D 9C KH 9S AS AC QD KS TD"

# Chi-square critical values at the 1% level, precomputed (no scipy at test time) by
# bisection on the regularized upper incomplete gamma function Q(df/2, x/2); they match
# published tables (df=27, 1%: 46.963).
CHI2_DF729_1PCT = 820.759  # whole 28 x 28 position/card table: df = 27 * 27
CHI2_DF27_1PCT_OF_28 = 58.991  # one position (or one card): df = 27, alpha = 0.01 / 28
SHUFFLES = 100_000


def outsider_words(seed: bytes):
    """32-bit words of HMAC-SHA256(seed, counter), re-derived from the module docstring."""
    for i in count():
        block = hmac.new(seed, i.to_bytes(8, "big"), hashlib.sha256).digest()
        yield from (int.from_bytes(block[k : k + 4], "big") for k in range(0, 32, 4))


def outsider_shuffle(cards, seed: bytes):
    """The module docstring's algorithm, written independently of the engine."""
    words = outsider_words(seed)
    order = list(cards)
    for i in range(len(order) - 1, 0, -1):
        bound = i + 1
        while (x := next(words)) >= 2**32 - 2**32 % bound:
            pass
        j = x % bound
        order[i], order[j] = order[j], order[i]
    return tuple(order)


def test_algorithm_is_named_and_commitment_is_sha256_hex() -> None:
    assert ALGORITHM == "hmac-sha256-fy-v1"
    assert commitment(b"abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert commitment(KAT_SEED) == hashlib.sha256(KAT_SEED).hexdigest()


def test_known_answer_for_the_28_card_deck() -> None:
    """A fixed vector so that any other implementation can check itself against ours."""
    assert DECK.format(shuffle(DECK.cards, KAT_SEED)) == KAT_ORDER
    assert shuffle(range(10), KAT_SEED) == (6, 4, 0, 1, 9, 8, 5, 3, 2, 7)


@given(seed=st.binary(min_size=1, max_size=100), size=st.integers(min_value=0, max_value=60))
def test_an_outsider_rederives_the_deck_from_the_docstring(seed: bytes, size: int) -> None:
    assert shuffle(range(size), seed) == outsider_shuffle(range(size), seed)


def test_same_seed_same_order_different_seed_different_order() -> None:
    first = shuffle(DECK.cards, b"hand-1")
    assert shuffle(DECK.cards, b"hand-1") == first
    assert shuffle(DECK.cards, b"hand-2") != first
    assert sorted(first, key=DECK.index) == list(DECK.cards)  # a permutation of the deck


def test_verify_accepts_the_revealed_seed_and_refuses_anything_else() -> None:
    seed = b"secret server seed"
    committed = commitment(seed)
    dealt = shuffle(DECK.cards, seed)
    assert verify(seed, committed, DECK.cards, dealt)
    assert verify(seed, committed.upper(), DECK.cards, dealt[:10])  # a hand that ended early
    assert not verify(b"another seed", committed, DECK.cards, dealt)
    assert not verify(b"another seed", commitment(b"another seed"), DECK.cards, dealt)
    assert not verify(seed, committed, DECK.cards, dealt[1:])
    assert not verify(seed, committed, DECK.cards, dealt + dealt[:1])
    assert not verify(seed, "not hex", DECK.cards, dealt)
    assert not verify("text", committed, DECK.cards, dealt)  # type: ignore[arg-type]
    assert not verify(b"", committed, DECK.cards, dealt)


def test_empty_or_text_seeds_are_refused() -> None:
    with pytest.raises(SeedError):
        shuffle(DECK.cards, b"")
    with pytest.raises(SeedError):
        commitment("seed")  # type: ignore[arg-type]


def test_rejection_sampling_discards_words_above_the_last_full_span() -> None:
    """Step 3: 2**32 - 1 is the one word that would bias a draw below 3; it is skipped."""
    words = iter([2**32 - 1, 7])
    assert uniform_below(3, lambda: next(words)) == 1
    assert uniform_below(1, lambda: 123) == 0
    with pytest.raises(ValueError):
        uniform_below(0, lambda: 0)


@given(seed=st.binary(min_size=1, max_size=16))
def test_a_rejected_word_is_skipped_and_the_stream_runs_on_into_further_blocks(seed: bytes) -> None:
    """Rejections are too rare to meet with a real deck (under 2**-25 a draw), so the
    engine's Fisher-Yates runs here under limits that reject about half of all words:
    it must skip exactly the words the docstring's rule skips, reading as many further
    HMAC blocks as that takes."""
    harsh = tuple((i, 2**31) for i in range(27, 0, -1))
    words = outsider_words(seed)
    expected = list(range(28))
    for i, limit in harsh:
        while (x := next(words)) >= limit:
            pass
        j = x % (i + 1)
        expected[i], expected[j] = expected[j], expected[i]
    assert _fisher_yates(list(range(28)), seed, _Draws.of(harsh)) == tuple(expected)


def position_card_chi_square(shuffled, shuffles: int) -> tuple[float, float, float]:
    """Pearson chi-square of how often each card lands in each position: the whole
    table, the worst position and the worst card."""
    size = len(DECK)
    table = [[0] * size for _ in range(size)]  # table[position][card]
    for i in range(shuffles):
        for position, card in enumerate(shuffled(b"chi-square-%d" % i)):
            table[position][card] += 1
    expected = shuffles / size
    cells = [[(n - expected) ** 2 / expected for n in row] for row in table]
    return (
        sum(map(sum, cells)),
        max(sum(row) for row in cells),
        max(sum(column) for column in zip(*cells)),
    )


def test_shuffle_has_no_position_card_bias() -> None:
    """Fisher-Yates with rejection sampling: over 100,000 seeded shuffles of the 28-card
    deck every card lands in every position equally often (Pearson chi-square, 1% level,
    for the whole table and, Bonferroni-corrected, for each position and each card).
    Deterministic seeds, so the outcome is reproducible; about 2 s on the dev machine."""
    whole, position, card = position_card_chi_square(
        lambda seed: shuffle(range(28), seed), SHUFFLES
    )
    assert whole < CHI2_DF729_1PCT
    assert position < CHI2_DF27_1PCT_OF_28
    assert card < CHI2_DF27_1PCT_OF_28


def test_the_bias_test_catches_a_naive_shuffle() -> None:
    """The same statistic flags the classic mistake (swap each card with any position)."""

    def naive(seed: bytes) -> list[int]:
        order, words = list(range(28)), iter(outsider_words(seed))
        for i in range(28):
            j = uniform_below(28, lambda: next(words))
            order[i], order[j] = order[j], order[i]
        return order

    whole, _, _ = position_card_chi_square(naive, 20_000)
    assert whole > CHI2_DF729_1PCT
