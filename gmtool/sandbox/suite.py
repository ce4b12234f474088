"""Running every scenario under some paths: the engine of `gmtool rules test`."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gmtool.errors import GmtoolError
from gmtool.findings import Finding
from gmtool.sandbox.scenario import load_scenario, scenario_files


@dataclass(frozen=True)
class ScenarioResult:
    path: Path
    failures: tuple[str, ...]
    rules: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        return not self.failures


def run_scenarios(paths: list[str]) -> list[ScenarioResult]:
    """Run each scenario; a scenario that cannot even be read (or names a profile that
    cannot) is a failure, not a crash."""
    from gmtool.sandbox.expect import check
    from gmtool.sandbox.run import play

    results = []
    for path in scenario_files(paths):
        try:
            scenario = load_scenario(path)
            failures = tuple(check(play(scenario)))
            rules = tuple(scenario.rules)
        except GmtoolError as error:  # scenario, profile or refused action: this file only
            failures, rules = (str(error),), ()
        except Exception as error:  # noqa: BLE001 - a bug must not cost the other files
            failures, rules = (
                (
                    f"gmtool could not run this scenario (internal error: "
                    f"{type(error).__name__}: {error}); please report it",
                ),
                (),
            )
        results.append(ScenarioResult(path, failures, rules))
    return results


@dataclass
class SuiteReport:
    """What `gmtool rules test` reports (a `gmtool.findings.Report`): a finding per unmet
    expectation, placed at the scenario's file."""

    results: list[ScenarioResult]
    tool = "gmtool rules test"
    artifact: str | None = None

    @property
    def failed(self) -> list[ScenarioResult]:
        return [result for result in self.results if not result.passed]

    @property
    def findings(self) -> list[Finding]:
        """A finding per failure, at its `[expect]` key or refused action (sandbox/places.py)."""
        from gmtool.sandbox.places import failure_positions

        return [
            Finding("scenario", failure, file=str(result.path), line=line, column=column)
            for result in self.failed
            for failure, (line, column) in zip(
                result.failures, failure_positions(result.path, result.failures)
            )
        ]

    def lines(self) -> Iterator[str]:
        for result in self.results:
            yield f"{'PASS' if result.passed else 'FAIL'} {result.path}"
            yield from (f"     {failure}" for failure in result.failures)

    def summary(self, strict: bool = False) -> str:
        return f"{len(self.results) - len(self.failed)} passed, {len(self.failed)} failed"

    def exit_code(self, strict: bool = False) -> int:
        return 1 if self.failed else 0

    def as_json(self) -> dict[str, Any]:
        return {
            "scenarios": len(self.results),
            "failed": len(self.failed),
            "results": [
                {
                    "file": str(r.path),
                    "passed": r.passed,
                    "rules": list(r.rules),
                    "failures": list(r.failures),
                }
                for r in self.results
            ],
        }
