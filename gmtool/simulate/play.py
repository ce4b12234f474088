"""One simulated hand, and one run of a player who sat with the minimum holding.

Everything a hand uses comes from `key`, a digest of (seed, tier, what, index): the
deck (the engine's own HMAC shuffle of its first 16 bytes), the count of players, the
banker, and the hand's random numbers (SHAKE-128 of the key), which the bots draw in
turn: a thinking time at every turn, and what their policies draw to decide. A hand is
therefore the same in any process and in any order, and hand i of two profiles is dealt
the same cards to the same seats and draws the same numbers in the same order: the
pairing `--vs` relies on.

Time: each turn the bot to act thinks for `think_seconds` of its policy; a think as long
as the profile's action limit or longer is a timeout (the engine folds or passes, S17)
after exactly the limit. A hand's seconds are the sum of its turns.

This loop is the simulator's whole cost beside the engine's (benchmarks/simulate.py
holds it under a quarter of the engine's time): a turn does only the draw of its
thinking time, one strength estimate and one decision; the numbers of a hand come from
one digest, made floats by a C-level iterator (the objects a hand makes cost as much as
the draws).
"""

from __future__ import annotations

import hashlib
import sys
from array import array
from collections.abc import Sequence
from itertools import repeat
from math import expm1, log1p
from operator import attrgetter, mul
from typing import NamedTuple

from gmtool.bots.policies import Policy, decide, policy_named
from gmtool.bots.strength import Sight
from gmtool.engine.config import EngineConfig
from gmtool.engine.events import Action
from gmtool.engine.games import ranking_for
from gmtool.engine.hand import CardSource, Hand, Seat
from gmtool.engine.play import shuffled_source, start_hand
from gmtool.engine.rankings import deck_for
from gmtool.simulate.setup import MAX_BUST_HANDS, TierPlan

WORDS = 32  # numbers a hand has at first: a stud5 hand draws about 19, rarely above 32
SHOWDOWN_REASONS = frozenset({"showdown", "open", "round_limit"})  # cards compared (S14, H8, H11)
MAX_TURNS = 10_000  # a hand still running after this many turns is a bug in a policy
MAX_WORDS = 6 * MAX_TURNS  # numbers a hand can draw (six draws at most a turn)
SEAT_NAMES = tuple(f"seat{k}" for k in range(1, 11))

_WORD = next(code for code in "ILH" if array(code).itemsize == 4)  # an unsigned 32-bit word
_SWAP = sys.byteorder == "big"  # words are read little-endian on every machine
_UNIT = repeat(2.0**-32)  # a word times this: a float in [0, 1), exactly (stateless: shared)
_NEW = tuple.__new__  # a named tuple without its Python-level __new__
_DELTA = attrgetter("delta")
_TIMEOUT = "timeout"


class SimulationStuck(RuntimeError):
    """A simulated hand did not end: the policies never leave it (a bug, not input)."""


class Stream:
    """A hand's random numbers: `random()` is a float in [0, 1), a C-level step of an
    iterator (the `rng` that `bots/policies` draws from)."""

    __slots__ = ("random",)

    def start(self, key: bytes, words: int = WORDS) -> None:
        """The numbers of the hand `key` names: 32-bit words of SHAKE-128 of the key, read
        little-endian (every machine draws the same), times 2**-32. The first numbers are
        the same however many are read: a hand that runs out is played again with more
        (`play`), and is the hand it would have been at once."""
        numbers = array(_WORD, hashlib.shake_128(key).digest(4 * words))
        if _SWAP:
            numbers.byteswap()
        self.random = map(mul, numbers, _UNIT).__next__


class HandRecord(NamedTuple):
    """What one hand gives the measures (coins are the seats' settlement deltas)."""

    pot: int
    turns: int
    seconds: float
    showdown: int
    allin: int
    escapes: int
    escape_cost: int  # coins the escapees lost in this hand
    timeouts: int
    looks: int
    buys: int
    opens: int
    banker: int  # the banker's delta (stud5: the banker when the hand ended; three-card: dealer)
    deltas: tuple[int, ...]  # by seat


