"""One finding model, one set of reporters: `rules validate`, `rules test`, `audit`,
`checkpoint verify` and `verify` all print text, JSON, GitHub workflow annotations and
SARIF 2.1.0 (for code-scanning UIs) from the same findings (issue 22)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

RULES = Path(__file__).resolve().parent.parent / "rules"
INVALID = Path(__file__).parent / "data" / "profiles" / "invalid"


def _check_sarif(log: dict, tool: str) -> list[dict]:
    """The parts of SARIF 2.1.0 a code-scanning UI needs, with their types; the results."""
    assert log["version"] == "2.1.0" and log["$schema"].endswith("sarif-2.1.0.json")
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "gmtool" and driver["fullName"] == tool
    rule_ids = [rule["id"] for rule in driver["rules"]]
    assert len(set(rule_ids)) == len(rule_ids)
    for rule in driver["rules"]:
        assert isinstance(rule["shortDescription"]["text"], str)
    for result in run["results"]:
        assert result["level"] in ("error", "warning", "note")
        assert rule_ids[result["ruleIndex"]] == result["ruleId"]
        assert isinstance(result["message"]["text"], str) and result["message"]["text"]
        for location in result["locations"]:
            physical = location.get("physicalLocation")
            if physical is not None:
                assert isinstance(physical["artifactLocation"]["uri"], str)
                region = physical.get("region")
                if region is not None:
                    assert region["startLine"] >= 1 and region["startColumn"] >= 1
    return run["results"]


def test_validate_sarif_has_a_result_per_finding_with_its_place(gm) -> None:
    profile = INVALID / "caps-decrease.toml"
    findings = gm.json("rules", "validate", profile, "--format", "json", expect=1)
    log = json.loads(gm("rules", "validate", profile, "--format", "sarif", expect=1).stdout)
    results = _check_sarif(log, "gmtool rules validate")
    expected = findings["errors"] + findings["warnings"]
    assert sorted(
        (r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in results
    ) == sorted((f["code"], f["line"]) for f in expected)
    assert {r["level"] for r in results} == {"error", "warning"}


def test_github_strict_annotates_the_warnings_that_fail_as_errors(gm) -> None:
    profile = INVALID / "caps-decrease.toml"
    loose = gm("rules", "validate", profile, "--format", "github", expect=1).stdout
    strict = gm("rules", "validate", profile, "--format", "github", "--strict", expect=1).stdout
    assert "::warning file=" in loose and "title=seed-ratio" in loose
    loose_lines = [line for line in loose.splitlines() if line.startswith("::")]
    strict_lines = [line for line in strict.splitlines() if line.startswith("::")]
    assert not [line for line in strict_lines if line.startswith("::warning")]
    assert len(strict_lines) == len(loose_lines) == 2


def test_rules_test_reports_a_failed_expectation_as_an_annotation_and_sarif(gm, tmp_path) -> None:
    scenario = tmp_path / "wrong.toml"
    scenario.write_text(
        f'profile = "{RULES / "qq-showhand.toml"}"\ntier = "junior"\n'
        'players = [{ name = "ann", cards = "AS KS QS JS TS" },\n'
        '  { name = "bob", cards = "AH AD 8C 9C TC" }]\n'
        'actions = ["ann check", "bob check"]\n\n[expect]\nstreet = 4\n',
        encoding="utf-8",
    )
    github = gm("rules", "test", scenario, "--format", "github", expect=1).stdout
    # at the line of the unmet expectation (`street = 4`, line 8), not at the file's top
    assert f"::error file={scenario},line=8,col=1,title=scenario::street: expected 4" in github
    assert "FAIL" in github and "0 passed, 1 failed" in github
    results = _check_sarif(
        json.loads(gm("rules", "test", scenario, "--format", "sarif", expect=1).stdout),
        "gmtool rules test",
    )
    assert results and {r["ruleId"] for r in results} == {"scenario"}


def _tampered_copy(host_db: Path, folder: Path) -> Path:
    for path in host_db.parent.iterdir():
        if path.name.startswith(host_db.name) and not path.name.endswith(".lock"):
            (shutil.copytree if path.is_dir() else shutil.copyfile)(path, folder / path.name)
    db = folder / host_db.name
    with sqlite3.connect(db) as conn:
        conn.execute("DROP TRIGGER ledger_no_update")
        conn.execute(
            "UPDATE ledger SET delta = delta + 1 WHERE id = (SELECT MAX(id) FROM "
            "ledger WHERE hand_id IS NOT NULL)"
        )
    return db


def test_audit_speaks_every_format_from_the_same_findings(
    host_db: Path, tmp_path: Path, gm
) -> None:
    db = _tampered_copy(host_db, tmp_path)
    as_json = gm.json("audit", "--db", db, "--json", expect=1)
    assert gm.json("audit", "--db", db, "--format", "json", expect=1) == as_json
    problems = as_json["problems"]
    results = _check_sarif(
        json.loads(gm("audit", "--db", db, "--format", "sarif", expect=1).stdout), "gmtool audit"
    )
    assert [r["ruleId"] for r in results] == [p["kind"] for p in problems]
    hands = {f"hand/{p['hand']}" for p in problems if "hand" in p}
    named = {
        loc["fullyQualifiedName"] for r in results for loc in r["locations"][0]["logicalLocations"]
    }
    assert hands and hands <= named
    assert all(
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == str(db) for r in results
    )
    github = gm("audit", "--db", db, "--format", "github", expect=1).stdout.splitlines()
    annotations = [line for line in github if line.startswith("::error title=")]
    assert len(annotations) == len(problems)
    text = gm("audit", "--db", db, expect=1).stdout.splitlines()
    assert text[-1].startswith(
        f"{as_json['hands_checked']} hand(s) checked: {len(problems)} problem(s)"
    )


def _copy(host_db: Path, folder: Path) -> Path:
    folder.mkdir()
    for path in host_db.parent.iterdir():
        if path.name.startswith(host_db.name) and not path.name.endswith(".lock"):
            (shutil.copytree if path.is_dir() else shutil.copyfile)(path, folder / path.name)
    return folder / host_db.name


@pytest.mark.parametrize("output_format", ["sarif", "github", "json"])
def test_checkpoint_verify_and_verify_speak_the_formats(
    host_db: Path, tmp_path: Path, gm, output_format: str
) -> None:
    db = _copy(host_db, tmp_path / "clean")
    newest = sorted(Path(f"{db}.witness").iterdir())[-1]
    run = gm("checkpoint", "verify", newest, "--db", db, "--format", output_format)
    if output_format == "sarif":
        assert _check_sarif(json.loads(run.stdout), "gmtool checkpoint verify") == []
    elif output_format == "json":
        assert json.loads(run.stdout)["problems"] == []
    hand = (
        sqlite3.connect(db)
        .execute("SELECT MIN(id) FROM hands WHERE outcome = 'settled'")
        .fetchone()[0]
    )
    report = tmp_path / "hand.json"
    report.write_text(
        gm("hands", "export", str(hand), "--format", "json", "--db", db).stdout, encoding="utf-8"
    )
    edited = tmp_path / "edited.json"
    edited.write_text(
        report.read_text(encoding="utf-8").replace('"delta": ', '"delta": 1', 1), encoding="utf-8"
    )
    key = f"{db}.checkpoint.pub"
    gm("verify", report, "--key", key, "--format", output_format)
    run = gm("verify", edited, "--key", key, "--format", output_format, expect=1)
    if output_format == "sarif":
        results = _check_sarif(json.loads(run.stdout), "gmtool verify")
        assert results and all(
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == str(edited)
            for r in results
        )
    elif output_format == "json":
        assert json.loads(run.stdout)["problems"]
    else:
        assert run.stdout.startswith(f"::error file={edited}")


@pytest.mark.parametrize(
    "args",
    [
        ["rules", "validate", str(RULES)],
        ["verify", str(RULES / "qq-showhand.toml")],
    ],
)
def test_json_is_accepted_wherever_format_json_is(gm, args: list[str]) -> None:
    """`--help` said "json (as --json)" where --json was refused (outside probe of issue 23)."""
    run = gm(*args, "--json", expect=None)
    assert "No such option" not in run.stderr, run.stderr


def test_json_with_another_format_is_a_usage_error(gm) -> None:
    run = gm("rules", "validate", str(RULES), "--json", "--format", "github", expect=2)
    assert "--json and --format github ask for two formats" in run.stderr, run.stderr
    gm("rules", "validate", str(RULES), "--json", "--format", "json")
