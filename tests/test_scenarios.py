"""Every scenario under rules/ passes, and together they cover the rules
(rules/scenarios/README.md).

A scenario is an executable rule test: a hand (or an owner-ante table) played from a
profile, fixed cards or a seed and actions, with an `[expect]` table. The parametrised
test runs each file found under rules/ through the sandbox, so a new file is a new test.
The coverage tests read the scenarios' top-level `rules = [...]` lists: every stud5 rule
(S8-S23, Q1-Q6, L1-L14) and G2 must be exercised by at least one scenario, and every
three-card rule (H1-H11) by the three-card scenarios.
"""

from __future__ import annotations

import re
import shutil
import tomllib
from pathlib import Path

import pytest

from gmtool.sandbox.expect import check
from gmtool.sandbox.run import play
from gmtool.sandbox.scenario import load_scenario, scenario_files
from gmtool.sandbox.suite import run_scenarios

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "rules"
SCENARIOS = scenario_files([str(RULES)])
STUD5_SCENARIOS = [p for p in SCENARIOS if p.parent.name in ("stud5", "lequ")]
# Rule ids docs/rules.md defines (its tables: rules and decisions).
KNOWN_IDS = set(
    re.findall(
        r"^\| ([SQLHG]\d{1,2}|D-\d{1,2}) \|",
        (RULES.parent / "docs" / "rules.md").read_text(encoding="utf-8"),
        flags=re.M,
    )
)


def _ids(paths: list[Path]) -> list[str]:
    return [str(p.relative_to(RULES)) for p in paths]


def _declared(paths: list[Path]) -> dict[str, list[str]]:
    """Rule id -> the scenario files that declare it in their `rules` list."""
    covered: dict[str, list[str]] = {}
    for path in paths:
        for rule in tomllib.loads(path.read_text(encoding="utf-8")).get("rules", []):
            covered.setdefault(rule, []).append(path.name)
    return covered


def _missing(wanted: list[str], paths: list[Path]) -> list[str]:
    covered = _declared(paths)
    return [rule for rule in wanted if rule not in covered]


# -- every scenario passes ---------------------------------------------------------------


def test_scenarios_are_found() -> None:
    assert len(STUD5_SCENARIOS) >= 60, _ids(SCENARIOS)


@pytest.mark.parametrize("path", SCENARIOS, ids=_ids(SCENARIOS))
def test_scenario_passes(path: Path) -> None:
    """The engine does what the scenario's [expect] table says, and nothing is refused
    that the scenario does not expect to be refused."""
    failures = check(play(load_scenario(path)))
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("path", SCENARIOS, ids=_ids(SCENARIOS))
def test_scenario_declares_title_and_known_rule_ids(path: Path) -> None:
    scenario = load_scenario(path)
    assert scenario.title.strip(), "give the scenario a title in plain words"
    assert scenario.rules, "declare the rule ids the scenario covers: rules = [...]"
    unknown = [rule for rule in scenario.rules if rule not in KNOWN_IDS]
    assert not unknown, f"not a rule id of docs/rules.md: {unknown}"


@pytest.mark.parametrize("path", STUD5_SCENARIOS, ids=_ids(STUD5_SCENARIOS))
def test_scenario_replays_to_the_same_events(path: Path) -> None:
    """The engine's contract (docs/architecture.md): the same inputs give the same events,
    byte for byte."""
    first, second = (play(load_scenario(path)) for _ in range(2))
    assert [e.as_json() for e in first.events] == [e.as_json() for e in second.events]


def test_the_suite_runs_every_scenario_and_all_pass() -> None:
    results = run_scenarios([str(RULES)])
    assert [r.path for r in results] == SCENARIOS
    assert [str(r.path) for r in results if not r.passed] == []


# -- coverage of the rules ------------------------------------------------------------------


STUD5_RULES = (
    [f"S{n}" for n in range(8, 24)]
    + [f"Q{n}" for n in range(1, 7)]
    + [f"L{n}" for n in range(1, 15)]
    + ["G2"]
)
THREE_CARD_RULES = [f"H{n}" for n in range(1, 12)]


