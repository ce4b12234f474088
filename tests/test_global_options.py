"""The options users put anywhere (issue 23, item 12): `--db`, `--as` and `--json` before
the command as after it (`gmtool --db X hands list` is `gmtool hands list --db X`), and
`--debug` after the command as before it. `gmtool --help` is unchanged (tests/test_cli_lazy.py
and tests/test_startup_imports.py keep its listing and its imports)."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from conftest import OPERATOR, Gmtool
from typer.testing import CliRunner

from gmtool.cli import app


def test_db_and_json_before_the_command_read_the_same_store(gm: Gmtool, deployed_db: Path) -> None:
    after = gm("deploy", "history", "--db", deployed_db, "--json").stdout
    assert gm("--db", deployed_db, "--json", "deploy", "history").stdout == after
    assert gm("--json", f"--db={deployed_db}", "deploy", "history").stdout == after
    assert gm("--db", deployed_db, "deploy", "history", "--json").stdout == after


def test_as_before_the_command_acts_as_that_gm(gm: Gmtool, tmp_path: Path) -> None:
    db = tmp_path / "new.db"
    gm("--as", OPERATOR, "--db", db, "db", "init")
    users = gm.json("gm", "users", "list", "--db", db, "--json")
    assert [user["name"] for user in users] == [OPERATOR], users


def test_options_before_a_double_dash_stay_options(gm: Gmtool, deployed_db: Path) -> None:
    """`--` ends the options: moved ones go before it, so an argument after it stays one."""
    from gmtool.cli import options_behind_the_command

    assert options_behind_the_command(["--db", "x.db", "hands", "show", "--", "-5"]) == [
        "hands",
        "show",
        "--db",
        "x.db",
        "--",
        "-5",
    ]
    run = gm("--db", deployed_db, "hands", "show", "--", "-5", expect=2)
    assert "-5" in run.stderr and "Traceback" not in run.stderr, run.stderr


def test_an_option_without_its_value_says_so(gm: Gmtool) -> None:
    run = gm("--db", "hands", "list", expect=2)
    assert "Option '--db' requires an argument" in run.stderr, run.stderr


def test_a_command_without_the_option_says_so_once(gm: Gmtool, deployed_db: Path) -> None:
    run = gm("--db", deployed_db, "rules", "validate", "rules", expect=2)
    assert "No such option: --db" in run.stderr, run.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("hands", "list", "--debug"),
        ("hands", "--debug", "list"),
        ("--debug", "hands", "list"),
        ("audit", "--debug"),
    ],
    ids=["after-the-command", "after-the-group", "before", "single-command"],
)
def test_debug_is_accepted_before_and_after_the_command(
    gm: Gmtool, deployed_db: Path, args: tuple[str, ...]
) -> None:
    gm(*args, "--db", deployed_db)


def test_debug_after_the_command_turns_on_the_roots_debug() -> None:
    """The flag after the command is the root's: where errors become messages, the root's
    `debug` decides whether an internal error shows its traceback (cli/errors.py)."""
    root = typer.main.get_command(app)
    hands = root.get_command(None, "hands")  # type: ignore[arg-type]
    listing = hands.get_command(None, "list")  # type: ignore[union-attr]
    parent = typer.Context(root, info_name="gmtool")
    parent.params["debug"] = False
    listing.make_context("list", ["--debug"], parent=parent)
    assert parent.params["debug"] is True


def test_debug_stays_out_of_the_command_help() -> None:
    out = CliRunner().invoke(app, ["hands", "list", "--help"]).output
    assert "--db" in out and "--debug" not in out, out


@pytest.mark.parametrize(
    ("before", "after"),
    [(("--db", "a.db"), ("--db", "b.db")), (("--as", OPERATOR), ("--as=nobody",))],
)
def test_an_option_given_before_and_after_the_command_is_refused(
    gm: Gmtool, tmp_path: Path, before: tuple[str, ...], after: tuple[str, ...]
) -> None:
    """`gmtool --db A hands list --db B` read A without a word (the first won): which
    store, or which GM's key, was meant cannot be guessed, so it is a usage error."""
    run = gm(*before, "hands", "list", "--db", tmp_path / "x.db", *after, expect=2)
    assert f"{before[0]} is given both before and after the command: give it once" in run.stderr
    assert not (tmp_path / "x.db").exists() and not (tmp_path / "b.db").exists()


@pytest.mark.parametrize("group", ["deploy", "tables", "gm", "hands"])
def test_help_of_a_group_after_a_global_option_is_shown(gm: Gmtool, group: str) -> None:
    """`gmtool --db X deploy --help`: moving `--db` behind the group made the group
    refuse it ("No such option: --db") instead of showing its help."""
    run = gm("--db", "x.db", "--as", OPERATOR, group, "--help")
    assert run.stdout.startswith(f"Usage: gmtool {group} "), run.stdout + run.stderr


def test_a_value_that_names_a_command_is_the_options_value(gm: Gmtool, deployed_db: Path) -> None:
    """`--as demo players ...`: the GM is called demo (a probe found "demo" taken for the
    command); `--db hands list` still lacks its value."""
    from gmtool.cli import options_behind_the_command

    assert options_behind_the_command(["--as", "demo", "players", "adjust", "p", "1"]) == [
        "players",
        "adjust",
        "p",
        "1",
        "--as",
        "demo",
    ]
    run = gm("--as", "demo", "--db", deployed_db, "tables", "open", "t1", expect=None)
    assert "No such option" not in run.stderr and run.returncode != 0, run.stderr
    assert "demo" in run.stderr and "Usage: gmtool demo" not in run.stderr, run.stderr


def test_an_option_between_a_group_and_its_command_is_moved(gm: Gmtool, deployed_db: Path) -> None:
    after = gm("deploy", "history", "--db", deployed_db, "--json").stdout
    assert gm("deploy", "--db", deployed_db, "history", "--json").stdout == after
    assert gm("deploy", "--json", "--db", deployed_db, "history").stdout == after


@pytest.mark.parametrize("args", [["--json"], ["--db", "x.db"], ["--as", "boss"]])
def test_an_option_without_a_command_says_where_it_goes(gm: Gmtool, args: list[str]) -> None:
    run = gm(*args, expect=2)
    assert f"{args[0]} goes with a command" in run.stderr, run.stderr


def test_an_option_value_that_looks_like_an_option_is_missing(gm, tmp_path: Path) -> None:
    """`gmtool --db --as demo` made a store named `--as` (a second probe of issue 23)."""
    import subprocess

    from helpers import clean_env, gmtool_command

    run = subprocess.run(
        [*gmtool_command(), "--db", "--json", "db", "init"],
        cwd=tmp_path,
        env=clean_env(),
        capture_output=True,
        text=True,
    )
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
    assert list(tmp_path.iterdir()) == []