class Table:
    """A plan made ready to play in this process: typed config, ranking, policies."""

    def __init__(self, plan: TierPlan) -> None:
        self.plan = plan
        self.config = EngineConfig.of(plan.compiled)
        self.ranking = ranking_for(self.config)
        self.sight = Sight(self.ranking)  # the strength tables, built once
        self.cards = deck_for(self.config).cards
        self.policies = tuple(policy_named(name) for name in plan.policies)
        low, high = plan.players
        self.low, self.span = low, high - low + 1
        self._seats: dict[tuple[int, int | None, int], tuple[Seat, ...]] = {}
        self._stream = Stream()  # reused hand after hand
        self.words = WORDS  # numbers a hand has at first (`play` raises it if need be)
        probe = self._start(hand_key(self.plan, "probe", 0), None, 0)
        self.verbs = _verbs(probe)
        self._judge = self.sight.judge(probe)  # by the game: every hand of it alike
        self._counted = tuple(
            verb for verb in ("escape", "allin", "look", "buy", "open") if verb in self.verbs
        )  # the measures' verbs this game has

    @property
    def policies(self) -> tuple[Policy, ...]:
        return self._policies

    @policies.setter
    def policies(self, policies: Sequence[Policy]) -> None:
        """One a seat (tests set them). With each, how it thinks (`_thinking`)."""
        self._policies = tuple(policies)
        self._rows = tuple(
            (policy, *_thinking(policy, self.plan.action_s)) for policy in self._policies
        )

    def _start(self, key: bytes, sitter: int | None, sitter_coins: int):
        count = self.low + key[16] % self.span
        names = SEAT_NAMES[:count]
        seats = self._seats.get((count, sitter, sitter_coins))
        if seats is None:
            holding = self.plan.holding
            seats = tuple(
                Seat(name, sitter_coins if k == sitter else holding) for k, name in enumerate(names)
            )
            if len(self._seats) < 256:  # bust runs: a sitter's coins change, so bounded
                self._seats[count, sitter, sitter_coins] = seats
        banker = names[int.from_bytes(key[17:19], "big") % count]
        return start_hand(
            self.config,
            self.plan.tier,
            seats,
            banker,
            self.deal(key),
            ante=self.plan.ante,
            ranking=self.ranking,
        )

    def deal(self, key: bytes) -> CardSource:
        """The cards of the hand `key` names: the engine's shuffle of its first 16 bytes
        (tests deal a rigged deck here)."""
        return shuffled_source(self.cards, key[:16])


def _verbs(hand: Hand) -> frozenset[str]:
    """The input verbs a game's hands accept (which measures apply: all-in, looks, buys,
    opens), read from one hand rather than from the game's name."""
    return frozenset(name[7:] for name in dir(type(hand)) if name.startswith("verify_"))


def _thinking(policy: Policy, limit: float) -> tuple[float, float]:
    """(mean, cut): `policies.think_seconds` is 0.5 s plus an exponential wait with this
    mean, -mean * log(1 - u) for the draw u; it reaches the action limit, a timeout,
    exactly when u >= cut."""
    mean = policy.think_s - 0.5
    return mean, -expm1(-(limit - 0.5) / mean) if mean > 0 else 1.0


def hand_key(plan: TierPlan, what: str, index: int, step: int = 0) -> bytes:
    """The digest hand `index` (of run `index`, hand `step`, for bust runs) comes from."""
    text = f"{plan.seed}\x00{plan.tier}\x00{what}\x00{index}\x00{step}"
    return hashlib.sha256(text.encode("utf-8")).digest()


def play_hand(
    table: Table, key: bytes, sitter: int | None = None, sitter_coins: int = 0
) -> HandRecord:
    """Play one hand to its settlement with the plan's policies; what it measures."""
    return play(table, key, sitter, sitter_coins)[1]


def play(
    table: Table, key: bytes, sitter: int | None = None, sitter_coins: int = 0
) -> tuple[Hand, HandRecord]:
    """`play_hand`, with the finished hand (its events: tests and benchmarks). A hand
    that runs out of random numbers is played again from the start with twice as many
    (and the table starts its later hands with as many, up to 4 * WORDS: three-card hands
    can be long); the numbers a hand draws do not depend on how many were read."""
    words = table.words
    while True:
        try:
            return _play(table, key, sitter, sitter_coins, words)
        except StopIteration:  # the numbers ran out (nothing else raises it in a hand)
            if words >= MAX_WORDS:
                raise
            words *= 2
            if words <= 4 * WORDS:  # long hands are the game's: start the next with more
                table.words = max(table.words, words)


