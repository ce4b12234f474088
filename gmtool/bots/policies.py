"""Named bot policies: how a bot plays from the strength of the cards it can see (pure).

One set of policies serves both drivers that need players: the what-if simulator
(`gmtool rules simulate`) and the bots of the table host (`gmtool house run`). A policy
only ever picks among the engine's legal actions, or escapes (S19), which a live player
may always do; it decides nothing about the rules.

The strength is `bots/strength.strength(hand, player)`: an estimate in [0, 1] of the
chance that the bot's cards beat every other live player's, from what it can see, or None
while a three-card player has not looked (H4). Randomness comes from the `rng` passed in
(anything with a `random()` method returning a float in [0, 1)); this module draws none
of its own.

A decision, in order: escape (with the policy's chance a turn); look (three-card, blind,
with its chance a turn); all-in when the strength reaches `allin_above`; open and buy
(three-card) when strong, or anyway with the `challenge` chance; bet or raise when strong
(or bluffing); check when free; call or follow when the strength reaches `fold_below`;
else fold or pass. A blind three-card player plays as if its strength were 0.5.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from math import log
from typing import Protocol

from gmtool.engine.events import Action
from gmtool.engine.hand import Legal
from gmtool.errors import UsageError

BLIND_STRENGTH = 0.5  # a player who has not looked does not know better than even
_new = tuple.__new__  # an Action without the Python-level __new__ of a named tuple


class Rng(Protocol):
    def random(self) -> float: ...


@dataclass(frozen=True, slots=True)
class Policy:
    """How a bot plays; every threshold is a strength in [0, 1]."""

    name: str
    fold_below: float  # leave (fold, pass) a hand that costs more to stay in, below this
    raise_above: float  # bet, raise or follow high from this strength
    allin_above: float  # all-in (S15) from this strength; bets go to the top of the range
    bluff: float  # chance a decision plays as strong whatever the cards
    size: float  # how far into the allowed range a bet or raise goes (0 = the least)
    look: float  # three-card: chance a turn to look at blind cards (H4)
    challenge: float  # three-card: chance a turn to buy (H7) or open (H8) anyway
    think_s: float  # mean thinking time of a turn, game seconds (at least 0.5)
    escape: float = 0.0  # chance a turn to leave the hand: an escape (S19)
    odds: float = 1.0  # how strictly a call must pay by pot odds (1 fully, 0 never)

    def describe(self) -> str:
        words = (
            f"folds below {self.fold_below:g} (and calls by pot odds x{self.odds:g}), "
            f"bets from {self.raise_above:g}, all-in from {self.allin_above:g}, bluffs "
            f"{self.bluff:.0%}, thinks {self.think_s:g} s on average"
        )
        if self.escape:
            words += f", escapes on {self.escape:.1%} of its turns"
        return words


POLICIES: dict[str, Policy] = {
    policy.name: policy
    for policy in (
        Policy(
            "cautious",
            fold_below=0.40,
            raise_above=0.80,
            allin_above=0.92,
            bluff=0.02,
            size=0.0,
            look=1.0,
            challenge=0.15,
            think_s=3.0,
            odds=1.0,
        ),
        Policy(
            "loose",
            fold_below=0.15,
            raise_above=0.60,
            allin_above=0.85,
            bluff=0.10,
            size=0.25,
            look=0.3,
            challenge=0.25,
            think_s=2.0,
            odds=1.0,
        ),
        Policy(
            "aggressive",
            fold_below=0.25,
            raise_above=0.50,
            allin_above=0.70,
            bluff=0.20,
            size=0.5,
            look=0.5,
            challenge=0.35,
            think_s=2.0,
            odds=1.0,
        ),
        Policy(
            "station",
            fold_below=0.05,
            raise_above=0.95,
            allin_above=0.98,
            bluff=0.0,
            size=0.0,
            look=0.2,
            challenge=0.10,
            think_s=2.5,
            odds=1.0,
        ),
    )
}
ESCAPER = "escaper"  # escaper:P plays as cautious and escapes on a share P of its turns
DEFAULT_ESCAPE = 0.1
POLICY_WORDS = f"{', '.join(POLICIES)}, {ESCAPER}:P (0 <= P <= 1)"


def policy_named(text: str) -> Policy:
    """The policy a name gives: "cautious", "loose", "aggressive", "station", or
    "escaper:P" (cautious that escapes on a share P of its turns; "escaper" is P = 0.1).
    UsageError naming the valid names otherwise."""
    name, _, argument = text.strip().partition(":")
    if name in POLICIES and not argument:
        return POLICIES[name]
    if name == ESCAPER:
        try:
            chance = float(argument) if argument else DEFAULT_ESCAPE
        except ValueError:
            chance = -1.0
        if 0.0 <= chance <= 1.0:
            return replace(POLICIES["cautious"], name=f"{ESCAPER}:{chance:g}", escape=chance)
        raise UsageError(
            f"policy {text!r}: the escape chance must be a number from 0 to 1 ({ESCAPER}:0.1)"
        )
    raise UsageError(f"no policy {text!r}; policies: {POLICY_WORDS}")


def think_seconds(policy: Policy, rng: Rng) -> float:
    """Game seconds a turn takes: 0.5 s plus an exponential wait with the policy's mean,
    so some turns run past the action limit (the host then times the player out, S17)."""
    return 0.5 - (policy.think_s - 0.5) * log(1.0 - rng.random())


def decide(
    policy: Policy,
    strength: float | None,
    legal: Sequence[Legal],
    player: str,
    rng: Rng,
    pot: int | None = None,
) -> Action:
    """The action `policy` takes with `strength` (None: blind) among `legal` (non-empty);
    with the `pot` on the table, a call or follow must also be worth its price (pot odds:
    strength at least price / (pot + price)), so a bot does not call a large all-in
    with middling cards.

    The simulator calls this at every turn of every hand, so it is written for speed:
    plain loops rather than comprehensions, the player's actions without an amount made
    once (`_actions`), and no draw from `rng` that the decision does not need."""
    actions = _ACTIONS.get(player)
    if actions is None:
        actions = _actions(player)
    escape = policy.escape
    if escape and rng.random() < escape:
        return actions["escape"]
    by_verb: dict[str, Legal] = {}
    for item in legal:
        by_verb[item[0]] = item
    if "look" in by_verb and rng.random() < policy.look:
        return actions["look"]
    s = BLIND_STRENGTH if strength is None else strength
    raise_above = policy.raise_above
    strong = s >= raise_above
    if not strong:
        bluff = policy.bluff
        if bluff and rng.random() < bluff:
            s = raise_above  # a bluff plays as strong
            strong = True
    if s >= policy.allin_above and "allin" in by_verb:
        return actions["allin"]
    if "open" in by_verb and (strong or rng.random() < policy.challenge):
        return actions["open"]
    if "buy" in by_verb and (strong or rng.random() < policy.challenge):
        return _new(Action, ("buy", player, None, by_verb["buy"].targets[0], None))
    entry: Legal | None
    if strong:
        entry = by_verb.get("raise") or by_verb.get("bet")
        if entry is not None:
            return _new(Action, (entry[0], player, _amount(entry, policy, s), None, None))
    if "check" in by_verb:
        return actions["check"]
    if s >= policy.fold_below:
        entry = by_verb.get("call")
        if entry is not None:
            price = entry[1]
            if pot is None or not price or s * (pot + price) >= policy.odds * price:
                return actions["call"]  # it pays by pot odds
        entry = by_verb.get("follow") or by_verb.get("bet")  # bet: an opener who may not
        if entry is not None:  # check (L9)
            price = entry[1]
            if pot is None or not price or s * (pot + price) >= policy.odds * price:
                return _new(Action, (entry[0], player, _amount(entry, policy, s), None, None))
    if "fold" in by_verb:
        return actions["fold"]
    if "pass" in by_verb:
        return actions["pass"]
    return legal[0].actions(player, limit=1)[0]


_SIMPLE_VERBS = ("escape", "look", "allin", "open", "check", "call", "fold", "pass")
_ACTIONS: dict[str, dict[str, Action]] = {}  # by player: their actions without an amount
MAX_PLAYERS_KEPT = 4096


def _actions(player: str) -> dict[str, Action]:
    """`player`'s actions that carry no amount (actions are immutable: shared)."""
    if len(_ACTIONS) >= MAX_PLAYERS_KEPT:  # a long-running host meets many names
        _ACTIONS.clear()
    actions = _ACTIONS[player] = {
        verb: _new(Action, (verb, player, None, None, None)) for verb in _SIMPLE_VERBS
    }
    return actions


def _amount(entry: Legal, policy: Policy, s: float) -> int:
    """The amount of a bet, raise or follow: the top of the range from `allin_above`,
    else `size` of the way into it (on the step, where the entry allows it), else the least."""
    if entry.amounts:  # three-card follows: the room's amounts (H5)
        return entry.amounts[-1] if s >= policy.raise_above else entry.amounts[0]
    low, high = entry.min_amount or 0, entry.max_amount or 0  # (an amount entry has both)
    if s >= policy.allin_above:
        return high
    if policy.size and s >= policy.raise_above:
        amount = low + int((high - low) * policy.size) // entry.step * entry.step
        if entry.allows(amount):
            return amount
    return low
