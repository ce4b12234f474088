"""One simulated hand, and one run of a player who sat with the minimum holding.

Everything a hand uses comes from `key`, a digest of (seed, tier, what, index): the
deck (the engine's own HMAC shuffle of its first 16 bytes), the count of players, the
banker, and one random stream per seat for its policy and thinking time. A hand is
therefore the same in any process and in any order, and hand i of two profiles is dealt
the same cards to the same seats: the pairing `--vs` relies on.

Time: each turn the bot to act thinks for `think_seconds` of its policy; a think as long
as the profile's action limit or longer is a timeout (the engine folds or passes, S17)
after exactly the limit. A hand's seconds are the sum of its turns.
"""

from __future__ import annotations

import hashlib
import struct
from math import log
from operator import attrgetter
from typing import NamedTuple, Sequence

from gmtool.engine.config import deck_for, ranking_for
from gmtool.engine.events import Action
from gmtool.engine.hand import CardSource, Hand, Seat
from gmtool.engine.play import shuffled_source, start_hand
from gmtool.engine.policies import Policy, decide, policy_named
from gmtool.engine.spec import EngineConfig
from gmtool.engine.strength import Sight
from gmtool.simulate.setup import MAX_BUST_HANDS, TierPlan

WORDS = 16  # random numbers a seat has at first: all but about 1 hand in 2,000 need fewer
SHOWDOWN_REASONS = frozenset({"showdown", "open", "round_limit"})  # cards compared (S14, H8, H11)
MAX_TURNS = 10_000  # a hand still running after this many turns is a bug in a policy
MAX_DRAWS = 6 * MAX_TURNS  # random numbers a seat can draw in a hand (six at most a turn)
SEAT_NAMES = tuple(f"seat{k}" for k in range(1, 11))

_SCALE = (2.0 ** -32).__mul__  # a 32-bit word to a float in [0, 1), exactly
_NEW = tuple.__new__  # a named tuple without its Python-level __new__
_DELTA = attrgetter("delta")
_TIMEOUT = "timeout"


class SimulationStuck(RuntimeError):
    """A simulated hand did not end: the policies never leave it (a bug, not input)."""


class Stream:
    """One seat's random numbers in one hand: `random()` is a float in [0, 1), a C-level
    step of an iterator (what `engine/policies` draws from)."""

    __slots__ = ("random",)


_WORDS: dict[int, struct.Struct] = {}  # by count of words: their little-endian layout


def seat_draws(key: bytes, seats: int, words: int = WORDS) -> list:
    """Each seat's `random` for the hand `key` names, `words` numbers each: number j of
    seat k is 32-bit word j * seats + k (little-endian: every machine reads the same) of
    SHAKE-128 of the key, times 2**-32. Interleaved, a seat's first numbers are the same
    however many are read: a hand in which a seat drew them all is played again with
    more (`play`), and gives what it would have given at once."""
    count = words * seats
    layout = _WORDS.get(count)
    if layout is None:
        layout = _WORDS.setdefault(count, struct.Struct(f"<{count}I"))
    numbers = layout.unpack(hashlib.shake_128(key).digest(layout.size))
    return [map(_SCALE, numbers[k::seats]).__next__ for k in range(seats)]


def seat_streams(key: bytes, seats: int, words: int = WORDS) -> list[Stream]:
    """`seat_draws` as objects with a `random` method (the policies' rng)."""
    streams = []
    for draw in seat_draws(key, seats, words):
        stream = Stream()
        stream.random = draw
        streams.append(stream)
    return streams


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
        self._streams = tuple(Stream() for _ in range(high))  # reused hand after hand
        self.verbs = self._verbs()

    @property
    def policies(self) -> tuple[Policy, ...]:
        return self._policies

    @policies.setter
    def policies(self, policies: Sequence[Policy]) -> None:
        """One a seat; with each its mean thinking time past the least (tests set them)."""
        self._policies = tuple(policies)
        self._think = tuple(policy.think_s - 0.5 for policy in self._policies)

    def _verbs(self) -> frozenset[str]:
        """The input verbs this game's hands accept (which measures apply: all-in,
        looks, buys, opens), read from one hand rather than from the game's name."""
        hand = self._start(hand_key(self.plan, "probe", 0), None, 0)
        return frozenset(name[7:] for name in dir(type(hand)) if name.startswith("verify_"))

    def _start(self, key: bytes, sitter: int | None, sitter_coins: int):
        count = self.low + key[16] % self.span
        names = SEAT_NAMES[:count]
        seats = self._seats.get((count, sitter, sitter_coins))
        if seats is None:
            holding = self.plan.holding
            seats = tuple(Seat(name, sitter_coins if k == sitter else holding)
                          for k, name in enumerate(names))
            if len(self._seats) < 256:  # bust runs: one sitter's coins a hand, so bounded
                self._seats[count, sitter, sitter_coins] = seats
        banker = names[int.from_bytes(key[17:19], "big") % count]
        return start_hand(self.config, self.plan.tier, seats, banker, self.deal(key),
                          ante=self.plan.ante, ranking=self.ranking)

    def deal(self, key: bytes) -> CardSource:
        """The cards of the hand `key` names: the engine's shuffle of its first 16 bytes
        (tests deal a rigged deck here)."""
        return shuffled_source(self.cards, key[:16])


