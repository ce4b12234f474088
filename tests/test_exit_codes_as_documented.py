"""Exit codes as the README documents them (issue 23, item 10): 1 is a finding, 2 usage or
environment. `verify` of a file that is not JSON, and `rules test` of a scenario whose
profile is missing, are usage errors; `rules validate` reports every finding of the files
it can read and still exits 2 for a path it cannot; a folder with no profile in it is not
"ok"."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest
from conftest import RULES, Gmtool

from gmtool.evidence import witness

INVALID = Path(__file__).resolve().parent / "data" / "profiles" / "invalid"

SCENARIO = """
title = "ann bets, bob folds"
profile = "{profile}"
tier = "junior"
players = [
  {{ name = "ann", coins = 5000, cards = "8S AS AH 9D TD" }},
  {{ name = "bob", coins = 5000, cards = "9S KS 8H JD QD" }},
]
actions = ["ann bet 100", "bob fold"]
{extra}
[expect]
winner = "ann"
"""


def _scenario(folder: Path, name: str, profile: str, extra: str = "") -> Path:
    path = folder / name
    path.write_text(SCENARIO.format(profile=profile, extra=extra), encoding="utf-8")
    return path


# -- verify ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def verifier_key(tmp_path_factory, gm: Gmtool) -> Path:
    db = tmp_path_factory.mktemp("key") / "key.db"
    gm("db", "init", "--db", db)
    gm("checkpoint", "export", "--db", db)
    return witness.public_key_path(db)


@pytest.mark.parametrize(
    "content",
    [
        b"# Hand 12\n\nA markdown report (`hands export --format md`).\n",
        random.Random(10).randbytes(3000),
        b'["a list, not a report"]\n',
        b"",
    ],
    ids=["markdown", "binary", "json-list", "empty"],
)
def test_verify_of_a_file_that_is_not_a_json_report_is_a_usage_error(
    gm: Gmtool, tmp_path: Path, verifier_key: Path, content: bytes
) -> None:
    report = tmp_path / "report.json"
    report.write_bytes(content)
    for key in (("--key", verifier_key), ()):
        run = gm("verify", report, *key, expect=2)
        assert run.stdout == "" and str(report) in run.stderr, run.stderr


def test_verify_of_a_report_without_its_proof_is_still_a_finding(
    gm: Gmtool, tmp_path: Path, verifier_key: Path
) -> None:
    """A JSON report whose proof is gone is a report that does not prove itself (exit 1)."""
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"hand": 12}), encoding="utf-8")
    run = gm("verify", report, "--key", verifier_key, expect=1)
    assert "carries no proof" in run.stdout, run.stdout


# -- rules test ------------------------------------------------------------------------------


def test_rules_test_of_a_scenario_whose_profile_is_missing_exits_2(
    gm: Gmtool, tmp_path: Path
) -> None:
    shutil.copy(RULES / "qq-showhand.toml", tmp_path)
    good = _scenario(tmp_path, "good.toml", "qq-showhand.toml")
    lost = _scenario(tmp_path, "lost.toml", "nowhere.toml")
    run = gm("rules", "test", tmp_path, expect=2)
    assert f"PASS {good}" in run.stdout and f"FAIL {lost}" in run.stdout, run.stdout
    assert "no such profile file" in run.stdout, run.stdout
    assert run.stdout.splitlines()[-1] == (
        "1 passed, 1 failed (1 could not run: a profile they name cannot be read)"
    )
    report = gm.json("rules", "test", tmp_path, "--json", expect=2)
    assert (report["scenarios"], report["failed"]) == (2, 1), report


def test_rules_test_whose_set_names_a_missing_profile_exits_2(gm: Gmtool, tmp_path: Path) -> None:
    lost = _scenario(tmp_path, "lost.toml", "nowhere.toml", "set = { hand_cap = 1 }")
    run = gm("rules", "test", lost, expect=2)
    assert f"FAIL {lost}" in run.stdout, run.stdout


def test_rules_test_of_an_unmet_expectation_still_exits_1(gm: Gmtool, tmp_path: Path) -> None:
    shutil.copy(RULES / "qq-showhand.toml", tmp_path)
    path = _scenario(tmp_path, "bad.toml", "qq-showhand.toml").read_text(encoding="utf-8")
    (tmp_path / "bad.toml").write_text(path.replace('"ann"\n', '"bob"\n'), encoding="utf-8")
    gm("rules", "test", tmp_path / "bad.toml", expect=1)


# -- rules validate --------------------------------------------------------------------------


def test_validate_reports_the_files_it_can_read_and_exits_2_for_a_missing_one(
    gm: Gmtool, tmp_path: Path
) -> None:
    missing, bad = tmp_path / "missing.toml", INVALID / "min-holding.toml"
    run = gm("rules", "validate", missing, bad, expect=2)
    assert f"{bad}:" in run.stdout and "[min-holding]" in run.stdout, run.stdout
    assert run.stdout.splitlines()[-1] == (
        "1 profile(s) checked: 1 error(s), 0 warning(s), 1 path(s) not checked: invalid"
    )
    assert run.stderr == f"error: no such file or folder: {missing}\n"
    report = gm.json("rules", "validate", bad, missing, "--format", "json", expect=2)
    assert report["files"] == 1 and [e["code"] for e in report["errors"]] == ["min-holding"]
    assert report["unusable"] == [f"no such file or folder: {missing}"]


def test_a_folder_with_no_profile_in_it_is_not_ok(gm: Gmtool, tmp_path: Path) -> None:
    """Only scenarios: nothing was checked, so the run is not a pass (a CI job pointed at
    the scenario folder instead of the profiles must not go green)."""
    folder = tmp_path / "scenarios"
    folder.mkdir()
    _scenario(folder, "a.toml", "../qq-showhand.toml")
    run = gm("rules", "validate", folder, expect=2)
    assert run.stdout == ""
    assert run.stderr == (
        f"error: {folder}: no profile in this folder, only scenarios (`gmtool rules test` "
        "runs them): nothing to check\n"
    )
    run = gm("rules", "validate", folder, RULES / "qq-showhand.toml", expect=2)
    assert run.stdout.splitlines()[-1].endswith("1 path(s) not checked: incomplete"), run.stdout


def test_a_scenario_named_alone_is_still_skipped(gm: Gmtool, tmp_path: Path) -> None:
    """A pre-commit hook passes every changed .toml file: a scenario named on its own is
    left to `rules test`, and with a profile beside it the run passes."""
    scenario = _scenario(tmp_path, "a.toml", "qq-showhand.toml")
    run = gm("rules", "validate", scenario, RULES / "qq-showhand.toml")
    assert run.stdout.splitlines()[-1] == (
        "1 profile(s) checked (1 scenario file(s) skipped: `gmtool rules test` runs them): "
        "0 error(s), 0 warning(s): ok"
    )
