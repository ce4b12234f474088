"""Invariants of the simulator, for any seed, tier, policy mix and player count
(hypothesis): coins are conserved in every simulated hand, a training room (`coins =
false`) moves no coins, and a hand is the same whatever order or process plays it."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from gmtool.bots.policies import POLICIES
from gmtool.cli import app
from gmtool.rules.compile import compile_file
from gmtool.simulate.play import Table, bust_run, hand_key, play_hand
from gmtool.simulate.setup import options, plan_for, profile_from

RULES = Path(__file__).resolve().parent.parent / "rules"
ROOMS = [
    ("qq-showhand", "junior"),
    ("qq-showhand", "expert"),
    ("lequ-showhand", "table"),
    ("suihua-three-card", "chips-5"),
    ("suihua-three-card", "chips-10"),
    ("video-showhand", "middle"),
]
TRAINING = [
    ("qq-showhand", "training"),
    ("straight-flush", "normal"),
    ("video-showhand", "training"),
    ("suihua-three-card", "chips-5"),
]
POLICY_NAMES = [*POLICIES, "escaper:0.1", "escaper:0.5"]
FAST = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@cache
def compiled(profile: str) -> dict:
    return compile_file(RULES / f"{profile}.toml")


@cache
def table(
    profile: str,
    tier: str,
    players: str,
    policies: tuple[str, ...],
    seed: str,
    training: bool = False,
) -> Table:
    source = compiled(profile)
    if training:  # the room as a training room: S22, no coins move
        source = {
            **source,
            "tiers": [{**t, "coins": False} if t["id"] == tier else t for t in source["tiers"]],
        }
    prof = profile_from(RULES / f"{profile}.toml", source)
    return Table(
        plan_for(
            prof,
            tier,
            options(hands=10, players=players, seed=seed, policies=policies),
            requested=True,
        )
    )


rooms = st.sampled_from(ROOMS)
seat_counts = st.sampled_from(["2", "3", "4", "2-4"])
policy_mixes = st.lists(st.sampled_from(POLICY_NAMES), min_size=1, max_size=4).map(tuple)
seeds = st.text(min_size=0, max_size=8)
indices = st.integers(min_value=0, max_value=10**9)


@FAST
@given(rooms, seat_counts, policy_mixes, seeds, indices)
def test_coins_are_conserved_in_every_simulated_hand(room, players, policies, seed, index):
    """S20: a settlement moves coins between players only: the deltas sum to zero, no
    seat loses more than it held, and an escapee's loss is what the escape cost."""
    played = table(*room, players, policies, seed)
    record = play_hand(played, hand_key(played.plan, "hand", index))
    assert sum(record.deltas) == 0
    assert all(delta >= -played.plan.holding for delta in record.deltas)
    assert record.pot >= 0 and record.escape_cost >= 0
    assert record.escapes or record.escape_cost == 0


@FAST
@given(st.sampled_from(TRAINING), seat_counts, policy_mixes, seeds, indices)
def test_training_rooms_move_no_coins(room, players, policies, seed, index):
    """S22 (`coins = false`): whatever the bots do, escapes included, no coin moves."""
    played = table(*room, players, policies, seed, training=True)
    record = play_hand(played, hand_key(played.plan, "hand", index))
    assert record.deltas == (0,) * len(record.deltas)
    assert record.banker == 0 and record.escape_cost == 0


@FAST
@given(rooms, seat_counts, policy_mixes, seeds, st.lists(indices, min_size=2, max_size=5))
def test_a_hand_is_the_same_in_any_order(room, players, policies, seed, hand_indices):
    """A hand depends on (seed, tier, index) only: played forwards or backwards, by a table
    made anew, it gives the same record (the ground of `--jobs`)."""
    forwards = table(*room, players, policies, seed)
    backwards = Table(forwards.plan)
    ahead = [play_hand(forwards, hand_key(forwards.plan, "hand", i)) for i in hand_indices]
    behind = [
        play_hand(backwards, hand_key(backwards.plan, "hand", i)) for i in reversed(hand_indices)
    ]
    assert ahead == behind[::-1]


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rooms, seeds, st.integers(min_value=0, max_value=1000))
def test_a_bust_run_is_the_same_twice_and_ends_below_the_minimum(room, seed, run):
    played = table(*room, "2-4", tuple(POLICIES), seed)
    hands, censored = bust_run(played, run)
    assert bust_run(Table(played.plan), run) == (hands, censored)
    assert hands >= 1


runner = CliRunner()


def _json(*args: str) -> str:
    result = runner.invoke(app, ["rules", "simulate", *args, "--json"])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_jobs_2_gives_the_same_report_as_jobs_1_byte_for_byte() -> None:
    """Done when: deterministic for a seed and --jobs; --jobs 2 is --jobs 1, in --json."""
    args = [
        str(RULES / "qq-showhand.toml"),
        "--vs",
        str(RULES / "video-showhand.toml"),
        "--tier",
        "junior",
        "--tier",
        "training",
        "--hands",
        "4100",
        "--players",
        "2-4",
        "--policy",
        "cautious,escaper:0.2,loose",
        "--seed",
        "ci",
    ]
    one = _json(*args, "--jobs", "1")
    assert one == _json(*args, "--jobs", "2")
    assert json.loads(one)["tiers"][0]["base"]["hands"] == 4100


def test_the_seed_decides_the_report() -> None:
    args = [str(RULES / "suihua-three-card.toml"), "--hands", "300"]
    assert _json(*args, "--seed", "a") == _json(*args, "--seed", "a")
    assert _json(*args, "--seed", "a") != _json(*args, "--seed", "b")