def test_stud5_rules_are_covered() -> None:
    """Every rule of RULES sections 2-4 (S8-S23, Q1-Q6, L1-L14) and G2 has a scenario."""
    missing = _missing(STUD5_RULES, SCENARIOS)
    assert not missing, f"no scenario declares {missing}"


def test_three_card_rules_are_covered() -> None:
    """Every rule of RULES section 5 (H1-H11) has a three-card scenario."""
    folder = RULES / "scenarios" / "three-card"
    missing = _missing(THREE_CARD_RULES, [p for p in SCENARIOS if folder in p.parents])
    assert not missing, f"no three-card scenario declares {missing}"


@pytest.mark.parametrize("policy, folder", [("forfeit_to_banker", "stud5"), ("fold", "lequ")])
def test_s19_escape_is_exercised_under_both_policies(policy: str, folder: str) -> None:
    paths = [p for p in STUD5_SCENARIOS if p.parent.name == folder]
    assert "S19" in _declared(paths), f"no {policy} escape scenario in {folder}/"


def test_l11_seed_example_is_a_scenario() -> None:
    """The seed's own L11 example (A 400, B 350, C 800) is played in both of its forms."""
    examples = [p for p in STUD5_SCENARIOS if p.name.startswith("l11-seed-example")]
    assert len(examples) == 2
    for path in examples:
        players = {p.name: p.coins for p in load_scenario(path).players}
        assert players == {"A": 400, "B": 350, "C": 800}


# -- the checker itself: a wrong expectation is reported ------------------------------------


def _variant(tmp_path: Path, source: str, old: str, new: str) -> Path:
    """A copy of a shipped scenario (next to a copy of its profile) with one line changed."""
    original = RULES / "scenarios" / source
    folder = tmp_path / "scenarios" / original.parent.name
    folder.mkdir(parents=True)
    for profile in RULES.glob("*.toml"):
        shutil.copy(profile, tmp_path / profile.name)
    text = original.read_text(encoding="utf-8")
    assert old in text
    path = folder / original.name
    path.write_text(text.replace(old, new), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "source, old, new, key",
    [
        (
            "stud5/s19-escape-non-banker-worked-example.toml",
            "settlement = { ann = 700, bob = -700, carl = 0 }",
            "settlement = { ann = 600, bob = -600, carl = 0 }",
            "settlement",
        ),
        ("stud5/s23-title-ladder-after-hand.toml", 'bob = "合同工"', 'bob = "正式工"', "titles"),
        (
            "stud5/s10-deal-order-from-banker-skips-folded.toml",
            '["dave", "ann", "carl"]',
            '["dave", "ann", "bob", "carl"]',
            "deal_order",
        ),
        (
            "stud5/s15-allin-amount-offered.toml",
            "allin = [4000, 4000]",
            "allin = [4500, 4500]",
            "legal_amounts",
        ),
        (
            "lequ/l11-seed-example-show-hand-350.toml",
            "coins = { A = 50,",
            "coins = { A = 51,",
            "coins",
        ),
    ],
)
def test_an_unmet_expectation_is_reported(tmp_path, source, old, new, key) -> None:
    failures = check(play(load_scenario(_variant(tmp_path, source, old, new))))
    assert [f for f in failures if f.startswith(f"{key}: expected")], failures


def test_an_expected_error_that_does_not_happen_is_reported(tmp_path) -> None:
    path = _variant(
        tmp_path, "stud5/q4-bet-above-street-cap.toml", '"ann bet 200"', '"ann bet 100"'
    )
    failures = check(play(load_scenario(path)))
    assert failures == [
        "error: expected an action refused under RULES Q4, but every action was accepted"
    ]


def test_a_refusal_under_another_rule_is_reported(tmp_path) -> None:
    path = _variant(
        tmp_path, "stud5/s15-allin-refused-on-street-3.toml", 'error = "S15"', 'error = "Q4"'
    )
    failures = check(play(load_scenario(path)))
    assert len(failures) == 1 and failures[0].startswith("error: expected RULES Q4, got RULES S15")
