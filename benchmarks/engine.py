"""Engine benchmarks: each section measures gmtool against a named baseline in the same run.

    python benchmarks/engine.py                 # every section
    python benchmarks/engine.py ranking --hands 500000 --repeat 7

Sections are functions returning a ``Result`` and are listed in ``SECTIONS``; a new
section (hands played per second, say) is a function plus one entry there. Randomness
here comes from ``random.Random(seed)`` and only chooses inputs; the engine itself
never draws random numbers. The ranking baseline is treys (``pip install treys``),
a well-known pure-Python Cactus Kev evaluator; DESIGN "Budgets" asks for >= 1x.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from gmtool.engine.cards import Card, Deck
from gmtool.engine.ranking import Stud5Ranking

DEFAULT_SEED = 20_240_601


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
    ranking.key(deck.cards[:5])  # builds the table
    build = time.perf_counter() - start
    sample = random_hands(deck, hands, seed)
    key = ranking.key

    def ours() -> None:
        for cards in sample:
            key(cards)

    rate = best_rate(ours, hands, repeat)
    notes = [f"{hands:,} random hands of the 28-card deck, seed {seed}, best of {repeat}",
             f"table of {ranking.hand_count:,} hands built once, lazily, in {build:.3f} s"]
    try:
        from treys import Evaluator
    except ImportError:
        return Result("ranking", "hands/s", "gmtool Stud5Ranking.key", rate, "treys", None,
                      notes=[*notes, "treys is not installed: pip install treys"])
    evaluator = Evaluator()
    evaluate = evaluator.evaluate
    treys_sample = [[treys_card(card) for card in cards] for cards in sample]
    board: list[int] = []

    def theirs() -> None:
        for cards in treys_sample:
            evaluate(cards, board)

    baseline = best_rate(theirs, hands, repeat)
    agree = sum(ranking.category(cards) == _treys_category(evaluator, evaluate(t, board))
                for cards, t in zip(sample, treys_sample))
    notes.append(f"categories agree with treys on {agree:,} of {hands:,} hands")
    return Result("ranking", "hands/s", "gmtool Stud5Ranking.key", rate,
                  "treys Evaluator.evaluate", baseline, notes=notes)


def _treys_category(evaluator, hand_rank: int) -> str:
    name = evaluator.class_to_string(evaluator.get_rank_class(hand_rank)).lower()
    name = name.replace(" ", "_").replace("royal_flush", "straight_flush")
    return {"pair": "one_pair"}.get(name, name)


SECTIONS: dict[str, Callable[..., Result]] = {
    "ranking": bench_ranking,
}


def render(result: Result) -> str:
    """A section as text: both rates, the ratio against its target, then notes."""
    width = max(len(result.ours_name), len(result.baseline_name), len("ratio"))
    lines = [f"{result.name}:",
             f"  {result.ours_name:<{width}} {result.ours:>12,.0f} {result.unit}"]
    if result.baseline is not None and result.ratio is not None:
        verdict = "meets" if result.ratio >= result.target else "MISSES"
        lines += [f"  {result.baseline_name:<{width}} {result.baseline:>12,.0f} {result.unit}",
                  f"  {'ratio':<{width}} {result.ratio:>12.2f}x "
                  f"({verdict} target >= {result.target:g}x)"]
    lines += [f"  - {note}" for note in result.notes]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sections", nargs="*", help=f"any of {', '.join(SECTIONS)} (default: all)")
    parser.add_argument("--hands", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    args = parser.parse_args(argv)
    unknown = [name for name in args.sections if name not in SECTIONS]
    if unknown:
        parser.error(f"unknown section {', '.join(unknown)}; choose from {', '.join(SECTIONS)}")
    for name in args.sections or SECTIONS:
        print(render(SECTIONS[name](hands=args.hands, repeat=args.repeat, seed=args.seed)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
