"""`gmtool rules simulate`: the measures against hands computed by hand.

Each case deals a rigged deck (a `Table` whose `deal` returns fixed cards) to bots of
fixed policies (no bluff, thresholds that never or always hold, thinking exactly 0.5 s
a turn), so every number of the hand follows from RULES by hand: antes, caps, all-in,
escape charge (D-9), settlement.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gmtool.bots.policies import Policy
from gmtool.engine.hand import FixedSource
from gmtool.rules.compile import compile_file
from gmtool.simulate import stats
from gmtool.simulate.measures import tier_measures
from gmtool.simulate.play import SEAT_NAMES, Table, bust_run, hand_key, play_hand
from gmtool.simulate.run import TierResult
from gmtool.simulate.setup import MAX_BUST_HANDS, options, plan_for, profile_from

RULES = Path(__file__).resolve().parent.parent / "rules"

# Deterministic bots: think_s 0.5 makes every turn exactly 0.5 s; no bluff, no escape.
CALLER = Policy(
    "caller",
    fold_below=0.0,
    raise_above=2.0,
    allin_above=2.0,
    bluff=0.0,
    size=0.0,
    look=1.0,
    challenge=0.0,
    think_s=0.5,
    odds=0.0,
)
MAXER = Policy(
    "maxer",
    fold_below=0.0,
    raise_above=0.0,
    allin_above=0.0,
    bluff=0.0,
    size=0.0,
    look=1.0,
    challenge=0.0,
    think_s=0.5,
    odds=0.0,
)
OPENER = Policy(
    "opener",
    fold_below=0.0,
    raise_above=2.0,
    allin_above=2.0,
    bluff=0.0,
    size=0.0,
    look=1.0,
    challenge=1.0,
    think_s=0.5,
    odds=0.0,
)
ESCAPER = Policy(
    "escaper",
    fold_below=0.0,
    raise_above=2.0,
    allin_above=2.0,
    bluff=0.0,
    size=0.0,
    look=1.0,
    challenge=0.0,
    think_s=0.5,
    escape=1.0,
    odds=0.0,
)


def plan(profile: str, tier: str, players: str = "2"):
    source = profile_from(RULES / f"{profile}.toml", compile_file(RULES / f"{profile}.toml"))
    return plan_for(source, tier, options(hands=10, players=players), requested=True)


class RiggedTable(Table):
    """A table dealing the same cards to the same seats in every hand."""

    cards_by_seat: dict[str, str] = {}

    def deal(self, key: bytes) -> FixedSource:
        deck = self.ranking.deck
        return FixedSource(
            {name: deck.parse_cards(text) for name, text in self.cards_by_seat.items()}
        )


def rigged(the_plan, cards: dict[str, str], *policies: Policy) -> Table:
    table_class = type("Rigged", (RiggedTable,), {"cards_by_seat": cards})
    table = table_class(the_plan)
    table.policies = policies
    return table


FOUR_ACES = "AS AH AC AD KS"  # seat1: hole card first, then the face-up cards
KING_HIGH = "8S 9H TC QD KH"  # shows 9-T-Q-K: no straight, king high (S7)


def test_q1_checked_down_hand_pot_is_the_antes_and_lasts_eight_turns() -> None:
    """Two callers who never bet check streets 2-5: the pot is the two antes (Q1, S9), the
    hand lasts 8 turns of 0.5 s, reaches the showdown, and the four aces win one ante."""
    table = rigged(
        plan("qq-showhand", "junior"), {"seat1": FOUR_ACES, "seat2": KING_HIGH}, CALLER, CALLER
    )
    record = play_hand(table, hand_key(table.plan, "hand", 0))
    assert (record.pot, record.turns, record.seconds) == (200, 8, 4.0)
    assert (record.showdown, record.allin, record.escapes, record.timeouts) == (1, 0, 0, 0)
    assert record.deltas == (100, -100)
    assert record.banker == 100  # seat1 shows three aces on street 5: the banker (S11)


def test_q3_a_maximal_bettor_reaches_the_hand_cap_by_all_in_on_street_4() -> None:
    """Junior caps 200/500/1000 (Q1): the maxer bets to each street cap, 100 then 300, and
    on street 4 goes all-in to the hand cap 1000 (Q3, S15); the caller calls each time.
    Pot 2000, 6 turns, the winner takes the loser's 1000."""
    table = rigged(
        plan("qq-showhand", "junior"), {"seat1": FOUR_ACES, "seat2": KING_HIGH}, MAXER, CALLER
    )
    record = play_hand(table, hand_key(table.plan, "hand", 0))
    assert (record.pot, record.turns, record.seconds) == (2000, 6, 3.0)
    assert (record.showdown, record.allin) == (1, 1)
    assert record.deltas == (1000, -1000)


def test_s19_an_escape_costs_the_pot_and_ends_the_hand() -> None:
    """S19/D-9 under forfeit_to_banker: the escapee pays the pot on the table (the two
    antes, 200) to the banker; the hand ends without a showdown."""
    table = rigged(
        plan("qq-showhand", "junior"), {"seat1": FOUR_ACES, "seat2": KING_HIGH}, CALLER, ESCAPER
    )
    record = play_hand(table, hand_key(table.plan, "hand", 0))
    assert (record.escapes, record.escape_cost, record.showdown) == (1, 200, 0)
    assert record.deltas == (200, -200)
    assert sum(record.deltas) == 0


def test_s22_training_room_moves_no_coins_whatever_happens() -> None:
    """S22: in the training room the same all-in hand settles with no coins moving."""
    table = rigged(
        plan("qq-showhand", "training"), {"seat1": FOUR_ACES, "seat2": KING_HIGH}, MAXER, CALLER
    )
    record = play_hand(table, hand_key(table.plan, "hand", 0))
    assert record.pot == 2000 and record.allin == 1
    assert record.deltas == (0, 0) and record.banker == 0


