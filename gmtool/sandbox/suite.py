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
    unusable: bool = False  # the profile it names cannot be read: a usage error (exit 2)

    @property
    def passed(self) -> bool:
        return not self.failures


def run_scenarios(paths: list[str]) -> list[ScenarioResult]:
    """Run each scenario; a scenario that cannot even be read (or names a profile that
    cannot) is a failure, not a crash, and the others still run."""
    from gmtool.rules.validate import ProfileFileError
    from gmtool.sandbox.expect import check
    from gmtool.sandbox.run import play

    results = []
    for path in scenario_files(paths):
        unusable = False
        try:
            scenario = load_scenario(path)
            failures = tuple(check(play(scenario)))
            rules = tuple(scenario.rules)
        except ProfileFileError as error:  # the profile it names: missing, unreadable
            failures, rules, unusable = (str(error),), (), True
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
        results.append(ScenarioResult(path, failures, rules, unusable))
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

    @property
    def unusable(self) -> list[ScenarioResult]:
        """Scenarios that could not run: the profile they name cannot be read."""
        return [result for result in self.results if result.unusable]

    def summary(self, strict: bool = False) -> str:
        passed, failed = len(self.results) - len(self.failed), len(self.failed)
        missing = (
            f" ({len(self.unusable)} could not run: a profile they name cannot be read)"
            if self.unusable
            else ""
        )
        return f"{passed} passed, {failed} failed{missing}"

    def exit_code(self, strict: bool = False) -> int:
        if self.unusable:
            return 2  # a file the run needs is missing: usage, whatever the others did
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
