"""The root command builds a command group only when it is named (gmtool/cli/lazy.py),
and says the same as an eagerly built one: help, suggestions, completion."""

from __future__ import annotations

import subprocess
import sys

import pytest
import typer
from typer.testing import CliRunner

from gmtool.cli import COMMANDS, app
from gmtool.cli.lazy import LazyCommands, build, target_of

runner = CliRunner()


def _root() -> typer.main.TyperGroup:
    return typer.main.get_command(app)  # type: ignore[return-value]


@pytest.mark.parametrize("name", list(COMMANDS))
def test_the_help_listing_says_what_the_built_command_says(name: str) -> None:
    commands: LazyCommands = _root().commands  # type: ignore[assignment]
    stand_in = commands.summary(name)  # not built: from the help text alone
    assert name not in commands.built
    built = build(name, target_of(COMMANDS[name]))
    for width in (40, 80, 200):
        assert stand_in.get_short_help_str(width) == built.get_short_help_str(width)
    assert stand_in.get_short_help_str(200)  # every command says what it does


def test_naming_a_group_builds_that_group_alone() -> None:
    root = _root()
    commands: LazyCommands = root.commands  # type: ignore[assignment]
    assert commands.built == {}
    assert list(commands) == list(COMMANDS)  # listed in the table's order, none built
    rules = root.get_command(None, "rules")  # type: ignore[arg-type]
    assert rules is not None and rules.name == "rules"
    assert set(commands.built) == {"rules"}
    assert root.get_command(None, "nosuch") is None  # type: ignore[arg-type]


def test_root_help_lists_every_command_in_order() -> None:
    result = runner.invoke(app, ["--help"], terminal_width=100)
    assert result.exit_code == 0, result.output
    listed = [
        line.split()[0]
        for line in result.output.split("Commands:\n", 1)[1].splitlines()
        if line.startswith("  ") and not line.startswith("   ")
    ]
    assert listed == list(COMMANDS)


def test_a_mistyped_command_gets_a_suggestion() -> None:
    result = runner.invoke(app, ["rulse"])
    assert result.exit_code == 2
    assert "No such command 'rulse'. Did you mean 'rules'" in result.output


def _complete(words: str) -> list[str]:
    """What bash completion offers for the last of `words` (a real process)."""
    run = subprocess.run(
        [sys.executable, "-c", "from gmtool.cli import app; app(prog_name='gmtool')"],
        env={
            "_GMTOOL_COMPLETE": "complete_bash",
            "COMP_WORDS": words,
            "COMP_CWORD": str(len(words.split()) - 1),
            "PATH": "/usr/bin:/bin",
        },
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    return run.stdout.split()


def test_shell_completion_sees_unbuilt_groups() -> None:
    assert _complete("gmtool ru") == ["rules"]
    assert _complete("gmtool rules va") == ["validate"]
