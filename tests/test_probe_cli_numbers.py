"""Numbers and --debug at the command line: bad input is one usage message and exit 2.

Every float option refuses nan and infinity (typer's float range lets nan through: every
comparison with it is false) before anything runs, so none of these tests starts a host.
`--debug` and GMTOOL_DEBUG=1 change only what an internal error shows: an expected error
(a GmtoolError, a usage error) reads and exits exactly as without them.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from gmtool.cli import app

# Every float option of every command, with the other arguments it needs; a new float
# option must be added here (test_every_float_option_is_probed says so).
FLOAT_OPTIONS = {
    ("tables", "watch", "--interval"): ("tables", "watch", "--count", "1"),
    ("tables", "kick", "--timeout"): ("tables", "kick", "t1", "p1", "--reason", "r"),
    ("tables", "close", "--timeout"): ("tables", "close", "t1"),
    ("house", "run", "--speed"): ("house", "run", "--duration", "1"),
    ("house", "run", "--duration"): ("house", "run"),
    ("house", "run", "--chaos"): ("house", "run", "--duration", "1"),
    ("house", "run", "--grace"): ("house", "run", "--duration", "1"),
    ("house", "run", "--checkpoint-every"): ("house", "run", "--duration", "1"),
    ("house", "run", "--lease"): ("house", "run", "--duration", "1"),
    ("demo", "--duration"): ("demo",),
    ("demo", "--speed"): ("demo", "--duration", "1"),
    ("demo", "--chaos"): ("demo", "--duration", "1"),
    ("bots", "--think"): ("bots", "--connect", "ws://127.0.0.1:9"),
}


def _float_options(command, path: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    found = set()
    for name, sub in getattr(command, "commands", {}).items():
        found |= _float_options(sub, (*path, name))
    for param in getattr(command, "params", []):
        if param.param_type_name == "option" and param.type.name in ("float", "float range"):
            found.add((*path, max(param.opts, key=len)))
    return found


def test_every_float_option_is_probed():
    """The probes below cover every float option the CLI has."""
    assert _float_options(typer.main.get_command(app)) == set(FLOAT_OPTIONS)


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-inf", "1e400"])
@pytest.mark.parametrize("option", sorted(FLOAT_OPTIONS), ids="-".join)
def test_float_option_refuses_non_finite_before_running(gm, tmp_path: Path, option, value):
    """nan and infinity are one usage message naming the option (exit 2), before the
    command opens or creates a store: never an internal error, a hang or a run."""
    db = tmp_path / "store.db"
    run = gm(*FLOAT_OPTIONS[option], option[-1], value, "--db", db, expect=2)
    assert run.stdout == ""
    assert run.stderr.count("Error:") == 1, run.stderr
    assert f"Invalid value for '{option[-1]}'" in run.stderr, run.stderr
    assert "internal error" not in run.stderr
    assert not db.exists()


@pytest.mark.parametrize("command", [("house", "run"), ("demo",)], ids=" ".join)
def test_speed_is_bounded_for_every_host(gm, tmp_path: Path, command):
    """`demo --speed` has house run's upper bound: a time scale past it is refused."""
    db = tmp_path / "store.db"
    run = gm(*command, "--speed", "10001", "--duration", "1", "--db", db, expect=2)
    assert "Invalid value for '--speed'" in run.stderr
    assert "10000" in run.stderr
    assert not db.exists()


@pytest.mark.parametrize("option,value", [("--interval", "0.1"), ("--interval", "2.5")])
def test_finite_values_within_bounds_still_work(gm, tmp_path: Path, option, value):
    """The check refuses only what is not a finite number in range."""
    db = tmp_path / "store.db"
    gm("db", "init", "--db", db)
    gm("tables", "watch", option, value, "--count", "1", "--db", db)


@pytest.fixture(scope="module")
def store(gm, tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("debug") / "store.db"
    gm("db", "init", "--db", db)
    return db


DB, ABSENT = object(), object()  # where the store's path goes, and a path with no store
EXPECTED_ERRORS = {
    "unknown player": (("players", "show", "nobody", "--db", DB), 2),
    "unknown hand": (("hands", "show", "99999", "--db", DB), 2),
    "unknown table": (("tables", "show", "nowhere", "--db", DB), 2),
    "refused GM command": (("tables", "close", "t1", "--as", "stranger", "--db", DB), 1),
    "no store": (("players", "list", "--db", ABSENT), 2),
    "bad flag value": (("players", "list", "--limit", "x", "--db", DB), 2),
    "bad time": (("hands", "list", "--since", "whenever", "--db", DB), 2),
    "missing file": (("rules", "show", "no-such-profile.toml"), 2),
}


@pytest.mark.parametrize("how", ["--debug", "GMTOOL_DEBUG=1"])
@pytest.mark.parametrize("case", sorted(EXPECTED_ERRORS))
def test_debug_does_not_change_expected_errors(gm, store: Path, case, how):
    """With --debug or GMTOOL_DEBUG=1 an expected error is the same one message and exit
    code as without: the traceback is for internal errors only."""
    paths = {DB: store, ABSENT: store.with_name("absent.db")}
    args = [paths.get(arg, arg) for arg in EXPECTED_ERRORS[case][0]]
    code = EXPECTED_ERRORS[case][1]
    plain = gm(*args, expect=code)
    if how == "--debug":
        debug = gm("--debug", *args, expect=code)
    else:
        debug = gm(*args, expect=code, env=gm.env(GMTOOL_DEBUG="1"))
    assert (debug.stdout, debug.stderr) == (plain.stdout, plain.stderr)
    assert plain.stderr.strip(), "an expected error says what went wrong"


def _boom(*args, **kwargs):
    raise RuntimeError("boom")


@pytest.fixture
def internal_error(monkeypatch: pytest.MonkeyPatch):
    """`tables list` fails with an exception gmtool does not expect."""
    monkeypatch.delenv("GMTOOL_DEBUG", raising=False)
    monkeypatch.setattr("gmtool.cli.render_tables.table_summaries", _boom)


def test_internal_error_without_debug_is_one_line(internal_error, store: Path):
    result = CliRunner().invoke(app, ["tables", "list", "--db", str(store)])
    assert result.exit_code == 2
    assert "internal error: RuntimeError: boom" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("how", ["--debug", "GMTOOL_DEBUG=1"])
def test_internal_error_with_debug_shows_its_traceback(
    internal_error, store: Path, how, monkeypatch: pytest.MonkeyPatch
):
    args = ["tables", "list", "--db", str(store)]
    if how == "--debug":
        args.insert(0, "--debug")
    else:
        monkeypatch.setenv("GMTOOL_DEBUG", "1")
    result = CliRunner().invoke(app, args)
    assert isinstance(result.exception, RuntimeError)
    assert result.exit_code == 1


def test_debug_flag_lasts_one_invocation(store: Path, monkeypatch: pytest.MonkeyPatch):
    """--debug applies to its own command only: it is not left in the environment, where it
    would turn a later command's internal error into a traceback."""
    monkeypatch.delenv("GMTOOL_DEBUG", raising=False)
    CliRunner().invoke(app, ["--debug", "players", "show", "nobody", "--db", str(store)])
    assert "GMTOOL_DEBUG" not in os.environ
    monkeypatch.setattr("gmtool.cli.render_tables.table_summaries", _boom)
    result = CliRunner().invoke(app, ["tables", "list", "--db", str(store)])
    assert result.exit_code == 2
    assert "internal error: RuntimeError: boom" in result.output
