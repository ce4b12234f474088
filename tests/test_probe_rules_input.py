"""Bad profile and scenario input found by an outside probe: each gets one clear message
and exit 1 (a finding) or 2 (usage), never a traceback, an internal error, a hang or a
half-written file (docs/architecture.md; docs/profile-reference.md#bounds).

Every command runs the real console script in a subprocess with a timeout, so a command
that hangs on a named pipe fails the test instead of hanging the run.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from conftest import RULES, Gmtool

TIMEOUT_S = 60
QQ = RULES / "qq-showhand.toml"
LEQU = RULES / "lequ-showhand.toml"

SCENARIO = """
title = "ann bets, bob folds"
profile = "qq-showhand.toml"
tier = "junior"
players = [
  { name = "ann", coins = 5000, cards = "8S AS AH 9D TD" },
  { name = "bob", coins = 5000, cards = "9S KS 8H JD QD" },
]
actions = ["ann bet 100", "bob fold"]

[expect]
winner = "ann"
"""

OWNER_TABLE = """
title = "the owner does not set the ante in time"
profile = "lequ-showhand.toml"
seed = "probe"
players = [{ name = "A", coins = 2000 }, { name = "B", coins = 2000 }]
actions = ["wait 5"]
"""


def _run(gm: Gmtool, *args: str | Path, expect: int | tuple[int, ...]) -> str:
    """Stdout and stderr of one command, asserting its exit code and a clean message."""
    run = gm(*args, expect=None, timeout=TIMEOUT_S)
    out = run.stdout + run.stderr
    codes = expect if isinstance(expect, tuple) else (expect,)
    assert run.returncode in codes, (args, run.returncode, out)
    assert "internal error" not in out, out
    return out


def _folder(tmp_path: Path, **files: str) -> Path:
    """A folder with the shipped qq and lequ profiles and the given scenario files."""
    folder = tmp_path / "suite"
    folder.mkdir()
    shutil.copy(QQ, folder)
    shutil.copy(LEQU, folder)
    for name, text in files.items():
        (folder / f"{name}.toml").write_text(text, encoding="utf-8")
    return folder


# -- 1. a named pipe is never opened -----------------------------------------------------


def test_a_named_pipe_in_a_folder_is_a_finding_of_its_own(gm: Gmtool, tmp_path: Path) -> None:
    """`rules validate DIR`: the pipe gets an `unreadable` finding, the profile its result."""
    folder = _folder(tmp_path)
    os.mkfifo(folder / "pipe.toml")
    report = gm.json("rules", "validate", folder, "--format", "json", expect=1)
    assert report["files"] == 3, report
    pipe = [f for f in report["errors"] if Path(f["file"]).name == "pipe.toml"]
    assert [f["code"] for f in pipe] == ["unreadable"], report
    assert "not a regular file" in pipe[0]["message"], pipe
    assert all(Path(f["file"]).name == "pipe.toml" for f in report["errors"]), report


def test_a_named_pipe_in_a_scenario_folder_fails_alone(gm: Gmtool, tmp_path: Path) -> None:
    """`rules test DIR`: the pipe is a failure; the scenario beside it still passes."""
    folder = _folder(tmp_path, good=SCENARIO)
    os.mkfifo(folder / "pipe.toml")
    out = _run(gm, "rules", "test", folder, expect=1)
    assert f"PASS {folder / 'good.toml'}" in out, out
    assert f"FAIL {folder / 'pipe.toml'}" in out, out
    assert "not a regular file" in out and out.rstrip().endswith("1 passed, 1 failed"), out


@pytest.mark.parametrize(
    "command",
    [
        ("rules", "validate"),
        ("rules", "test"),
        ("hands", "play"),
        ("rules", "show"),
        ("rules", "compile"),
        ("rules", "set", "{pipe}", "timeouts.action_s", "20"),
        ("hands", "compare", "AS KS QS JS TS", "AD KD QD JD 9D", "--profile"),
    ],
    ids=lambda command: "-".join(command[:2]),
)
def test_a_named_pipe_named_directly_is_refused_saying_what_it_is(
    gm: Gmtool, tmp_path: Path, command: tuple[str, ...]
) -> None:
    pipe = tmp_path / "p.toml"
    os.mkfifo(pipe)
    args = [part.replace("{pipe}", str(pipe)) for part in command]
    if "{pipe}" not in command:
        args.append(str(pipe))
    out = _run(gm, *args, expect=2)
    assert f"{pipe}: not a regular file (a named pipe)" in out, out
    assert "no such" not in out, out


# -- 2. nesting too deep to parse is a profile or scenario error -------------------------


def _deep(tmp_path: Path, levels: int = 500) -> Path:
    path = tmp_path / "d.toml"
    path.write_text("a = " + "[" * levels + "]" * levels + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "command",
    [
        ("rules", "show", "{deep}"),
        ("rules", "compile", "{deep}"),
        ("rules", "odds", "{deep}"),
        ("rules", "diff", str(QQ), "{deep}"),
        ("rules", "set", "{deep}", "a", "1"),
        ("deploy", "{deep}", "--db", "{db}", "--dry-run"),
        ("deploy", "{deep}", "--db", "{db}"),
        ("hands", "compare", "--profile", "{deep}", "AS", "KS"),
        ("hands", "play", "{deep}"),
        ("rules", "test", "{deep}"),
        ("rules", "validate", "{deep}"),
    ],
    ids=lambda command: "-".join(part for part in command[:2] if "{" not in part),
)
def test_nesting_too_deep_is_a_file_error_naming_the_file(
    gm: Gmtool, tmp_path: Path, command: tuple[str, ...]
) -> None:
    deep, db = _deep(tmp_path), tmp_path / "gm.db"
    if "{db}" in command:
        gm("db", "init", "--db", db, timeout=TIMEOUT_S)
    before = deep.read_bytes()
    out = _run(gm, *[p.format(deep=deep, db=db) for p in command], expect=(1, 2))
    assert "nested too deeply" in out and str(deep) in out, out
    assert deep.read_bytes() == before


def test_nesting_too_deep_in_a_scenario_folder_fails_alone(gm: Gmtool, tmp_path: Path) -> None:
    folder = _folder(tmp_path, good=SCENARIO)
    deep = _deep(folder)
    out = _run(gm, "rules", "test", folder, expect=1)
    assert f"PASS {folder / 'good.toml'}" in out and f"FAIL {deep}" in out, out
    assert "nested too deeply" in out and out.rstrip().endswith("1 passed, 1 failed"), out


def test_set_on_nesting_tomllib_reads_but_tomlkit_refuses(gm: Gmtool, tmp_path: Path) -> None:
    """150 levels: valid TOML for tomllib, beyond tomlkit's 100; the edit is refused."""
    profile = tmp_path / "q.toml"
    profile.write_text(
        QQ.read_text(encoding="utf-8") + "extra = " + "[" * 150 + "]" * 150 + "\n", encoding="utf-8"
    )
    before = profile.read_bytes()
    out = _run(gm, "rules", "set", profile, "timeouts.action_s", "20", expect=(1, 2))
    assert "nested" in out and str(profile) in out, out
    assert profile.read_bytes() == before


