"""Play every plan's hands and runs, in this process or in `jobs` worker processes.

The work is cut into chunks of fixed size (independent of `jobs`), each a pure function
of its plan and index range; the chunks' results are put back together in chunk order.
So one process or several give the same records, and the same report byte for byte.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

from gmtool.simulate.play import HandRecord, Table, bust_runs, play_hands
from gmtool.simulate.setup import TierPlan

CHUNK_HANDS = 2_000
CHUNK_RUNS = 50


@dataclass
class TierResult:
    """The records of one plan: its hands in index order, and its runs to bust."""

    plan: TierPlan
    verbs: frozenset[str]  # the input verbs of the game (which measures apply)
    hands: list[HandRecord]
    busts: list[tuple[int, bool]]


Unit = tuple[int, str, int, int]  # (plan index, "hand" | "bust", start, stop)

_PLANS: Sequence[TierPlan] = ()
_TABLES: dict[int, Table] = {}


def _init(plans: Sequence[TierPlan]) -> None:
    """Worker start: the plans (tables already built are inherited where processes fork)."""
    global _PLANS
    if _PLANS is not plans:
        _PLANS = plans
        _TABLES.clear()


def _table(index: int) -> Table:
    table = _TABLES.get(index)
    if table is None:
        table = _TABLES[index] = Table(_PLANS[index])
    return table


def _run_unit(unit: Unit) -> list:
    index, what, start, stop = unit
    table = _table(index)
    return play_hands(table, start, stop) if what == "hand" else bust_runs(table, start, stop)


def units_of(plans: Sequence[TierPlan]) -> list[Unit]:
    units: list[Unit] = []
    for index, plan in enumerate(plans):
        units += [
            (index, "hand", start, min(start + CHUNK_HANDS, plan.hands))
            for start in range(0, plan.hands, CHUNK_HANDS)
        ]
        units += [
            (index, "bust", start, min(start + CHUNK_RUNS, plan.bust_runs))
            for start in range(0, plan.bust_runs, CHUNK_RUNS)
        ]
    return units


def simulate(
    plans: Sequence[TierPlan], jobs: int = 1, advance: Callable[[int], None] | None = None
) -> list[TierResult]:
    """The records of every plan; `advance(hands_done)` is told of progress."""
    plans = tuple(plans)
    _init(plans)
    tables = [_table(index) for index in range(len(plans))]  # built before any fork
    units = units_of(plans)
    results = [TierResult(plan, table.verbs, [], []) for plan, table in zip(plans, tables)]
    done = 0
    for unit, records in zip(units, _map(units, plans, jobs)):
        target = results[unit[0]]
        (target.hands if unit[1] == "hand" else target.busts).extend(records)
        done += len(records)
        if advance is not None:
            advance(done)
    return results


def _map(units: list[Unit], plans: tuple[TierPlan, ...], jobs: int):
    if jobs <= 1 or len(units) <= 1:
        yield from map(_run_unit, units)
        return
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else None)
    with ProcessPoolExecutor(
        max_workers=jobs, mp_context=context, initializer=_init, initargs=(plans,)
    ) as pool:
        yield from pool.map(_run_unit, units)
