"""Engine benchmarks: each section measures gmtool against a named baseline in the same run.

    python benchmarks/engine.py                 # every section
    python benchmarks/engine.py ranking --hands 500000 --repeat 7
    python benchmarks/engine.py hands --seconds 2 --repeat 5

Sections are functions returning one ``Result`` or a list of them and are listed in
``SECTIONS``; each receives the command-line values its signature names (``hands``,
``seconds``, ``repeat``, ``seed``). Randomness here comes from ``random.Random(seed)``
and only chooses inputs; the engine itself never draws random numbers.

- ranking: 5-card hands ranked per second vs treys (``pip install treys``), a
  well-known pure-Python Cactus Kev evaluator; the budget ("Budgets" in
  benchmarks/README.md) is >= 1x.
- hands: complete random stud5 hands played per second, no database (QQ junior tier,
  lequ owner-ante table), vs pokerkit's fixed-limit seven-card stud (``pip install
  pokerkit``), the nearest public peer; issue 3 asks for >= 10,000 stud5 hands/s on one
  core. If ``benchmarks/three_card_speed.py`` exposes ``hands_per_second(seconds)``, its
  three-card figure is printed beside them.
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import random
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from gmtool.engine.cards import Card, Deck
from gmtool.engine.ranking import Stud5Ranking

DEFAULT_SEED = 20_240_601
HERE = Path(__file__).resolve().parent
RULES = HERE.parent / "rules"


@dataclass(frozen=True)
class Result:
    """One section's measurement: our rate against the baseline's, per second."""

    name: str
    unit: str
    ours_name: str
    ours: float
    baseline_name: str
    baseline: float | None
    target: float = 1.0
    notes: list[str] = field(default_factory=list)
    min_rate: float | None = None  # an absolute target for ``ours``, in ``unit``

    @property
    def ratio(self) -> float | None:
        return self.ours / self.baseline if self.baseline else None


def best_rate(run: Callable[[], None], items: int, repeat: int) -> float:
    """Items per second of the fastest of ``repeat`` runs (the least disturbed one)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return items / best


def _prepare(ranking, cards) -> None:
    """Build the ranking's whole table now (gmtool builds it on demand since issue 22;
    earlier checkouts on first use)."""
    prepare = getattr(ranking, "prepare", None)
    if prepare is not None:
        prepare()
    ranking.key(cards)


def random_hands(deck: Deck, count: int, seed: int, size: int = 5) -> list[tuple[Card, ...]]:
    """``count`` random hands of ``size`` different cards, reproducible from ``seed``."""
    rng = random.Random(seed)
    return [tuple(rng.sample(deck.cards, size)) for _ in range(count)]


def treys_card(card: Card) -> int:
    """Our card as a treys int ("AS" -> treys "As")."""
    from treys import Card as TreysCard

    return TreysCard.new(card.rank_symbol + card.suit_symbol.lower())


def bench_ranking(hands: int = 200_000, repeat: int = 5, seed: int = DEFAULT_SEED) -> Result:
    """5-card hands ranked per second: Stud5Ranking.key vs treys Evaluator.evaluate.

    Both rank the same random hands of the 28-card deck, each from its own card
    representation prepared beforehand; our table is built before timing (its one-off
    build time is reported as a note).
    """
    deck = Deck.showhand()
    ranking = Stud5Ranking(deck)
    start = time.perf_counter()
    _prepare(ranking, deck.cards[:5])  # builds the table
    build = time.perf_counter() - start
    sample = random_hands(deck, hands, seed)
    key = ranking.key

    def ours() -> None:
        for cards in sample:
            key(cards)

    rate = best_rate(ours, hands, repeat)
    notes = [
        f"{hands:,} random hands of the 28-card deck, seed {seed}, best of {repeat}",
        f"table of {ranking.hand_count:,} hands built once, lazily, in {build:.3f} s",
    ]
    try:
        from treys import Evaluator
    except ImportError:
        return Result(
            "ranking",
            "hands/s",
            "gmtool Stud5Ranking.key",
            rate,
            "treys",
            None,
            notes=[*notes, "treys is not installed: pip install treys"],
        )
    evaluator = Evaluator()
    evaluate = evaluator.evaluate
    treys_sample = [[treys_card(card) for card in cards] for cards in sample]
    board: list[int] = []

    def theirs() -> None:
        for cards in treys_sample:
            evaluate(cards, board)

    baseline = best_rate(theirs, hands, repeat)
    agree = sum(
        ranking.category(cards) == _treys_category(evaluator, evaluate(t, board))
        for cards, t in zip(sample, treys_sample)
    )
    notes.append(f"categories agree with treys on {agree:,} of {hands:,} hands")
    return Result(
        "ranking",
        "hands/s",
        "gmtool Stud5Ranking.key",
        rate,
        "treys Evaluator.evaluate",
        baseline,
        notes=notes,
    )


