"""`gmtool rules validate` as a user and a CI job see it (docs/architecture.md, "The
command line's contract").

Exit codes: 0 = fine, 1 = a finding, 2 = usage or environment error; no Python traceback
ever reaches a user. Most cases run in-process through typer's CliRunner; a few run the
installed console script in a real subprocess, all started at once to stay fast.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gmtool.cli import app
from gmtool.rules.findings import WARNING_CODES

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "rules"
INVALID = ROOT / "tests" / "data" / "profiles" / "invalid"
ISSUE_KEYS = {"file", "line", "column", "path", "code", "message"}
ANNOTATION = re.compile(
    r"^::(error|warning) file=([^,]+),line=(\d+),col=(\d+),title=([a-z-]+)::(.*)$"
)
SUMMARY = re.compile(r"^\d+ profile\(s\) checked: \d+ error\(s\), \d+ warning\(s\): (ok|invalid)$")

runner = CliRunner()


class Run:
    """The outcome of one command: exit code, stdout and stderr."""

    def __init__(self, code: int, out: str, err: str) -> None:
        self.code, self.out, self.err = code, out, err
        assert "Traceback" not in out + err, out + err


def gmtool(*args: str) -> Run:
    result = runner.invoke(app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    return Run(result.exit_code, result.stdout, result.stderr)


def validate(*args: str) -> Run:
    return gmtool("rules", "validate", *args)


# -- exit codes --------------------------------------------------------------------------


def test_clean_profiles_exit_0() -> None:
    run = validate(str(RULES))
    assert (run.code, run.out, run.err) == (
        0,
        "5 profile(s) checked: 0 error(s), 0 warning(s): ok\n",
        "",
    )


def test_findings_exit_1() -> None:
    run = validate(str(INVALID / "min-holding.toml"))
    assert run.code == 1
    assert run.out.splitlines()[-1] == "1 profile(s) checked: 1 error(s), 0 warning(s): invalid"


def test_warnings_alone_exit_0_and_1_with_strict() -> None:
    assert validate(str(INVALID / "seed-ratio.toml")).code == 0
    assert validate(str(INVALID / "seed-ratio.toml"), "--strict").code == 1


def test_a_missing_path_exits_2_with_one_line_on_stderr(tmp_path: Path) -> None:
    """The paths that can be read are still checked (issue 23): their verdict on stdout."""
    run = validate(str(RULES), str(tmp_path / "absent.toml"))
    assert run.code == 2
    assert run.out.splitlines()[-1] == (
        "5 profile(s) checked: 0 error(s), 0 warning(s), 1 path(s) not checked: incomplete"
    )
    assert run.err == f"error: no such file or folder: {tmp_path / 'absent.toml'}\n"


def test_an_unknown_format_exits_2() -> None:
    run = validate(str(RULES), "--format", "xml")
    assert run.code == 2 and run.out == ""
    assert "'xml' is not one of 'text', 'json', 'github'" in run.err


@pytest.mark.parametrize(
    ("args", "why"),
    [
        (["--bogus", str(RULES)], "No such option: --bogus"),
        ([str(RULES), "--format"], "'--format' requires an argument"),
        ([], "Missing argument"),
    ],
    ids=["unknown-flag", "option-without-value", "no-path"],
)
def test_usage_errors_exit_2(args: list[str], why: str) -> None:
    run = validate(*args)
    assert run.code == 2 and run.out == ""
    assert why in run.err


def test_every_invalid_golden_exits_1_or_0_for_warnings_only() -> None:
    for path in sorted(INVALID.glob("*.toml")):
        expected = json.loads(path.with_name(f"{path.stem}.expected.json").read_text("utf-8"))
        warnings_only = all(row["code"] in WARNING_CODES for row in expected)
        assert validate(str(path)).code == (0 if warnings_only else 1), path.name


# -- --format json -------------------------------------------------------------------------


def test_json_is_exactly_files_errors_and_warnings() -> None:
    run = validate(str(INVALID / "caps-decrease-and-min-holding.toml"), "--format", "json")
    report = json.loads(run.out)
    file = str(INVALID / "caps-decrease-and-min-holding.toml")
    assert run.code == 1
    assert report == {
        "files": 1,
        "errors": [
            {
                "file": file,
                "line": 9,
                "column": 21,
                "path": "tiers.junior.street_caps[1]",
                "code": "caps-decrease",
                "message": "street-3 cap 100 is below the street-2 cap 200",
            },
            {
                "file": file,
                "line": 11,
                "column": 1,
                "path": "tiers.junior.min_holding",
                "code": "min-holding",
                "message": "min_holding 500 is below hand_cap 1000: a seated player could not "
                "cover the hand cap (RULES Q5)",
            },
        ],
        "warnings": [
            {
                "file": file,
                "line": 9,
                "column": 1,
                "path": "tiers.junior.street_caps",
                "code": "seed-ratio",
                "message": "street caps [200, 100, 1000, 1000] are not 1/5, 1/2, 1, 1 of "
                "hand_cap 1000 as in the seeds (RULES Q2)",
            },
        ],
    }


def test_json_issues_have_exactly_the_contract_fields() -> None:
    run = validate(str(INVALID), "--format", "json")
    report = json.loads(run.out)
    assert run.code == 1 and set(report) == {"files", "errors", "warnings"}
    assert report["files"] == len(list(INVALID.glob("*.toml")))
    issues = report["errors"] + report["warnings"]
    assert issues and all(set(issue) == ISSUE_KEYS for issue in issues)
    for issue in issues:
        assert isinstance(issue["line"], int) and isinstance(issue["column"], int)
        assert issue["line"] >= 1 and issue["column"] >= 1
        assert all(isinstance(issue[key], str) for key in ISSUE_KEYS - {"line", "column"})
    assert {i["code"] for i in report["warnings"]} == WARNING_CODES
    assert not {i["code"] for i in report["errors"]} & WARNING_CODES


def test_json_keeps_non_ascii_text_readable() -> None:
    run = validate(str(INVALID / "not-increasing-ladder.toml"), "--format", "json")
    assert json.loads(run.out)["errors"][0]["path"] == "ladder.titles[3].at"
    run = validate(str(INVALID / "not-utf8.toml"), "--format", "json")
    assert (
        json.loads(run.out)["errors"][0]["message"] == "not UTF-8 text: byte 0xcb cannot be decoded"
    )


# -- --format text -------------------------------------------------------------------------


def test_text_lists_file_line_column_severity_code_path_message_then_a_count() -> None:
    file = str(INVALID / "time-limit.toml")
    run = validate(file)
    assert run.code == 0
    assert run.out.splitlines() == [
        f"{file}:10:1: warning [time-limit] timeouts.action_s: 3 s is outside the usual "
        "5..120 s (RULES G1: 15 s in every seed)",
        f"{file}:12:1: warning [time-limit] timeouts.start_countdown_s: 121 s is outside the "
        "usual 5..120 s (RULES G1: 15 s in every seed)",
        f"{file}:13:1: warning [time-limit] timeouts.continue_s: 600 s is outside the usual "
        "5..120 s (RULES G1: 15 s in every seed)",
        "1 profile(s) checked: 0 error(s), 3 warning(s): ok",
    ]


def test_text_of_a_syntax_error_has_no_key_path() -> None:
    file = str(INVALID / "syntax-missing-bracket.toml")
    run = validate(file)
    assert run.code == 1
    assert (
        run.out.splitlines()[0]
        == f"{file}:6:7: error [toml-syntax] Expected ']' at the end of a table declaration"
    )


def test_text_keeps_one_finding_per_line_even_for_odd_keys() -> None:
    run = validate(str(INVALID / "unknown-key-quoted.toml"))
    lines = run.out.splitlines()
    assert len(lines) == 3 and SUMMARY.match(lines[-1])
    assert 'profile."ti\\ntle": unknown key' in lines[0]
    assert 'table."seats.max": unknown key' in lines[1]


# -- --format github -----------------------------------------------------------------------


def test_github_prints_one_annotation_per_finding_then_the_full_text_report() -> None:
    path = str(INVALID / "last-cap.toml")
    github = validate(path, "--format", "github")
    text = validate(path)
    report = json.loads(validate(path, "--format", "json").out)
    assert github.code == text.code == 1
    lines = github.out.splitlines()
    annotations, rest = lines[:5], lines[5:]
    assert "\n".join(rest) + "\n" == text.out
    findings = sorted(
        report["errors"] + report["warnings"], key=lambda i: (i["line"], i["column"], i["code"])
    )
    for line, issue in zip(annotations, findings, strict=True):
        match = ANNOTATION.match(line)
        assert match, line
        severity = "warning" if issue["code"] == "seed-ratio" else "error"
        assert match.groups() == (
            severity,
            path,
            str(issue["line"]),
            str(issue["column"]),
            issue["code"],
            f"{issue['path']}: {issue['message']}",
        )


def test_github_annotation_for_a_finding_without_a_path() -> None:
    path = str(INVALID / "syntax-duplicate-key.toml")
    lines = validate(path, "--format", "github").out.splitlines()
    assert lines[0] == (
        f"::error file={path},line=9,col=10,title=toml-syntax::"
        "duplicate key table.seats, first on line 7"
    )


def test_github_escapes_newlines_commas_and_colons(tmp_path: Path) -> None:
    folder = tmp_path / "odd, names: here"
    folder.mkdir()
    shutil.copy(INVALID / "min-holding.toml", folder / "two\nlines.toml")
    run = validate(str(folder), "--format", "github")
    annotation = run.out.splitlines()[0]
    escaped = (
        str(folder / "two\nlines.toml")
        .replace("%", "%25")
        .replace("\n", "%0A")
        .replace(":", "%3A")
        .replace(",", "%2C")
    )
    assert annotation == (
        f"::error file={escaped},line=19,col=1,title=min-holding::"
        "tiers.junior.min_holding: min_holding 999 is below hand_cap 1000: "
        "a seated player could not cover the hand cap (RULES Q5)"
    )


def test_github_format_of_clean_profiles_is_only_the_summary() -> None:
    run = validate(str(RULES), "--format", "github")
    assert (run.code, run.out) == (0, "5 profile(s) checked: 0 error(s), 0 warning(s): ok\n")


# -- several paths -----------------------------------------------------------------------


def test_several_paths_are_reported_together() -> None:
    run = validate(
        str(RULES / "qq-showhand.toml"),
        str(INVALID / "min-holding.toml"),
        str(INVALID / "seed-ratio.toml"),
        "--format",
        "json",
    )
    report = json.loads(run.out)
    assert run.code == 1 and report["files"] == 3
    assert [Path(i["file"]).name for i in report["errors"]] == ["min-holding.toml"]
    assert {Path(i["file"]).name for i in report["warnings"]} == {"seed-ratio.toml"}


def test_an_empty_folder_is_not_a_pass(tmp_path: Path) -> None:
    """Nothing to check is a usage error (a CI job pointed at the wrong folder must not
    go green), not "0 profile(s) checked: ok"."""
    run = validate(str(tmp_path))
    assert run.code == 2 and "no .toml file" in run.err, run


# -- the real console script -------------------------------------------------------------


def _command() -> list[str]:
    script = Path(sys.executable).with_name("gmtool")
    return [str(script)] if script.exists() else [sys.executable, "-m", "gmtool"]


SUBPROCESS_CASES = {
    "clean": (["rules", "validate", str(RULES)], 0),
    "findings": (["rules", "validate", str(INVALID / "caps-decrease.toml")], 1),
    "non-utf8": (["rules", "validate", str(INVALID / "not-utf8.toml"), "--format", "github"], 1),
    "strict": (["rules", "validate", str(INVALID / "time-limit.toml"), "--strict"], 1),
    "missing-path": (["rules", "validate", str(ROOT / "no-such-profile.toml")], 2),
    "unknown-format": (["rules", "validate", str(RULES), "--format", "yaml"], 2),
    "unknown-flag": (["rules", "validate", str(RULES), "--frobnicate"], 2),
    "no-path": (["rules", "validate"], 2),
}


@pytest.fixture(scope="module")
def console_script() -> dict[str, subprocess.CompletedProcess]:
    """Run every case of SUBPROCESS_CASES at once (each start costs a Python start-up)."""
    env = {k: v for k, v in os.environ.items() if k != "GMTOOL_DEBUG"}
    started = {
        name: subprocess.Popen(
            _command() + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=ROOT
        )
        for name, (args, _) in SUBPROCESS_CASES.items()
    }
    done = {}
    for name, process in started.items():
        out, err = process.communicate(timeout=60)
        done[name] = subprocess.CompletedProcess(
            process.args, process.returncode, out.decode("utf-8"), err.decode("utf-8")
        )
    return done


@pytest.mark.parametrize("case", SUBPROCESS_CASES)
def test_console_script_exit_codes(console_script: dict, case: str) -> None:
    result = console_script[case]
    assert result.returncode == SUBPROCESS_CASES[case][1], (result.stdout, result.stderr)
    assert "Traceback" not in result.stdout + result.stderr
    if result.returncode == 2:
        assert result.stdout == "" or "Usage:" in result.stdout
        assert result.stderr.strip(), "a usage error says why on stderr"
    else:
        assert SUMMARY.match(result.stdout.splitlines()[-1]), result.stdout


def test_console_script_github_output_for_non_utf8(console_script: dict) -> None:
    lines = console_script["non-utf8"].stdout.splitlines()
    assert ANNOTATION.match(lines[0])
    assert lines[0].endswith(
        "line=4,col=12,title=toml-syntax::not UTF-8 text: byte 0xcb cannot be decoded"
    )
