"""What a simulation plays: its options, and the plan of each (profile, tier).

Decisions where the issue is silent (docs/simulate.md says why):

- Tiers: every enabled tier by default; a tier named with `--tier` is played even when
  the profile disables it (an operator's what-if before opening a room), marked so.
- Seats: `--players N` or a range `A-B` (the count of each hand drawn from its seed),
  within the table's seats. Seat k plays the k-th policy of `--policy`, the list cycled.
- Coins: every seat holds ten times what the room requires to sit (the sandbox's default,
  `Game.scenario_coins`); an owner-ante table plays at its smallest ante chip.
- Hands until out: `bust_runs` runs in which one seat (in turn) sits with exactly the
  coins needed to sit and plays until it holds less, at most `MAX_BUST_HANDS` hands.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from gmtool.bots.policies import POLICIES, policy_named
from gmtool.bounds import MAX_JOBS
from gmtool.engine.config import EngineConfig
from gmtool.engine.games import game_of
from gmtool.engine.seating import coins_to_sit
from gmtool.errors import UsageError

MAX_HANDS = 1_000_000  # hands of one tier (bounds.MAX_COUNT)

MAX_BUST_HANDS = 500  # a run still seated after this many hands is counted at it (censored)
DEFAULT_HANDS = 10_000
DEFAULT_SEED = "0"
DEFAULT_POLICIES = tuple(POLICIES)  # cautious, loose, aggressive, station: one a seat


@dataclass(frozen=True)
class SimOptions:
    """What the operator asked for (validated by `options`)."""

    hands: int = DEFAULT_HANDS
    players: tuple[int, int] = (4, 4)
    seed: str = DEFAULT_SEED
    jobs: int = 1
    policies: tuple[str, ...] = DEFAULT_POLICIES
    tiers: tuple[str, ...] = ()


def options(
    hands: int = DEFAULT_HANDS,
    players: str = "4",
    seed: str = DEFAULT_SEED,
    jobs: int = 1,
    policies: Sequence[str] = (),
    tiers: Sequence[str] = (),
) -> SimOptions:
    """Options from the command line's words; UsageError (exit 2) for any bad value."""
    if not 1 <= hands <= MAX_HANDS:
        raise UsageError(f"--hands must be from 1 to {MAX_HANDS:,}, not {hands}")
    if not 1 <= jobs <= MAX_JOBS:
        raise UsageError(f"--jobs must be from 1 to {MAX_JOBS}, not {jobs}")
    names = tuple(name.strip() for text in policies for name in text.split(",") if name.strip())
    for name in names:
        policy_named(name)  # UsageError naming the valid policies
    return SimOptions(
        hands, parse_players(players), seed, jobs, names or DEFAULT_POLICIES, tuple(tiers)
    )


def parse_players(text: str) -> tuple[int, int]:
    """`--players`: "3" or a range "2-4" (each hand's count drawn from its seed)."""
    match = re.fullmatch(r"\s*(\d{1,2})\s*(?:-\s*(\d{1,2})\s*)?", text)
    if not match:
        raise UsageError(f"--players must be a count (3) or a range (2-4), not {text!r}")
    low = int(match.group(1))
    high = int(match.group(2) or low)
    if not 2 <= low <= high:
        raise UsageError(
            f"--players {text}: a hand needs 2 players or more, and a range goes from low to high"
        )
    return low, high


@dataclass(frozen=True)
class Profile:
    """A compiled profile as a report names it."""

    label: str  # the file's stem
    path: str
    compiled: dict

    @property
    def config_id(self) -> str:
        return self.compiled["config_id"]


def profile_from(path: str | Path, compiled: dict) -> Profile:
    return Profile(Path(path).stem, str(path), compiled)


@dataclass(frozen=True)
class TierPlan:
    """One (profile, tier) to play: plain data, so it travels to worker processes."""

    profile: str
    tier: str
    title: str
    compiled: dict  # the profile; with this tier opened when it was asked for while closed
    forced_open: bool
    players: tuple[int, int]
    policies: tuple[str, ...]  # one a seat, as many as the most players
    seed: str
    hands: int
    bust_runs: int
    holding: int  # coins every seat holds at the start of a hand
    need: int  # coins needed to sit (0 in a training room)
    ante: int | None  # owner-ante tables: the ante the owner sets
    training: bool
    action_s: int


def tier_ids(profile: Profile) -> list[str]:
    return [tier["id"] for tier in profile.compiled["tiers"]]


def chosen_tiers(profiles: Sequence[Profile], requested: Sequence[str]) -> list[str]:
    """The tiers to play: those asked for (each must exist in one profile at least, else
    UsageError naming the tiers there are), or every tier enabled in any of the profiles."""
    known = []
    for profile in profiles:
        known += [tier for tier in tier_ids(profile) if tier not in known]
    if requested:
        unknown = [tier for tier in requested if tier not in known]
        if unknown:
            raise UsageError(
                f"no tier {', '.join(map(repr, unknown))} in "
                f"{' or '.join(p.path for p in profiles)} (tiers: {', '.join(known)})"
            )
        return list(dict.fromkeys(requested))
    enabled = []
    for profile in profiles:
        enabled += [
            tier["id"]
            for tier in profile.compiled["tiers"]
            if tier.get("enabled", True) and tier["id"] not in enabled
        ]
    return enabled


def plan_for(profile: Profile, tier_id: str, opts: SimOptions, requested: bool) -> TierPlan | None:
    """The plan of one tier of one profile; None when the profile has no such tier, or
    has it closed and it was not asked for by name."""
    tier = next((t for t in profile.compiled["tiers"] if t["id"] == tier_id), None)
    if tier is None or (not tier.get("enabled", True) and not requested):
        return None
    compiled = profile.compiled
    forced = not tier.get("enabled", True)
    if forced:  # an operator's what-if on a room not open yet: play it as if open
        compiled = {
            **compiled,
            "config_id": None,
            "tiers": [
                {**t, "enabled": True} if t["id"] == tier_id else t for t in compiled["tiers"]
            ],
        }
    spec = EngineConfig.of(compiled)
    seats = spec.table.seats
    low, high = opts.players
    if high > seats:
        raise UsageError(
            f"--players {low}-{high}: a table of {profile.path} seats at most "
            f"{seats} ({game_of(spec).seat_rule})"
        )
    game = game_of(spec)
    ante = spec.owner_ante.chips[0] if game.owner_table(spec) else None
    typed_tier = spec.tier(tier_id)
    need = coins_to_sit(spec, tier_id, ante)
    return TierPlan(
        profile=profile.label,
        tier=tier_id,
        title=tier.get("title", tier_id),
        compiled=compiled,
        forced_open=forced,
        players=(low, high),
        policies=tuple(opts.policies[k % len(opts.policies)] for k in range(high)),
        seed=opts.seed,
        hands=opts.hands,
        bust_runs=bust_runs(opts.hands, not typed_tier.coins),
        holding=game.scenario_coins(spec, typed_tier, ante),
        need=need,
        ante=ante,
        training=not typed_tier.coins,
        action_s=spec.timeouts.action_s,
    )


def bust_runs(hands: int, training: bool) -> int:
    """Runs of a player sitting with the minimum holding: one a fifty hands, from 20 to
    500 (none in a training room, where nobody is ever out of coins)."""
    return 0 if training else min(500, max(20, hands // 50))