def _first_speaker_key(the_plan, seat: str) -> bytes:
    """A hand key whose dealer makes `seat` speak first (three-card H2: dealer's next)."""
    dealer = SEAT_NAMES[1 - SEAT_NAMES.index(seat)]
    for index in range(200):
        key = hand_key(the_plan, "hand", index)
        if SEAT_NAMES[int.from_bytes(key[17:19], "big") % 2] == dealer:
            return key
    raise AssertionError("no such key")


def test_h8_seen_opener_pays_four_times_the_blind_bet_and_wins_with_trips() -> None:
    """H4/H8: the first speaker looks (turn goes on), then opens the blind other player:
    seen_vs_blind = 4 x the ante 5 = 20. Pot 5 + 5 + 20 = 30; trips win, so the opener
    gains the other's ante (+5) and the hand counts one look, one open, a showdown."""
    the_plan = plan("suihua-three-card", "chips-5")
    table = rigged(the_plan, {"seat1": "AS AH AC", "seat2": "2S 3H 5C"}, OPENER, OPENER)
    record = play_hand(table, _first_speaker_key(the_plan, "seat1"))
    assert (record.pot, record.turns, record.looks, record.opens, record.buys) == (30, 2, 1, 1, 0)
    assert record.showdown == 1 and record.deltas == (5, -5)


def test_h8_opener_with_the_worse_hand_loses_what_it_paid() -> None:
    """The same open by the weaker hand: the opener loses ante and price (25), the
    opened player wins them."""
    the_plan = plan("suihua-three-card", "chips-5")
    table = rigged(the_plan, {"seat1": "AS AH AC", "seat2": "2S 3H 5C"}, OPENER, OPENER)
    record = play_hand(table, _first_speaker_key(the_plan, "seat2"))
    assert record.pot == 30 and record.deltas == (25, -25)


class StepTable(RiggedTable):
    """Bust runs: the sitter (seat1) wins the hands in `wins` (by step) and loses others."""

    wins: set[int] = set()
    steps: dict[bytes, int] = {}

    def deal(self, key: bytes) -> FixedSource:
        win = self.steps.get(key) in self.wins
        self.cards_by_seat = {
            "seat1": FOUR_ACES if win else KING_HIGH,
            "seat2": KING_HIGH if win else FOUR_ACES,
        }
        return super().deal(key)


def test_s21_hands_until_out_counts_to_the_first_hand_below_the_minimum() -> None:
    """Sitting with exactly min_holding 1000 (Q1) and checking down each hand for one ante:
    win, win (1200), then lose three times (900 < 1000): out after the 5th hand (S21)."""
    the_plan = plan("qq-showhand", "junior")
    steps = {hand_key(the_plan, "bust", 0, step): step for step in range(10)}
    table = type("Steps", (StepTable,), {"wins": {0, 1}, "steps": steps})(the_plan)
    table.policies = (CALLER, CALLER)
    assert bust_run(table, 0) == (5, False)


def test_a_sitter_who_never_loses_is_counted_at_the_limit_as_censored() -> None:
    the_plan = plan("qq-showhand", "junior")
    table = rigged(the_plan, {"seat1": FOUR_ACES, "seat2": KING_HIGH}, CALLER, CALLER)
    assert bust_run(table, 0) == (MAX_BUST_HANDS, True)


def test_tier_measures_of_hand_computed_records() -> None:
    """The statistics of three rigged hands, worked out: pots 200, 2000, 200."""
    table = rigged(
        plan("qq-showhand", "junior"), {"seat1": FOUR_ACES, "seat2": KING_HIGH}, CALLER, CALLER
    )
    checked = play_hand(table, hand_key(table.plan, "hand", 0))
    table.policies = (MAXER, CALLER)
    allin = play_hand(table, hand_key(table.plan, "hand", 1))
    result = TierResult(
        table.plan, table.verbs, [checked, allin, checked], [(5, False), (1, False)]
    )
    measures = tier_measures(result)
    assert measures["pot"] == {"mean": 800.0, "median": 200, "p95": pytest.approx(1820)}
    assert measures["actions_per_hand"]["mean"] == pytest.approx(22 / 3)
    assert measures["seconds_per_hand"]["median"] == 4.0
    assert measures["allin"] == {"rate": pytest.approx(1 / 3)}
    assert measures["showdown"] == {"rate": 1.0}
    assert measures["escape_cost"] == {"mean": None, "median": None}
    assert measures["coins_per_hand"]["seat1"] == pytest.approx(1200 / 3)
    assert measures["coins_per_hand"]["seat2"] == pytest.approx(-1200 / 3)
    assert measures["hands_to_bust"] == {"median": 3.0, "p90": 4.6}
    assert "looks_per_hand" not in measures  # a three-card measure: not in stud5


def test_quantiles_interpolate_between_order_statistics() -> None:
    assert stats.quantile([1, 2, 3, 4], 0.5) == 2.5
    assert stats.quantile([5], 0.95) == 5
    assert stats.quantile([], 0.5) is None


def test_paired_change_of_identical_columns_is_zero_and_not_significant() -> None:
    column = [hand % 7 for hand in range(1000)]
    change = stats.paired_change("mean", column, column)
    assert change["change"] == 0 and change["ci"] == [0.0, 0.0]
    assert not change["significant"]


def test_paired_change_of_a_shift_is_significant() -> None:
    base = [hand % 7 for hand in range(1000)]
    change = stats.paired_change("median", base, [value + 1 for value in base])
    assert change["change"] == 1 and change["significant"]
    assert change["change_pct"] == pytest.approx(100 / 3)
