"""Running every scenario under some paths: the engine of `gmtool rules test`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gmtool.errors import GmtoolError
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
            failures, rules = (f"gmtool could not run this scenario (internal error: "
                               f"{type(error).__name__}: {error}); please report it",), ()
        results.append(ScenarioResult(path, failures, rules))
    return results
