"""The measures of a simulated tier: what each is, how it is read from the records.

A measure is a column of values aligned by hand (or by run, for hands until out), None
where it has no value (a seat absent from a hand, a hand without an escape), and the
statistics reported of it. Measures that need a verb the game does not have (all-in in
three-card, looks in stud5) are left out of that tier's report: three-card rooms report
their looks, buys and opens, stud5 rooms their all-ins.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from gmtool.simulate.play import SEAT_NAMES
from gmtool.simulate.run import TierResult
from gmtool.simulate.stats import histogram, statistic

Column = list


@dataclass(frozen=True)
class Measure:
    name: str
    stats: tuple[str, ...]
    doc: str
    column: Callable[[TierResult], Column]
    verb: str | None = None  # only for games that accept this verb
    coins: bool = False  # only where coins move (not in training rooms)
    histogram: bool = False


def _field(name: str) -> Callable[[TierResult], Column]:
    return lambda result: [getattr(record, name) for record in result.hands]


MEASURES: tuple[Measure, ...] = (
    Measure(
        "pot",
        ("mean", "median", "p95"),
        "coins in the pot when the hand ended",
        _field("pot"),
        histogram=True,
    ),
    Measure(
        "actions_per_hand",
        ("mean", "median", "p95"),
        "turns taken: actions, timeouts and escapes",
        _field("turns"),
        histogram=True,
    ),
    Measure(
        "seconds_per_hand",
        ("mean", "median", "p95"),
        "game seconds: the bots' thinking, a timeout counting the action limit",
        _field("seconds"),
        histogram=True,
    ),
    Measure("showdown", ("rate",), "share of hands whose cards were compared", _field("showdown")),
    Measure(
        "allin", ("rate",), "share of hands with an all-in (S15)", _field("allin"), verb="allin"
    ),
    Measure(
        "escape",
        ("rate",),
        "share of hands with an escape (S19)",
        lambda result: [int(r.escapes > 0) for r in result.hands],
    ),
    Measure(
        "escape_cost",
        ("mean", "median"),
        "coins the escapees lost, per hand with an escape",
        lambda result: [r.escape_cost if r.escapes else None for r in result.hands],
        coins=True,
    ),
    Measure(
        "timeouts_per_hand",
        ("mean",),
        "turns that ran out of the action limit (S17)",
        _field("timeouts"),
    ),
    Measure(
        "looks_per_hand", ("mean",), "blind players who looked (H4)", _field("looks"), verb="look"
    ),
    Measure("buys_per_hand", ("mean",), "buys (H7)", _field("buys"), verb="buy"),
    Measure(
        "opens_per_hand",
        ("mean",),
        "opens (H8); an open ends the hand",
        _field("opens"),
        verb="open",
    ),
)


def coins_stats(result: TierResult) -> tuple[str, ...]:
    return (*(SEAT_NAMES[k] for k in range(result.plan.players[1])), "banker")


def coins_column(result: TierResult, stat: str) -> Column:
    """Coins won (+) or lost (-) per hand by one seat, or by the banker."""
    if stat == "banker":
        return [record.banker for record in result.hands]
    seat = SEAT_NAMES.index(stat)
    return [record.deltas[seat] if seat < len(record.deltas) else None for record in result.hands]


def bust_column(result: TierResult) -> Column:
    return [hands for hands, _ in result.busts]


def applies(measure: Measure, result: TierResult) -> bool:
    return (measure.verb is None or measure.verb in result.verbs) and not (
        measure.coins and result.plan.training
    )


def measure_names(result: TierResult) -> dict[str, tuple[str, ...]]:
    """Every measure of a tier with its statistics (what `--fail-if` may name)."""
    names = {m.name: m.stats for m in MEASURES if applies(m, result)}
    if not result.plan.training:
        names["coins_per_hand"] = coins_stats(result)
        names["hands_to_bust"] = ("median", "p90")
    return names


def column_of(result: TierResult, measure: str, stat: str) -> Column:
    if measure == "coins_per_hand":
        return coins_column(result, stat)
    if measure == "hands_to_bust":
        return bust_column(result)
    return next(m for m in MEASURES if m.name == measure).column(result)


def stat_name(measure: str, stat: str) -> str:
    """The statistic that computes `stat` of `measure` (coins by seat are means)."""
    return "mean" if measure == "coins_per_hand" else stat


def tier_measures(result: TierResult) -> dict[str, dict[str, float | int | None]]:
    """Every applicable measure's statistics for one tier."""
    out = {}
    for measure, stats in measure_names(result).items():
        columns = {}
        out[measure] = {}
        for stat in stats:
            key = measure if measure != "coins_per_hand" else stat
            if key not in columns:
                columns[key] = column_of(result, measure, stat)
            out[measure][stat] = statistic(stat_name(measure, stat), columns[key])
    return out


SIGNED = frozenset({"coins_per_hand"})  # won (+) or lost (-): a change in % means nothing

HISTOGRAMS = ("pot", "seconds_per_hand", "actions_per_hand", "hands_to_bust")


def distributions(result: TierResult) -> dict[str, list]:
    """The values drawn as histograms (text and PNG)."""
    out = {}
    for name in HISTOGRAMS:
        if name == "hands_to_bust":
            if result.busts:
                out[name] = bust_column(result)
        else:
            out[name] = column_of(result, name, "mean")
    return out


def histograms(values: dict[str, list], bounds: dict[str, tuple] | None = None) -> dict:
    bounds = bounds or {}
    return {
        name: histogram(column, *bounds.get(name, (None, None))) for name, column in values.items()
    }
