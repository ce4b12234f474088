"""Bots that stand in for players: the named policies, and chaos for testing recovery.

A bot plays one of the policies of `bots/policies` (the same the what-if simulator
`gmtool rules simulate` uses): it only ever chooses among the engine's legal actions (it
cannot cheat, and it decides nothing about the rules), driven by the strength of the
cards it can see (`bots/strength`). With chaos, a bot sometimes stalls until its clock
runs out, disconnects for a while (inside or past the reconnect window) or leaves in the
middle of a hand.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from gmtool.bots.policies import POLICIES, Policy, decide, policy_named
from gmtool.bots.strength import strength
from gmtool.engine.events import Action
from gmtool.engine.hand import Hand, Legal
from gmtool.errors import GmtoolError

STYLE_NAMES = tuple(POLICIES)  # the styles the host deals out to its bots, in turn


@dataclass(frozen=True)
class Turn:
    """What a bot does with its turn: act after thinking, stall, disconnect or escape."""

    kind: str  # "act" | "stall" | "disconnect" | "escape"
    seconds: float = 0.0  # game seconds: thinking time, or time away


def policy_of(style: str) -> Policy:
    """The policy of a style name ("cautious", "escaper:0.1" ...); cautious if unknown."""
    try:
        return policy_named(style)
    except GmtoolError:  # a style this version does not know: play it safe
        return POLICIES["cautious"]


def choose(style: str, legal: list[Legal], player: str, rng: random.Random, hand: Hand) -> Action:
    """The action the bot's policy takes among `legal`: it judges the cards the bot can
    see in `hand` and the pot (`bots/policies.decide`), as in the simulator."""
    return decide(policy_of(style), strength(hand, player), legal, player, rng, hand.pot)


def plan_turn(rng: random.Random, chaos: float, action_s: int, window_s: int) -> Turn:
    """How a bot spends its turn (game seconds); chaos is the chance of trouble per turn."""
    if chaos and rng.random() < chaos:
        trouble = rng.choice(("stall", "short_disconnect", "long_disconnect", "escape"))
        if trouble == "stall":
            return Turn("stall", action_s)
        if trouble == "escape":
            return Turn("escape", rng.uniform(0.5, 2.0))
        away = rng.uniform(0.2, 0.8) * window_s if trouble == "short_disconnect" else window_s
        return Turn("disconnect", max(1, int(away)))
    return Turn("act", rng.uniform(0.5, min(4.0, action_s * 0.5)))
