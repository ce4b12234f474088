"""Statistics of simulated values: means, rates, quantiles, histograms, paired intervals.

Every function is deterministic and exact in its arithmetic order (`math.fsum`), so the
same values give the same numbers on any machine and in any number of processes.

Confidence intervals use sectioning (batch means; Asmussen and Glynn, *Stochastic
Simulation*, III.5): the hands are split into `SECTIONS` interleaved sections (hand i in
section i mod 20; fewer for fewer values, `section_count`); a statistic's change is
computed in each section, and the interval is the change over all hands plus or minus
t(0.975, K - 1) times the sections' standard deviation over the square root of K. It
works alike for means, rates, medians and percentiles, and it is paired: a section of
the base and the same section of the other profile are the same decks and seats.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from math import floor, fsum, sqrt

SECTIONS = 20
MIN_SECTION = 25  # values a section holds at least
T_975 = {
    19: 2.093,
    18: 2.101,
    17: 2.110,
    16: 2.120,
    15: 2.131,
    14: 2.145,
    13: 2.160,
    12: 2.179,
    11: 2.201,
    10: 2.228,
    9: 2.262,
    8: 2.306,
    7: 2.365,
    6: 2.447,
    5: 2.571,
    4: 2.776,
    3: 3.182,
    2: 4.303,
    1: 12.706,
}
HISTOGRAM_BINS = 12

Number = float | int


def mean(values: Sequence[Number]) -> float | None:
    return fsum(values) / len(values) if values else None


def quantile(values: Sequence[Number], q: float, presorted: bool = False) -> Number | None:
    """The q-quantile, linear between order statistics (numpy's default, type 7)."""
    if not values:
        return None
    ordered = values if presorted else sorted(values)
    position = (len(ordered) - 1) * q
    low = floor(position)
    fraction = position - low
    if fraction == 0:
        return ordered[low]
    return ordered[low] + (ordered[low + 1] - ordered[low]) * fraction


STATISTICS: dict[str, Callable[[Sequence[Number]], Number | None]] = {
    "mean": mean,
    "rate": mean,  # of 0/1 values: a share of hands
    "median": lambda values: quantile(values, 0.5),
    "p90": lambda values: quantile(values, 0.9),
    "p95": lambda values: quantile(values, 0.95),
}


def present(column: Sequence[Number | None]) -> list[Number]:
    return [value for value in column if value is not None]


def statistic(name: str, column: Sequence[Number | None]) -> Number | None:
    return STATISTICS[name](present(column))


def section_count(size: int) -> int:
    """Sections of a column of `size` values: 20, fewer so that each holds 25 or more,
    and none (no interval) below 50 values."""
    return min(SECTIONS, size // MIN_SECTION) if size >= 2 * MIN_SECTION else 0


def sections(column: Sequence[Number | None], count: int = SECTIONS) -> list[list[Number]]:
    return [present(column[s::count]) for s in range(count)]


def paired_change(
    name: str, base: Sequence[Number | None], other: Sequence[Number | None], relative: bool = True
) -> dict:
    """The change of statistic `name` from `base` to `other` (aligned by hand), with its
    95% interval by sectioning and whether the interval excludes zero; `change_pct` only
    for a `relative` measure whose base value is above zero."""
    compute = STATISTICS[name]
    old, new = compute(present(base)), compute(present(other))
    out = {
        "old": old,
        "new": new,
        "change": None,
        "change_pct": None,
        "ci": None,
        "significant": False,
    }
    if old is None or new is None:
        return out
    change = new - old
    out["change"] = change
    out["change_pct"] = 100.0 * change / old if relative and old > 0 else None
    diffs = []
    count = section_count(len(base))
    for a, b in zip(sections(base, count), sections(other, count)):
        if a and b:
            diffs.append(compute(b) - compute(a))
    if len(diffs) >= 2:
        spread = T_975[min(len(diffs) - 1, 19)] * sqrt(_variance(diffs) / len(diffs))
        out["ci"] = [change - spread, change + spread]
        out["significant"] = change - spread > 0 or change + spread < 0
    return out


def _variance(values: Sequence[float]) -> float:
    centre = fsum(values) / len(values)
    return fsum((value - centre) ** 2 for value in values) / (len(values) - 1)


def histogram(
    values: Sequence[Number],
    low: Number | None = None,
    high: Number | None = None,
    bins: int = HISTOGRAM_BINS,
) -> dict:
    """Counts in `bins` equal bins from `low` to `high` (default: the least value to the
    99th percentile, so a long tail does not squash the rest; values above `high` count
    in the last bin and "clipped" says so). Integer values get integer-wide bins when
    their range is small."""
    if not values:
        return {"edges": [], "counts": [], "clipped": False}
    low = min(values) if low is None else low
    high = quantile(values, 0.99) if high is None else high
    whole = all(isinstance(v, int) for v in values)
    if whole:
        high = int(high + 0.5)
    clipped = max(values) > high
    if high <= low:
        return {"edges": [low, high], "counts": [len(values)], "clipped": clipped}
    if whole and high - low + 1 <= bins:
        bins = int(high - low + 1)
        edges = [low + k for k in range(bins + 1)]
    else:
        width = (high - low) / bins
        edges = [low + width * k for k in range(bins)] + [high]
    counts = [0] * bins
    span = edges[-1] - edges[0]
    for value in values:
        index = int((value - edges[0]) / span * bins)
        counts[min(max(index, 0), bins - 1)] += 1
    return {"edges": edges, "counts": counts, "clipped": clipped}
