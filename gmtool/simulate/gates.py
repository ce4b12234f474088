"""`--fail-if` bounds: the CI gate on a simulation's measures.

A bound is `TIER.MEASURE.STAT OP NUMBER`, for example `junior.seconds_per_hand.median >
90` or `*.escape.rate >= 5%`: OP is one of > >= < <= == !=, NUMBER may end in % (a share:
5% is 0.05), and TIER may be `*` (every tier that has the measure). With `--vs` the bound
is checked on the other profile (the proposed change), or on the change itself with
`.change` or `.change_pct` after STAT: `junior.pot.mean.change_pct > 20`.

A bound that holds is "broken" when its expression is true: the simulation exits 1.
A malformed bound, or one naming a tier, measure or statistic the report does not have,
is a usage error (exit 2) that names what is valid, reported before anything is played.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from gmtool.errors import UsageError

OPERATORS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    "<=": operator.le,
    "==": operator.eq,
    "!=": operator.ne,
    ">": operator.gt,
    "<": operator.lt,
}
CHANGE_FIELDS = ("change", "change_pct")
_PATTERN = re.compile(r"^\s*([^\s<>=!]+)\s*(>=|<=|==|!=|>|<)\s*([-+]?\d+(?:\.\d+)?)(%?)\s*$")


@dataclass(frozen=True)
class Gate:
    text: str
    tier: str  # "*" for every tier
    measure: str
    stat: str
    change: str | None  # "change" | "change_pct" | None
    op: str
    bound: float


def parse(text: str, compare: bool) -> Gate:
    """One bound, checked for form only (names are checked by `check_names`)."""
    match = _PATTERN.match(text)
    if not match:
        raise UsageError(
            f"--fail-if {text!r}: expected TIER.MEASURE.STAT OP NUMBER, such as "
            "'junior.seconds_per_hand.median > 90' (OP: "
            f"{' '.join(sorted(OPERATORS, key=len))})"
        )
    path, op, number, percent = match.groups()
    parts = path.split(".")
    change = None
    if len(parts) == 4 and parts[3] in CHANGE_FIELDS:
        if not compare:
            raise UsageError(f"--fail-if {text!r}: .{parts[3]} needs --vs (a comparison)")
        change = parts.pop()
    if len(parts) != 3 or not all(parts):
        raise UsageError(
            f"--fail-if {text!r}: the name must be TIER.MEASURE.STAT"
            + (" (or TIER.MEASURE.STAT.change / .change_pct)" if compare else "")
        )
    bound = float(number) / (100 if percent else 1)
    return Gate(text, *parts, change, op, bound)


def check_names(gates: Sequence[Gate], names: Mapping[str, Mapping[str, Sequence[str]]]) -> None:
    """UsageError naming what is valid if a gate names an unknown tier, measure or
    statistic; `names` is tier -> measure -> statistics."""
    for gate in gates:
        tiers = list(names) if gate.tier == "*" else [gate.tier]
        if gate.tier != "*" and gate.tier not in names:
            raise UsageError(
                f"--fail-if {gate.text!r}: no tier {gate.tier!r} is simulated "
                f"(tiers: {', '.join(names)})"
            )
        having = [t for t in tiers if gate.measure in names[t]]
        if not having:
            valid = sorted({m for t in tiers for m in names[t]})
            raise UsageError(
                f"--fail-if {gate.text!r}: no measure {gate.measure!r} in "
                f"{'any tier' if gate.tier == '*' else gate.tier} (measures: "
                f"{', '.join(valid)})"
            )
        stats = names[having[0]][gate.measure]
        if gate.stat not in stats:
            raise UsageError(
                f"--fail-if {gate.text!r}: {gate.measure} has no statistic "
                f"{gate.stat!r} (statistics: {', '.join(stats)})"
            )


def evaluate(
    gates: Sequence[Gate],
    values: Callable[[Gate, str], float | None],
    names: Mapping[str, Mapping[str, Sequence[str]]],
) -> list[dict]:
    """Each gate's verdict per tier: {"bound", "tier", "value", "broken"}; a value the
    simulation could not measure (no escape, so no escape cost) is not checked."""
    verdicts = []
    for gate in gates:
        tiers = [t for t in names if gate.measure in names[t]] if gate.tier == "*" else [gate.tier]
        for tier in tiers:
            value = values(gate, tier)
            broken = value is not None and OPERATORS[gate.op](value, gate.bound)
            verdicts.append({"bound": gate.text, "tier": tier, "value": value, "broken": broken})
    return verdicts


def report_value(report: dict, gate: Gate, tier: str) -> float | None:
    """The value a gate checks in a report (`simulate.report`), single or compared."""
    entry = next(t for t in report["tiers"] if t["tier"] == tier)
    if "changes" not in entry:
        return entry["measures"].get(gate.measure, {}).get(gate.stat)
    if gate.change is not None:
        change = entry["changes"].get(gate.measure, {}).get(gate.stat)
        return None if change is None else change[gate.change]
    side = entry["vs"] or {}
    return side.get("measures", {}).get(gate.measure, {}).get(gate.stat)