def hand_key(plan: TierPlan, what: str, index: int, step: int = 0) -> bytes:
    """The digest hand `index` (of run `index`, hand `step`, for bust runs) comes from."""
    text = f"{plan.seed}\x00{plan.tier}\x00{what}\x00{index}\x00{step}"
    return hashlib.sha256(text.encode("utf-8")).digest()


def play_hand(table: Table, key: bytes, sitter: int | None = None,
              sitter_coins: int = 0) -> HandRecord:
    """Play one hand to its settlement with the plan's policies; what it measures."""
    return play(table, key, sitter, sitter_coins)[1]


def play(table: Table, key: bytes, sitter: int | None = None, sitter_coins: int = 0
         ) -> tuple[Hand, HandRecord]:
    """`play_hand`, with the finished hand (its events: tests and benchmarks). A hand
    in which a seat draws all the random numbers it was given is played again from the
    start with four times as many (rarely: WORDS is more than nearly every seat draws);
    the same numbers come first, so the hand is the one it would have been at once."""
    words = WORDS
    while True:
        try:
            return _play(table, key, sitter, sitter_coins, words)
        except StopIteration:  # a seat's numbers ran out (nothing else raises it here)
            if words >= MAX_DRAWS:
                raise
            words *= 4


def _play(table: Table, key: bytes, sitter: int | None, sitter_coins: int, words: int
          ) -> tuple[Hand, HandRecord]:
    """One hand with `words` random numbers a seat. The loop is the simulator's whole
    cost beside the engine's, so it does at a turn only the draw of the thinking time,
    one strength estimate and one decision, with every name it needs bound once."""
    hand = table._start(key, sitter, sitter_coins)
    order = hand.order
    streams = table._streams
    for stream, draw in zip(streams, seat_draws(key, len(order), words)):
        stream.random = draw
    seat_of = dict(zip(order, zip(table._policies, streams, table._think,
                                  map(hand.players.__getitem__, order))))
    judge = table.sight.judge(hand)
    limit = float(table.plan.action_s)
    legal_actions, apply = hand.legal_actions, hand.apply
    seconds = 0.0
    timeouts = 0
    verbs: list[str] = []
    verb = verbs.append
    for turns in range(MAX_TURNS):
        if hand.settlement is not None:
            break
        name = hand.to_act
        try:
            policy, rng, think, player = seat_of[name]
        except KeyError:  # nobody to act in a hand not over: a bug of a game
            raise SimulationStuck(f"{table.plan.profile}/{table.plan.tier}: a hand waits "
                                  f"for nobody after {turns} turns") from None
        think = 0.5 - think * log(1.0 - rng.random())  # policies.think_seconds
        if think >= limit:
            seconds += limit
            timeouts += 1
            apply(_NEW(Action, (_TIMEOUT, name, None, None, None)))
            continue
        seconds += think
        action = decide(policy, judge(hand, player), legal_actions(), name, rng, hand.pot)
        verb(action[0])
        apply(action)
    else:
        if hand.settlement is None:
            raise SimulationStuck(f"{table.plan.profile}/{table.plan.tier}: a hand did not "
                                  f"end after {MAX_TURNS} turns")
        turns = MAX_TURNS
    settlement = hand.settlement
    deltas = tuple(map(_DELTA, settlement.entries))  # one a seat, in seat order
    escapes = verbs.count("escape")
    cost = -sum(deltas[k] for k, name in enumerate(order)
                if hand.players[name].escaped) if escapes else 0
    return hand, _NEW(HandRecord, (
        hand.pot, turns, seconds, int(settlement.reason in SHOWDOWN_REASONS),
        int("allin" in verbs), escapes, cost, timeouts, verbs.count("look"),
        verbs.count("buy"), verbs.count("open"), deltas[order.index(hand.banker)], deltas))


def play_hands(table: Table, start: int, stop: int) -> list[HandRecord]:
    return [play_hand(table, hand_key(table.plan, "hand", index))
            for index in range(start, stop)]


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