def _treys_category(evaluator, hand_rank: int) -> str:
    name = evaluator.class_to_string(evaluator.get_rank_class(hand_rank)).lower()
    name = name.replace(" ", "_").replace("royal_flush", "straight_flush")
    return {"pair": "one_pair"}.get(name, name)


# ---- complete hands played per second -----------------------------------------------


@dataclass
class Tally:
    """What the random players did, so that two engines' hands can be compared."""

    hands: int = 0
    actions: int = 0
    showdowns: int = 0

    def add(self, actions: int, showdown: bool) -> None:
        self.hands += 1
        self.actions += actions
        self.showdowns += showdown

    def words(self, rate: float | None = None) -> str:
        """Actions a hand and the showdown share; with the hand rate, actions a second."""
        if not self.hands:
            return "no hand played"
        per_hand = self.actions / self.hands
        speed = f", about {rate * per_hand:,.0f} actions/s" if rate else ""
        return (
            f"{per_hand:.1f} actions a hand, {100 * self.showdowns / self.hands:.0f}% "
            f"to showdown{speed}"
        )


class Stud5Table:
    """Random complete stud5 hands at one table of a shipped profile, in memory.

    Each hand seats 2 to 4 players holding the room's minimum holding or more, starts
    with ``start_hand`` from a seeded deck (the HMAC-SHA256 shuffle is inside the
    timing) and lets the player to act pick uniformly among the legal verbs, and a
    uniform amount inside the bounds for bets and raises, until the settlement. Nobody
    folds when checking is free. The ranking table is built before timing, as a running
    host would hold it.
    """

    def __init__(self, profile: str, tier_id: str) -> None:
        from gmtool.engine.games import ranking_for
        from gmtool.rules.compile import compile_file

        self.config = compile_file(RULES / f"{profile}.toml")
        self.tier_id = tier_id
        self.tier = next(t for t in self.config["tiers"] if t["id"] == tier_id)
        self.ranking = ranking_for(self.config)
        _prepare(self.ranking, self._deck_cards()[:5])  # the table, outside the timing
        self.owner_ante = self.config["betting"]["style"] == "owner_ante"
        self.tally = Tally()

    def _deck_cards(self):
        from gmtool.engine.rankings import deck_for

        return deck_for(self.config).cards

    def seats(self, rng: random.Random):
        """Seats and ante: QQ tiers from the minimum holding, lequ 200 x a chip ante."""
        from gmtool.engine.hand import Seat

        count = rng.randint(2, 4)
        if self.owner_ante:
            chips = self.config["owner_ante"]["chips"]
            ante = rng.choice(chips) + rng.choice((0, *chips))
            low = self.config["owner_ante"]["min_holding_antes"] * ante
            high = 3 * low
        else:
            ante, low = None, self.tier["min_holding"]
            high = low + 2 * self.tier["hand_cap"]
        return [Seat(name, rng.randint(low, high)) for name in PLAYERS[:count]], ante

    def play(self, rng: random.Random) -> None:
        from gmtool.engine.events import Action
        from gmtool.engine.play import seeded_source, start_hand

        seats, ante = self.seats(rng)
        source = seeded_source(self.config, rng.getrandbits(128).to_bytes(16, "big"))
        hand = start_hand(
            self.config,
            self.tier_id,
            seats,
            rng.choice(seats).name,
            source,
            ante=ante,
            ranking=self.ranking,
        )
        actions = 0
        while not hand.is_over:
            legal = hand.legal_actions()
            if any(choice.verb == "check" for choice in legal):
                legal = [choice for choice in legal if choice.verb != "fold"]
            choice = rng.choice(legal)
            amount = None
            if choice.verb in ("bet", "raise"):
                steps = (choice.max_amount - choice.min_amount) // choice.step + 1
                amount = choice.min_amount + rng.randrange(steps) * choice.step
            hand.apply(Action(choice.verb, hand.to_act, amount))
            actions += 1
        self.tally.add(actions, hand.settlement.reason == "showdown")


