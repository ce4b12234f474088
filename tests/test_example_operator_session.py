"""examples/operator-session.md is run, step by step, so the worked example cannot rot.

The page's ```console blocks are shell sessions: a line starting with `$ ` is a command,
the lines after it (up to the next command or the end of the block) are what it prints,
standard error included, and a trailing `# exit N` comment gives a non-zero exit code.
Each command runs through bash in a temporary copy of a rule repository (the repo's
rules/ folder), with the real `gmtool` console script of this environment first on
PATH, and its exit code and output are compared with the page, line for line.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "examples" / "operator-session.md"
_EXIT = re.compile(r"\s+#\s*exit\s+(\d+)\s*$")


@dataclass(frozen=True)
class Step:
    """One command of the page, with what the page says it prints and returns."""

    line: int  # 1-based line of the command in the page
    command: str
    exit_code: int
    output: tuple[str, ...]


def parse_session(text: str) -> list[Step]:
    """The steps of every ```console block, in page order."""
    steps: list[Step] = []
    lines = text.splitlines()
    in_block = False
    current: tuple[int, str, int] | None = None
    output: list[str] = []

    def finish() -> None:
        if current is not None:
            steps.append(Step(*current, tuple(output)))

    for number, line in enumerate(lines, start=1):
        if not in_block:
            in_block = line.strip() == "```console"
            continue
        if line.strip() == "```":
            finish()
            in_block, current, output = False, None, []
        elif line.startswith("$ "):
            finish()
            command, exit_code = line[2:], 0
            match = _EXIT.search(command)
            if match:
                command, exit_code = command[: match.start()], int(match.group(1))
            current, output = (number, command.strip(), exit_code), []
        elif current is None:
            raise ValueError(f"{PAGE.name}:{number}: output before any command: {line!r}")
        else:
            output.append(line.rstrip())
    return steps


STEPS = parse_session(PAGE.read_text(encoding="utf-8"))


def gmtool_dir() -> Path:
    """Where the console script of this environment lives (next to the Python running us)."""
    script = shutil.which("gmtool", path=str(Path(sys.executable).parent))
    if script is None:
        pytest.skip("no gmtool console script next to sys.executable (install gmtool first)")
    return Path(script).parent


@pytest.fixture()
def rule_repo(tmp_path: Path) -> Path:
    shutil.copytree(REPO / "rules", tmp_path / "rules")
    return tmp_path


def _environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("GMTOOL_DEBUG", "GMTOOL_DB")}
    env["PATH"] = str(gmtool_dir()) + os.pathsep + env.get("PATH", "")
    env["PYTHONUNBUFFERED"] = "1"  # stdout and stderr interleave as on a terminal
    env["PYTHONIOENCODING"] = "utf-8"
    env["NO_COLOR"] = "1"
    return env


def _edited_file(command: str) -> str | None:
    """The PROFILE of a `gmtool rules set PROFILE KEY VALUE` command."""
    match = re.match(r"gmtool rules set (\S+) ", command)
    return match.group(1) if match else None


def test_the_page_shows_the_whole_session() -> None:
    """The steps the example exists for are on the page (and the parser found them)."""
    commands = [step.command for step in STEPS]
    assert any(c.startswith("cp rules/") for c in commands), "copying a shipped profile"
    assert (
        'gmtool rules set copy.toml tiers.junior.street_caps "[200, 600, 1000, 1000]"' in commands
    )
    diff = [s for s in STEPS if s.command == "gmtool rules diff rules/qq-showhand.toml copy.toml"]
    assert diff and diff[0].output == ("junior: street-3 cap 500 -> 600 (+20%)",)
    assert "gmtool rules validate copy.toml" in commands
    refused = [s for s in STEPS if _edited_file(s.command) and s.exit_code == 1]
    assert refused, "a refused (invalid) edit with exit code 1"


@pytest.mark.skipif(shutil.which("bash") is None, reason="the session is a bash session")
def test_operator_session_runs_as_written(rule_repo: Path) -> None:
    env = _environment()
    for step in STEPS:
        edited = _edited_file(step.command)
        before = (rule_repo / edited).read_bytes() if edited and step.exit_code else None
        done = subprocess.run(
            ["bash", "-c", step.command],
            cwd=rule_repo,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            encoding="utf-8",
            timeout=120,
        )
        output = [line.rstrip() for line in done.stdout.rstrip("\n").splitlines()]
        where = f"{PAGE.name}:{step.line}: $ {step.command}"
        assert done.returncode == step.exit_code, (
            f"{where}\nexit code {done.returncode}, page says {step.exit_code}\n{done.stdout}"
        )
        assert output == list(step.output), f"{where}\noutput differs from the page"
        if before is not None:
            assert (rule_repo / edited).read_bytes() == before, (
                f"{where}\na refused edit changed the file"
            )
