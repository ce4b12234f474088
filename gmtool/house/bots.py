"""Bots that stand in for players: a few playing styles, and chaos for testing recovery.

A bot only ever chooses among the engine's legal actions (it cannot cheat, and it
decides nothing about the rules); its style weights the verbs. With chaos, a bot
sometimes stalls until its clock runs out, disconnects for a while (inside or past the
reconnect window) or leaves in the middle of a hand.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from gmtool.engine.events import Action
from gmtool.engine.hand import Legal

# Relative weight of each verb per style; unknown verbs weigh 1.
STYLES: dict[str, dict[str, float]] = {
    "cautious": {"fold": 3, "check": 6, "call": 4, "bet": 1, "raise": 0.3, "allin": 0.1,
                 "follow": 3, "look": 3, "pass": 2, "buy": 1, "open": 4},
    "loose": {"fold": 1, "check": 4, "call": 6, "bet": 2, "raise": 1, "allin": 0.3,
              "follow": 4, "look": 1, "pass": 1, "buy": 1, "open": 3},
    "aggressive": {"fold": 0.5, "check": 2, "call": 3, "bet": 4, "raise": 3, "allin": 1,
                   "follow": 4, "look": 2, "pass": 0.5, "buy": 3, "open": 4},
    "station": {"fold": 0.2, "check": 5, "call": 8, "bet": 0.5, "raise": 0.2, "allin": 0.2,
                "follow": 6, "look": 1, "pass": 0.5, "buy": 0.5, "open": 2},
}
STYLE_NAMES = tuple(STYLES)


@dataclass(frozen=True)
class Turn:
    """What a bot does with its turn: act after thinking, stall, disconnect or escape."""

    kind: str  # "act" | "stall" | "disconnect" | "escape"
    seconds: float = 0.0  # game seconds: thinking time, or time away


def choose(style: str, legal: list[Legal], player: str, rng: random.Random) -> Action:
    """One of the legal actions, its verb weighted by style, a modest amount if it has one."""
    weights = STYLES[style]
    pick = rng.choices(legal, weights=[weights.get(entry.verb, 1.0) for entry in legal])[0]
    return rng.choice(pick.actions(player, limit=4))  # the smallest amounts: bots bet modestly


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