PLAYERS = ("ann", "bob", "carl", "dora")


class PokerkitStud:
    """pokerkit's fixed-limit seven-card stud, played the same way: 2 to 4 players,
    uniform among the verbs pokerkit allows (bring-in, check/call, complete/bet/raise,
    fold only when facing a bet), with every automation on (antes, dealing, showdown,
    chips), stakes 1 ante / 2 bring-in / 5-10 and 1,000 chips each."""

    def __init__(self) -> None:
        from pokerkit import Automation, FixedLimitSevenCardStud, Mode

        self.automations = tuple(Automation)
        self.game = FixedLimitSevenCardStud
        self.mode = Mode.CASH_GAME
        self.tally = Tally()

    def play(self, rng: random.Random) -> None:
        count = rng.randint(2, 4)
        state = self.game.create_state(
            self.automations, True, 1, 2, 5, 10, 1000, count, mode=self.mode
        )
        actions = folds = 0
        while state.status:
            moves = []
            if state.can_post_bring_in():
                moves.append(state.post_bring_in)
            if state.can_check_or_call():
                moves.append(state.check_or_call)
            if state.can_complete_bet_or_raise_to():
                moves.append(state.complete_bet_or_raise_to)
            if state.can_fold() and state.checking_or_calling_amount:
                moves.append(state.fold)
            move = rng.choice(moves)
            folds += move == state.fold
            move()
            actions += 1
        self.tally.add(actions, folds < count - 1)


def hands_rate(play: Callable[[random.Random], None], rng: random.Random, seconds: float) -> float:
    """Hands played per second during one window of about ``seconds``."""
    hands, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        play(rng)
        hands += 1
    return hands / elapsed