def _play(
    table: Table, key: bytes, sitter: int | None, sitter_coins: int, words: int
) -> tuple[Hand, HandRecord]:
    """One hand with `words` random numbers; every name the loop uses is bound once."""
    hand = table._start(key, sitter, sitter_coins)
    order = hand.order
    players = hand.players
    seat_of = {name: (*row, players[name]) for name, row in zip(order, table._rows)}
    rng = table._stream
    rng.start(key, words)
    draw = rng.random
    judge = table._judge
    legal_actions, apply = hand.legal_actions, hand.apply
    waited = 0.0  # log(1 - u) times the mean, summed over the turns that did not time out
    timeouts = 0
    verbs: list[str] = []
    verb = verbs.append
    for turns in range(MAX_TURNS):
        if hand.settlement is not None:
            break
        name = hand.to_act
        try:
            policy, mean, cut, player = seat_of[name]
        except KeyError:  # nobody to act in a hand not over: a bug of a game
            raise SimulationStuck(
                f"{table.plan.profile}/{table.plan.tier}: a hand waits "
                f"for nobody after {turns} turns"
            ) from None
        u = draw()  # the thinking time: 0.5 - mean * log(1 - u) (`policies.think_seconds`)
        if u >= cut:
            timeouts += 1
            apply(_NEW(Action, (_TIMEOUT, name, None, None, None)))
            continue
        waited += mean * log1p(-u)
        action = decide(policy, judge(hand, player), legal_actions(), name, rng, hand.pot)
        verb(action[0])
        apply(action)
    else:
        if hand.settlement is None:
            raise SimulationStuck(
                f"{table.plan.profile}/{table.plan.tier}: a hand did not "
                f"end after {MAX_TURNS} turns"
            )
        turns = MAX_TURNS
    settlement = hand.settlement
    deltas = tuple(map(_DELTA, settlement.entries))  # one a seat, in seat order
    escapes = allin = looks = buys = opens = 0
    if verbs:
        counted = table._counted
        if "escape" in counted:
            escapes = verbs.count("escape")
        if "allin" in counted:
            allin = int("allin" in verbs)
        if "look" in counted:
            looks = verbs.count("look")
        if "buy" in counted:
            buys = verbs.count("buy")
        if "open" in counted:
            opens = verbs.count("open")
    cost = (
        -sum(deltas[k] for k, name in enumerate(order) if players[name].escaped) if escapes else 0
    )
    return hand, _NEW(
        HandRecord,
        (
            hand.pot,
            turns,
            0.5 * (turns - timeouts) - waited + table.plan.action_s * timeouts,
            int(settlement.reason in SHOWDOWN_REASONS),
            allin,
            escapes,
            cost,
            timeouts,
            looks,
            buys,
            opens,
            deltas[order.index(hand.banker)],
            deltas,
        ),
    )


def play_hands(table: Table, start: int, stop: int) -> list[HandRecord]:
    return [play_hand(table, hand_key(table.plan, "hand", index)) for index in range(start, stop)]


def bust_run(table: Table, run: int) -> tuple[int, bool]:
    """Hands a player who sat with exactly the coins needed to sit plays until they hold
    less; (MAX_BUST_HANDS, True) if never. The sitter is seat `run` mod the least count
    of players, so it is seated in every hand of the run whatever the count."""
    plan = table.plan
    coins = plan.need
    sitter = run % table.low
    for step in range(MAX_BUST_HANDS):
        key = hand_key(plan, "bust", run, step)
        record = play_hand(table, key, sitter, coins)
        coins += record.deltas[sitter]
        if coins < plan.need:
            return step + 1, False
    return MAX_BUST_HANDS, True


def bust_runs(table: Table, start: int, stop: int) -> list[tuple[int, bool]]:
    return [bust_run(table, run) for run in range(start, stop)]
