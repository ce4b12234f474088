"""The named bot policies and the card strength they judge by: what a bot may see (G3),
what each policy does with it, and that `house run` bots play the same policies."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import pytest

from gmtool.bots.policies import POLICIES, decide, policy_named, think_seconds
from gmtool.bots.strength import strength
from gmtool.engine.events import Action
from gmtool.engine.hand import Legal, Seat
from gmtool.engine.play import fixed_source, start_hand
from gmtool.errors import UsageError
from gmtool.house import bots
from gmtool.rules.compile import compile_file

RULES = Path(__file__).resolve().parent.parent / "rules"
QQ = compile_file(RULES / "qq-showhand.toml")
THREE = compile_file(RULES / "suihua-three-card.toml")


class Fixed:
    """An rng that always returns the same number."""

    def __init__(self, value: float) -> None:
        self.value = value

    def random(self) -> float:
        return self.value


def stud5_hand(ann: str, bob: str, carl: str = "9C 9D QS JS TD"):
    seats = [Seat("ann", 10_000), Seat("bob", 10_000), Seat("carl", 10_000)]
    return start_hand(
        QQ, "junior", seats, "ann", fixed_source(QQ, {"ann": ann, "bob": bob, "carl": carl})
    )


def test_g3_strength_never_depends_on_a_face_down_card_of_another_player() -> None:
    """A bot sees its own cards and the others' face-up cards only (G3)."""
    one = stud5_hand("AS AH KS KH 8C", "8S TS JH QH KD")
    other = stud5_hand("AS AH KS KH 8C", "9S TS JH QH KD")  # bob's hole card differs
    for hand in (one, other):
        assert hand.players["bob"].cards[1:] == other.players["bob"].cards[1:]
    assert strength(one, "ann") == strength(other, "ann")


def test_strength_is_higher_with_better_cards_against_the_same_board() -> None:
    strong = stud5_hand("AS AH KS KH 8C", "8S TS JH QH KD")
    weak = stud5_hand("8D AH KS KH 8C", "8S TS JH QH KD")
    assert strength(strong, "ann") > strength(weak, "ann")
    assert 0 < strength(weak, "ann") < 1


def test_h4_a_blind_three_card_player_does_not_know_its_strength() -> None:
    seats = [Seat("ann", 1000), Seat("bob", 1000)]
    hand = start_hand(
        THREE, "chips-5", seats, "bob", fixed_source(THREE, {"ann": "AS AH AC", "bob": "2S 3H 5C"})
    )
    assert strength(hand, "ann") is None
    hand.apply(Action("look", "ann"))
    assert strength(hand, "ann") > 0.99  # trips of aces beat almost any one hand


@pytest.mark.parametrize(
    "text, name, escape",
    [
        ("cautious", "cautious", 0.0),
        ("escaper:0.25", "escaper:0.25", 0.25),
        ("escaper", "escaper:0.1", 0.1),
        ("escaper:0", "escaper:0", 0.0),
    ],
)
def test_policy_names(text: str, name: str, escape: float) -> None:
    policy = policy_named(text)
    assert (policy.name, policy.escape) == (name, escape)


@pytest.mark.parametrize("text", ["reckless", "escaper:x", "escaper:-0.1", "loose:0.2"])
def test_unknown_policy_names_are_refused_naming_the_valid_ones(text: str) -> None:
    with pytest.raises(UsageError, match="policies: cautious|escape chance must be"):
        policy_named(text)


FACING = [Legal("call", 100, 100), Legal("raise", 200, 400, 100), Legal("fold")]
FREE = [Legal("check"), Legal("bet", 100, 400, 100), Legal("fold")]


def test_cautious_folds_weak_cards_facing_a_bet_and_checks_when_free() -> None:
    cautious = POLICIES["cautious"]
    assert decide(cautious, 0.2, FACING, "ann", Fixed(0.5)) == Action("fold", "ann")
    assert decide(cautious, 0.2, FREE, "ann", Fixed(0.5)) == Action("check", "ann")
    assert decide(cautious, 0.6, FACING, "ann", Fixed(0.5)) == Action("call", "ann")
    assert decide(cautious, 0.85, FACING, "ann", Fixed(0.5)) == Action("raise", "ann", 200)


def test_loose_calls_what_cautious_folds_and_bets_bigger() -> None:
    loose = POLICIES["loose"]
    assert decide(loose, 0.2, FACING, "ann", Fixed(0.5)) == Action("call", "ann")
    assert decide(loose, 0.7, FREE, "ann", Fixed(0.5)) == Action("bet", "ann", 100 + 0)
    assert decide(POLICIES["aggressive"], 0.6, FREE, "ann", Fixed(0.5)) == Action(
        "bet", "ann", 200
    )  # halfway into 100..400, on the step


def test_escaper_escapes_with_its_chance() -> None:
    escaper = policy_named("escaper:0.3")
    assert decide(escaper, 0.9, FREE, "ann", Fixed(0.29)).verb == "escape"
    assert decide(escaper, 0.9, FREE, "ann", Fixed(0.31)).verb != "escape"


def test_thinking_time_is_at_least_half_a_second_with_the_policy_mean() -> None:
    rng = random.Random(7)
    times = [think_seconds(POLICIES["cautious"], rng) for _ in range(20_000)]
    assert min(times) >= 0.5
    assert sum(times) / len(times) == pytest.approx(3.0, rel=0.05)


def test_house_bots_play_the_named_policies() -> None:
    """`house run` deals STYLE_NAMES to its bots; each is a policy of the simulator, and
    `choose` judges the cards the bot can see in the hand the host passes."""
    assert set(bots.STYLE_NAMES) == set(POLICIES)
    hand = stud5_hand("AS AH KS KH 8C", "8S TS JH QH KD")
    rng = random.Random(1)
    for style in bots.STYLE_NAMES:
        action = bots.choose(style, hand.legal_actions(), hand.to_act, rng, hand=hand)
        assert hand.can(action), (style, action)
    assert bots.policy_of("escaper:0.2").escape == 0.2
    assert bots.policy_of("a style of an older version").name == "cautious"
    assert bots.plan_turn(random.Random(3), 0.0, 15, 180).kind == "act"


def test_a_call_must_pay_by_pot_odds_when_the_pot_is_known() -> None:
    """Calling 1000 into a pot of 200 needs a 1000/1200 chance: cautious (0.6) folds it,
    calls it into a pot of 10,000; a policy asking half the odds calls it with 0.45."""
    big = [Legal("call", 1000, 1000), Legal("fold")]
    cautious = POLICIES["cautious"]
    assert decide(cautious, 0.6, big, "ann", Fixed(0.5), pot=200).verb == "fold"
    assert decide(cautious, 0.6, big, "ann", Fixed(0.5), pot=10_000).verb == "call"
    assert decide(replace(cautious, odds=0.5), 0.45, big, "ann", Fixed(0.5), pot=200).verb == "call"
    assert decide(POLICIES["station"], 0.45, big, "ann", Fixed(0.5), pot=200).verb == "fold"