def three_card_hook(seconds: float) -> tuple[float | None, str]:
    """The three-card figure, when benchmarks/three_card_speed.py offers one."""
    path = HERE / "three_card_speed.py"
    if not path.exists():
        return None, "benchmarks/three_card_speed.py does not exist yet"
    spec = importlib.util.spec_from_file_location("three_card_speed", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    measure = getattr(module, "hands_per_second", None)
    if measure is None:
        return None, "benchmarks/three_card_speed.py has no hands_per_second(seconds)"
    return measure(seconds), "benchmarks/three_card_speed.py hands_per_second"


def bench_hands(seconds: float = 1.0, repeat: int = 5, seed: int = DEFAULT_SEED) -> list[Result]:
    """Complete random hands played per second (no database), one core.

    The engines are measured in interleaved windows of ``seconds`` (every round times
    each once) and each keeps its best window, so a busy moment on the machine hurts
    all of them alike. Every engine draws from its own ``random.Random(seed)``.
    """
    tables = {
        "QQ junior tier (qq-showhand/junior)": Stud5Table("qq-showhand", "junior"),
        "lequ owner-ante table (lequ-showhand/table)": Stud5Table("lequ-showhand", "table"),
    }
    players = {name: table.play for name, table in tables.items()}
    try:
        peer = PokerkitStud()
        players["pokerkit"] = peer.play
    except ImportError:
        peer = None
    best = dict.fromkeys(players, 0.0)
    rngs = {name: random.Random(seed) for name in players}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pokerkit warns about odd but legal moves
        random.seed(seed)  # pokerkit shuffles its deck with the global random module
        for name, play in players.items():  # warm-up, untimed
            play(rngs[name])
        for _ in range(repeat):
            for name, play in players.items():
                best[name] = max(best[name], hands_rate(play, rngs[name], seconds))
    baseline = best.get("pokerkit")
    window = f"best of {repeat} interleaved windows of {seconds:g} s, seed {seed}"
    peer_note = (
        f"pokerkit FixedLimitSevenCardStud {version('pokerkit')}: {peer.tally.words(baseline)}"
        if peer
        else "pokerkit is not installed: pip install pokerkit"
    )
    results = [
        Result(
            f"hands: {name}",
            "hands/s",
            "gmtool stud5",
            best[name],
            "pokerkit 7-card stud (fixed limit)",
            baseline,
            target=0,
            min_rate=10_000,
            notes=[window, f"gmtool: {table.tally.words(best[name])}", peer_note],
        )
        for name, table in tables.items()
    ]
    rate, source = three_card_hook(seconds)
    if rate is None:
        results[-1].notes.append(f"three-card: {source}")
    else:
        results.append(
            Result(
                "hands: Suihua three-card",
                "hands/s",
                "gmtool three-card",
                rate,
                "pokerkit 7-card stud (fixed limit)",
                baseline,
                target=0,
                notes=[f"{source}({seconds:g}), one window, its own seed"],
            )
        )
    return results


def version(package: str) -> str:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed(package)
    except PackageNotFoundError:
        return "?"


SECTIONS: dict[str, Callable[..., Result | list[Result]]] = {
    "ranking": bench_ranking,
    "hands": bench_hands,
}


def render(result: Result) -> str:
    """A section as text: both rates, the ratio against its target, then notes."""
    width = max(len(result.ours_name), len(result.baseline_name), len("ratio"))
    lines = [
        f"{result.name}:",
        f"  {result.ours_name:<{width}} {result.ours:>12,.0f} {result.unit}",
    ]
    if result.min_rate is not None:
        verdict = "meets" if result.ours >= result.min_rate else "MISSES"
        lines[-1] += f" ({verdict} target >= {result.min_rate:,.0f} {result.unit})"
    if result.baseline is not None and result.ratio is not None:
        verdict = "meets" if result.ratio >= result.target else "MISSES"
        lines += [
            f"  {result.baseline_name:<{width}} {result.baseline:>12,.0f} {result.unit}",
            f"  {'ratio':<{width}} {result.ratio:>12.2f}x"
            + (f" ({verdict} target >= {result.target:g}x)" if result.target else ""),
        ]
    lines += [f"  - {note}" for note in result.notes]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sections", nargs="*", help=f"any of {', '.join(SECTIONS)} (default: all)")
    parser.add_argument("--hands", type=int, default=200_000, help="hands ranked (ranking)")
    parser.add_argument(
        "--seconds", type=float, default=1.0, help="length of one timed window (hands)"
    )
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    args = parser.parse_args(argv)
    unknown = [name for name in args.sections if name not in SECTIONS]
    if unknown:
        parser.error(f"unknown section {', '.join(unknown)}; choose from {', '.join(SECTIONS)}")
    values = vars(args)
    for name in args.sections or SECTIONS:
        section = SECTIONS[name]
        wanted = inspect.signature(section).parameters
        results = section(**{key: value for key, value in values.items() if key in wanted})
        for result in results if isinstance(results, list) else [results]:
            print(render(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