# -- 3. every number a scenario gives is bounded where it enters -------------------------


@pytest.mark.parametrize(
    "scenario, words",
    [
        (SCENARIO.replace("coins = 5000", "coins = 99999999999999999999999", 1), "coins"),
        (SCENARIO.replace("coins = 5000", "coins = 9223372036854775807", 1), "coins"),
        (SCENARIO.replace("coins = 5000", "coins = 1_000_000_000_001", 1), "coins"),
        (SCENARIO.replace('"ann bet 100"', '"ann bet 99999999999999999999"'), "ann bet"),
        (OWNER_TABLE.replace('"wait 5"', '"wait 99999999999999999999"'), "wait"),
        (OWNER_TABLE.replace('"wait 5"', '"wait 86401"'), "wait"),
        (OWNER_TABLE.replace('"wait 5"', '"A ante 99999999999999999999"'), "A ante"),
        (OWNER_TABLE.replace('seed = "probe"', 'seed = "probe"\nante = 10000000000000'), "ante"),
    ],
    ids=[
        "coins-beyond-64-bits",
        "coins-int64-max",
        "coins-above-bound",
        "bet-beyond-64-bits",
        "wait-beyond-64-bits",
        "wait-above-a-day",
        "ante-action-beyond-64-bits",
        "ante-above-bound",
    ],
)
def test_a_number_beyond_its_bound_is_a_scenario_error(
    gm: Gmtool, tmp_path: Path, scenario: str, words: str
) -> None:
    folder = _folder(tmp_path, bad=scenario)
    bad = folder / "bad.toml"
    out = _run(gm, "hands", "play", bad, expect=2)
    assert str(bad) in out and words in out and "at most" in out, out
    out = _run(gm, "rules", "test", bad, expect=1)
    assert f"FAIL {bad}" in out and "at most" in out, out


@pytest.mark.parametrize(
    "change, words",
    [
        (('seed = "probe"', "seed = 5"), "'seed' must be text"),
        (('seed = "probe"', 'seed = "probe"\ntier = 3'), "'tier' must be text"),
        (('seed = "probe"', 'seed = "probe"\nrules = "L2"'), "'rules' must be an array"),
    ],
    ids=["seed-a-number", "tier-a-number", "rules-a-string"],
)
def test_a_scenario_value_of_the_wrong_type_is_a_scenario_error(
    gm: Gmtool, tmp_path: Path, change: tuple[str, str], words: str
) -> None:
    folder = _folder(tmp_path, bad=OWNER_TABLE.replace(*change))
    bad = folder / "bad.toml"
    out = _run(gm, "hands", "play", bad, expect=2)
    assert words in out and "internal error" not in out, out


def test_numbers_within_their_bounds_still_play(gm: Gmtool, tmp_path: Path) -> None:
    folder = _folder(
        tmp_path,
        good=SCENARIO.replace("coins = 5000", "coins = 1000000000000"),
        table=OWNER_TABLE.replace('"wait 5"', '"wait 86400"'),
    )
    _run(gm, "rules", "test", folder, expect=0)


# -- 4. `rules set` takes exactly one TOML value -----------------------------------------


@pytest.mark.parametrize("value", ["20\nfoo = 1", "20\n[extra]\nkey = 1"])
def test_set_refuses_a_value_followed_by_more_toml(gm: Gmtool, tmp_path: Path, value: str) -> None:
    profile = tmp_path / "q.toml"
    shutil.copy(QQ, profile)
    before = profile.read_bytes()
    out = _run(gm, "rules", "set", profile, "timeouts.action_s", value, expect=2)
    assert "one TOML value" in out, out
    assert profile.read_bytes() == before
    assert not [p for p in tmp_path.iterdir() if p.name != "q.toml"]


def test_set_still_takes_one_value_with_a_comment(gm: Gmtool, tmp_path: Path) -> None:
    profile = tmp_path / "q.toml"
    shutil.copy(QQ, profile)
    _run(gm, "rules", "set", profile, "timeouts.action_s", "20  # slower players", expect=0)
    assert "action_s = 20" in profile.read_text(encoding="utf-8")
