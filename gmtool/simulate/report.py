"""Reports of a simulation as plain data (the `--json` contract; the text is drawn from it).

One profile: `{"profile", "seed", "hands", "players", "policies", "under", "tiers": [TIER]}`
with TIER `{"tier", "title", ..., "measures": {MEASURE: {STAT: value}}, "histograms"}`.
Two (`--vs`): the same header with `"vs"`, and per tier `{"tier", "base": TIER | null,
"vs": TIER | null, "changes": {MEASURE: {STAT: {"old", "new", "change", "change_pct",
"ci", "significant"}}}}`. With `--fail-if`, `"bounds": [{"bound", "tier", "value",
"broken"}]` (gates.py). Floats are rounded to 4 decimals; nothing in a report depends on
the clock or the number of processes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gmtool.bots.policies import policy_named
from gmtool.simulate.measures import (
    SIGNED,
    column_of,
    distributions,
    histograms,
    measure_names,
    stat_name,
    tier_measures,
)
from gmtool.simulate.play import SEAT_NAMES
from gmtool.simulate.run import TierResult
from gmtool.simulate.setup import Profile, SimOptions
from gmtool.simulate.stats import paired_change, quantile


def rounded(value: Any) -> Any:
    """Floats to 4 decimals, recursively (ints, strings, None and bools as they are)."""
    if isinstance(value, float):
        return round(value, 4) + 0.0  # + 0.0: never "-0.0"
    if isinstance(value, dict):
        return {key: rounded(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [rounded(item) for item in value]
    return value


def players_words(opts: SimOptions) -> str:
    low, high = opts.players
    return str(low) if low == high else f"{low}-{high}"


def seat_policies(opts: SimOptions, seats: int) -> list[dict]:
    return [
        {"seat": SEAT_NAMES[k], "policy": policy_named(opts.policies[k % len(opts.policies)]).name}
        for k in range(seats)
    ]


def header(
    profile: Profile, opts: SimOptions, other: Profile | None = None, labels: Sequence[str] = ()
) -> dict:
    seats = seat_policies(opts, opts.players[1])
    labels = list(labels) or [profile.label]
    out = {"profile": _profile(profile, labels[0])}
    if other is not None:
        out["vs"] = _profile(other, labels[1])
    names = sorted({seat["policy"] for seat in seats})
    out.update(
        seed=opts.seed,
        hands=opts.hands,
        players=players_words(opts),
        policies=seats,
        policy_rules={name: policy_named(name).describe() for name in names},
        under="under policies " + ", ".join(f"{s['seat']} {s['policy']}" for s in seats),
    )
    return out


def _profile(profile: Profile, label: str) -> dict:
    return {
        "label": label,
        "file": profile.path,
        "id": profile.compiled["profile"]["id"],
        "config_id": profile.config_id,
    }


def tier_report(result: TierResult, bounds: dict | None = None) -> dict:
    plan = result.plan
    return {
        "tier": plan.tier,
        "title": plan.title,
        "closed_in_profile": plan.forced_open,
        "training": plan.training,
        "hands": len(result.hands),
        "seats_hold": plan.holding,
        "coins_to_sit": plan.need,
        "ante": plan.ante,
        "action_s": plan.action_s,
        "bust_runs": len(result.busts),
        "bust_censored": sum(1 for _, censored in result.busts if censored),
        "measures": tier_measures(result),
        "histograms": histograms(distributions(result), bounds),
    }


def single(profile: Profile, opts: SimOptions, results: Sequence[TierResult]) -> dict:
    """The report of one profile."""
    return rounded({**header(profile, opts), "tiers": [tier_report(r) for r in results]})


def compared(
    profile: Profile,
    other: Profile,
    opts: SimOptions,
    tiers: Sequence[str],
    base: dict[str, TierResult],
    vs: dict[str, TierResult],
    labels: Sequence[str],
) -> dict:
    """The report of two profiles played on the same seeds, tier by tier."""
    out = []
    for tier in tiers:
        a, b = base.get(tier), vs.get(tier)
        bounds = _shared_bounds(a, b) if a and b else None
        entry = {
            "tier": tier,
            "base": tier_report(a, bounds) if a else None,
            "vs": tier_report(b, bounds) if b else None,
            "changes": {},
        }
        if a and b:
            entry["changes"] = changes(a, b)
        out.append(entry)
    return rounded({**header(profile, opts, other, labels), "tiers": out})


def changes(a: TierResult, b: TierResult) -> dict:
    both = measure_names(b)
    out = {}
    for measure, stats in measure_names(a).items():
        if measure not in both:
            continue
        out[measure] = {
            stat: paired_change(
                stat_name(measure, stat),
                column_of(a, measure, stat),
                column_of(b, measure, stat),
                relative=measure not in SIGNED,
            )
            for stat in stats
            if stat in both[measure]
        }
    return out


def _shared_bounds(a: TierResult, b: TierResult) -> dict:
    """Histogram ranges that cover both profiles, so their bars line up."""
    da, db = distributions(a), distributions(b)
    out = {}
    for name in da.keys() & db.keys():
        values = [*da[name], *db[name]]
        if values:
            out[name] = (
                min(values),
                max(quantile(da[name], 0.99) or 0, quantile(db[name], 0.99) or 0),
            )
    return out
