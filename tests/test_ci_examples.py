"""What a CI author copies (issue 23, item 15): the pre-commit hooks gmtool provides (one
for `rules validate`, one for `rules test`), the GitHub Actions example that runs both,
and the annotations `rules test --format github` writes: each at the line to fix.

The hooks and the workflow are run as written, with the installed `gmtool`, in a copy of
a rule repository (this repository's rules/ folder).
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import Gmtool
from helpers import clean_env, gmtool_command

ROOT = Path(__file__).resolve().parent.parent
HOOKS = ROOT / ".pre-commit-hooks.yaml"
PRE_COMMIT_EXAMPLE = ROOT / "examples" / "pre-commit-config.yaml"
WORKFLOW = ROOT / "examples" / "github-actions" / "validate-profiles.yml"


def hooks() -> dict[str, dict[str, str]]:
    """The hooks of .pre-commit-hooks.yaml by id (a list of flat mappings: read by hand,
    as the file is written, without a YAML library)."""
    found: dict[str, dict[str, str]] = {}
    current: dict[str, str] | None = None
    for line in HOOKS.read_text(encoding="utf-8").splitlines():
        if line.startswith("#") or not line.strip():
            continue
        match = re.match(r"^(- |  )(\w+): (.*)$", line)
        assert match, f"{HOOKS.name}: a line this reader does not know: {line!r}"
        if match.group(1) == "- ":
            current = {}
        assert current is not None
        current[match.group(2)] = match.group(3)
        if match.group(2) == "id":
            found[match.group(3)] = current
    return found


def _args(hook: dict[str, str]) -> list[str]:
    text = hook.get("args", "[]").strip()
    assert text.startswith("[") and text.endswith("]"), text
    return [arg.strip() for arg in text[1:-1].split(",") if arg.strip()]


@pytest.fixture
def rule_repo(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "rules", tmp_path / "rules")
    return tmp_path


def _run_in(repo: Path, args: list[str]) -> subprocess.CompletedProcess:
    """The installed gmtool with `args`, run from the rule repository's root."""
    run = subprocess.run(
        [*gmtool_command(), *args], cwd=repo, env=clean_env(), capture_output=True, text=True
    )
    assert "Traceback" not in run.stdout + run.stderr, run.stderr
    return run


def _failing_scenario(repo: Path) -> Path:
    scenario = repo / "rules" / "scenarios" / "stud5" / "zz-wrong.toml"
    scenario.write_text(
        'profile = "../../qq-showhand.toml"\ntier = "junior"\n'
        'players = [{ name = "ann", cards = "AS KS QS JS TS" },\n'
        '  { name = "bob", cards = "AH AD 8C 9C TC" }]\n'
        'actions = ["bob check", "ann check"]\n\n[expect]\nstreet = 4\n',
        encoding="utf-8",
    )
    return scenario


def test_there_is_a_pre_commit_hook_for_rules_test(rule_repo: Path) -> None:
    """The hook plays every scenario under its args when any .toml changes; a scenario
    with an unmet expectation refuses the commit (exit 1)."""
    hook = hooks()["gmtool-test"]
    assert hook["entry"] == "gmtool rules test" and hook["language"] == "python"
    assert hook["pass_filenames"] == "false" and hook["files"] == r"\.toml$"
    command = shlex.split(hook["entry"])[1:] + _args(hook)
    passed = _run_in(rule_repo, command)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert re.search(r"^\d{3,} passed, 0 failed$", passed.stdout, re.M), passed.stdout
    _failing_scenario(rule_repo)
    failed = _run_in(rule_repo, command)
    assert failed.returncode == 1 and "1 failed" in failed.stdout, failed.stdout


def test_the_pre_commit_example_uses_both_hooks() -> None:
    text = PRE_COMMIT_EXAMPLE.read_text(encoding="utf-8")
    used = re.findall(r"^\s+- id: (\S+)$", text, re.M)
    assert used == ["gmtool-validate", "gmtool-test"]
    assert set(used) <= set(hooks())


def _workflow_runs() -> list[str]:
    """The `run:` commands of the workflow's steps that are not commented out."""
    return re.findall(r"^\s+run: (.+)$", WORKFLOW.read_text(encoding="utf-8"), re.M)


def test_the_actions_example_runs_rules_test(rule_repo: Path) -> None:
    """The example's scenario step is a step (not a comment saying it is not available),
    and it passes on the shipped rules and fails, annotated, on an unmet expectation."""
    text = WORKFLOW.read_text(encoding="utf-8")
    assert "not available" not in text and "Once `gmtool rules test`" not in text
    (step,) = [run for run in _workflow_runs() if run.startswith("gmtool rules test")]
    args = shlex.split(step)[1:]
    assert _run_in(rule_repo, args).returncode == 0
    scenario = _failing_scenario(rule_repo)
    failed = _run_in(rule_repo, args)
    assert failed.returncode == 1
    assert (
        f"::error file={scenario.relative_to(rule_repo)},line=8,col=1,title=scenario::"
        "street: expected 4, got 3"
    ) in failed.stdout, failed.stdout


def test_rules_test_annotates_each_failure_at_its_line(gm: Gmtool, tmp_path: Path) -> None:
    """An unmet expectation at its `[expect]` key; an action refused when no error was
    expected at that action; both in GitHub annotations and SARIF regions."""
    scenario = tmp_path / "wrong.toml"
    scenario.write_text(
        f'profile = "{ROOT / "rules" / "qq-showhand.toml"}"\ntier = "junior"\n'
        'players = [{ name = "ann", cards = "AS KS QS JS TS" },\n'
        '  { name = "bob", cards = "AH AD 8C 9C TC" }]\n'
        "actions = [\n"
        '  "ann check",\n'
        '  "bob check",\n'
        "]\n\n[expect]\n"
        "pot = 7\n"
        "  street = 4\n",
        encoding="utf-8",
    )
    github = gm("rules", "test", scenario, "--format", "github", expect=1).stdout
    places = re.findall(
        r"^::error file=[^,]+,line=(\d+),col=(\d+),title=scenario::(\S+)", github, re.M
    )
    assert places == [("6", "3", "'ann"), ("11", "1", "pot:"), ("12", "3", "street:")], github
    sarif = gm.json("rules", "test", scenario, "--format", "sarif", expect=1)
    regions = [
        result["locations"][0]["physicalLocation"]["region"]
        for result in sarif["runs"][0]["results"]
    ]
    assert [(r["startLine"], r["startColumn"]) for r in regions] == [(6, 3), (11, 1), (12, 3)]


def test_github_strict_annotates_warnings_as_errors_when_only_warnings_fail(
    gm: Gmtool, tmp_path: Path
) -> None:
    """Item 10: with --strict a warning fails the job, so GitHub shows it as an error."""
    profile = tmp_path / "qq.toml"
    shutil.copy(ROOT / "rules" / "qq-showhand.toml", profile)
    gm("rules", "set", profile, "tiers.junior.street_caps", "[200, 600, 1000, 1000]")
    loose = gm("rules", "validate", profile, "--format", "github").stdout
    strict = gm("rules", "validate", profile, "--format", "github", "--strict", expect=1).stdout
    assert loose.startswith(f"::warning file={profile},line=63,col=1,title=seed-ratio::")
    assert strict.startswith(f"::error file={profile},line=63,col=1,title=seed-ratio::")
    assert strict.splitlines()[-1].endswith(": invalid")
