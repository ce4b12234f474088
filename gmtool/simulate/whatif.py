"""The one function `gmtool rules simulate` calls: plan, check, play, report, gate.

Everything the operator can get wrong (a flag value, a tier, a policy, a bound) is
checked before the first hand is played, and raised as a UsageError (exit 2).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from gmtool.errors import UsageError
from gmtool.rules.compile import compile_file
from gmtool.simulate import gates, report
from gmtool.simulate.measures import measure_names
from gmtool.simulate.play import Table
from gmtool.simulate.run import TierResult, simulate
from gmtool.simulate.setup import (
    Profile,
    TierPlan,
    chosen_tiers,
    options,
    plan_for,
    profile_from,
)


@dataclass
class Outcome:
    """A simulation's report (plain data), the verdicts of its bounds, and the records
    by profile label and tier (for the picture)."""

    report: dict
    verdicts: list[dict]
    labels: list[str]
    results: dict[str, dict[str, TierResult]] = field(default_factory=dict)

    @property
    def broken(self) -> list[dict]:
        return [verdict for verdict in self.verdicts if verdict["broken"]]

    @property
    def exit_code(self) -> int:
        return 1 if self.broken else 0


def what_if(
    profile: str | Path,
    other: str | Path | None = None,
    *,
    tiers: Sequence[str] = (),
    hands: int = 10_000,
    players: str = "4",
    seed: str = "0",
    jobs: int = 1,
    policies: Sequence[str] = (),
    fail_if: Sequence[str] = (),
    advance: Callable[[int], None] | None = None,
) -> Outcome:
    """Simulate `profile` (and `other` on the same seeds) tier by tier; see the package."""
    opts = options(hands, players, seed, jobs, policies, tiers)
    bounds = [gates.parse(text, other is not None) for text in fail_if]
    profiles = [profile_from(path, compile_file(path)) for path in (profile, other) if path]
    labels = _labels(profiles)
    chosen = chosen_tiers(profiles, opts.tiers)
    plans: dict[str, dict[str, TierPlan]] = {}
    for label, prof in zip(labels, profiles):
        plans[label] = {}
        for tier in chosen:
            plan = plan_for(prof, tier, opts, requested=bool(opts.tiers))
            if plan is not None:
                plans[label][tier] = plan
    if not any(plans.values()):
        raise UsageError(
            f"no tier to simulate: every tier of {profiles[0].path} is closed; "
            "name one with --tier to play it as if open"
        )
    checked = plans[labels[-1]]  # bounds read the other profile when comparing
    if bounds:
        names = {
            tier: measure_names(TierResult(plan, Table(plan).verbs, [], []))
            for tier, plan in checked.items()
        }
        gates.check_names(bounds, names)
    flat = [(label, tier, plan) for label in labels for tier, plan in plans[label].items()]
    records = simulate([plan for _, _, plan in flat], opts.jobs, advance)
    results: dict[str, dict[str, TierResult]] = {label: {} for label in labels}
    for (label, tier, _), result in zip(flat, records):
        results[label][tier] = result
    if other is None:
        body = report.single(profiles[0], opts, list(results[labels[0]].values()))
    else:
        body = report.compared(
            profiles[0], profiles[1], opts, chosen, results[labels[0]], results[labels[1]], labels
        )
    verdicts = []
    if bounds:
        names = {tier: measure_names(result) for tier, result in results[labels[-1]].items()}
        verdicts = gates.evaluate(bounds, lambda g, t: gates.report_value(body, g, t), names)
        body["bounds"] = verdicts
    return Outcome(body, verdicts, labels, results)


def _labels(profiles: Sequence[Profile]) -> list[str]:
    labels = [p.label for p in profiles]
    if len(set(labels)) < len(labels):
        labels = [p.path for p in profiles]
    if len(set(labels)) < len(labels):
        labels = [f"{label} ({which})" for label, which in zip(labels, ("base", "vs"))]
    return labels
