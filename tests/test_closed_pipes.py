"""A reader that goes away (issue 23, item 3): `gmtool ... | head -1`.

Every command stops quietly with exit 0 when the reader of its output closes the pipe:
what it read was all it wanted, and 1 would be a finding. The table host is a service: it
plays on when its output goes away (its hands go on, its lines go nowhere, one warning
says how to stop it), and stops as usual.

Each test reads from a real pipe and closes it early, as `head` does: at once, or after
the first line. Nothing is mocked.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import CLI_TIMEOUT_S, RULES, Gmtool
from helpers import clean_env, gmtool_command, query

QQ = str(RULES / "qq-showhand.toml")

# Reading commands over the session's host-made store, and commands that need no store.
READERS = {
    "hands list": ("hands", "list", "--limit", "0"),
    "hands list json": ("hands", "list", "--limit", "0", "--json"),
    "hands show": ("hands", "show", "1"),
    "tables list": ("tables", "list", "--closed"),
    "tables list json": ("tables", "list", "--closed", "--json"),
    "tables watch": ("tables", "watch", "--count", "2", "--interval", "0.1"),
    "players list": ("players", "list", "--limit", "0"),
    "gm log": ("gm", "log"),
    "gm log json": ("gm", "log", "--json"),
    "deploy history": ("deploy", "history"),
    "audit": ("audit",),
    "audit json": ("audit", "--json"),
}
NO_STORE = {
    "rules show": ("rules", "show", QQ),
    "rules schema": ("rules", "schema"),
    "rules compile": ("rules", "compile", QQ),
    "help": ("--help",),
    "group help": ("tables", "--help"),
}


def piped(*args: str | Path, lines: int) -> tuple[str, int, str]:
    """Run the console into a pipe whose reader reads `lines` lines, then closes it: what
    it read, the exit code and stderr."""
    proc = subprocess.Popen(
        [*gmtool_command(), *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=clean_env(),
        text=True,
    )
    read = "".join(proc.stdout.readline() for _ in range(lines))
    proc.stdout.close()
    try:
        code = proc.wait(timeout=CLI_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    return read, code, proc.stderr.read()


@pytest.mark.parametrize("args", list(READERS.values()), ids=list(READERS))
def test_a_command_whose_reader_closes_at_once_exits_0_quietly(host_db: Path, args) -> None:
    _, code, stderr = piped(*args, "--db", host_db, lines=0)
    assert (code, stderr) == (0, "")


@pytest.mark.parametrize("args", list(NO_STORE.values()), ids=list(NO_STORE))
def test_a_command_without_a_store_whose_reader_closes_at_once_exits_0_quietly(args) -> None:
    _, code, stderr = piped(*args, lines=0)
    assert (code, stderr) == (0, "")


def test_findings_keep_exit_1_when_the_reader_closes_at_once(
    host_copy: Path, tmp_path: Path
) -> None:
    """`gmtool audit | head -1` and `gmtool rules validate BAD | head -1` under `set -o
    pipefail`: the reader going away is not a finding, but it hides none either: exit 1."""
    host_copy.with_name(host_copy.name + ".key").write_text("0" * 64 + "\n")  # seeds fail
    for args in (("audit", "--db", host_copy), ("audit", "--db", host_copy, "--json")):
        _, code, stderr = piped(*args, lines=0)
        assert (code, stderr) == (1, ""), args
    bad = Path(__file__).parent / "data" / "profiles" / "invalid" / "ante-above-cap.toml"
    for output in ("text", "json", "github", "sarif"):
        _, code, stderr = piped("rules", "validate", bad, "--format", output, lines=0)
        assert (code, stderr) == (1, ""), output


def test_hands_list_into_head_1_exits_0_quietly(host_db: Path) -> None:
    """`gmtool hands list --limit 0 | head -1`: the list is longer than a pipe holds, so the
    reader leaves while the console still writes (exit 1 before, from rich)."""
    first, code, stderr = piped("hands", "list", "--limit", "0", "--db", host_db, lines=1)
    assert first.endswith("hand(s)\n") and (code, stderr) == (0, ""), (first, code, stderr)


def test_the_host_plays_on_when_its_reader_goes_away(deployed_db: Path, gm: Gmtool) -> None:
    """`gmtool house run ... | head -1`: before, the host died at its next line with hands
    running (the next start voided them). Now it plays on until --hands, every hand
    settled, says once on stderr how to stop it, and exits 0."""
    first, code, stderr = piped(
        "house",
        "run",
        "--db",
        deployed_db,
        "--system",
        "qq-showhand",
        "--tables",
        "2",
        "--hands",
        "30",
        "--speed",
        "100",
        "--verbose",
        lines=1,
    )
    # a store's first host start announces the witness folder it makes, then hosts
    assert first.startswith("created the witness folder "), first
    assert code == 0, (code, stderr)
    assert stderr.startswith(
        "warning: stdout was closed: the host plays on without printing; stop it with "
        "Ctrl-C or `kill "
    ), stderr
    outcomes = dict(query(deployed_db, "SELECT outcome, COUNT(*) FROM hands GROUP BY outcome"))
    assert outcomes.get("settled", 0) >= 30 and set(outcomes) == {"settled"}, outcomes
    gm("audit", "--db", deployed_db)


def test_a_verdict_reached_after_the_reader_left_still_counts(host_copy: Path) -> None:
    """Third outside probe of issue 23: `hands show`, `hands replay` and `rules simulate
    --fail-if` stopped at the first write that met the closed pipe, before they decided
    (exit 0, the finding and its stderr line lost). The output goes nowhere; the command
    goes on to its verdict: exit 1, its error on stderr."""
    host_copy.with_name(host_copy.name + ".key").write_text("0" * 64 + "\n")  # seeds fail
    hand = str(query(host_copy, "SELECT MIN(id) FROM hands WHERE outcome = 'settled'")[0][0])
    for args in (("hands", "show", hand), ("hands", "replay", hand), ("hands", "show", hand)):
        for extra in ((), ("--json",)):
            _, code, _ = piped(*args, *extra, "--db", host_copy, lines=0)
            assert code == 1, (args, extra)
    bound = ("rules", "simulate", QQ, "--hands", "20", "--tier", "junior")
    for extra in ((), ("--json",)):
        _, code, stderr = piped(*bound, "--fail-if", "junior.pot.mean > 1", *extra, lines=0)
        assert code == 1 and "bound broken" in stderr, (extra, code, stderr)


def test_tables_watch_into_a_pipe_writes_each_refresh_and_stops_when_its_reader_goes(
    host_db: Path, tmp_path: Path, gm: Gmtool
) -> None:
    """Third outside probe of issue 23: `tables watch | head -1` showed nothing and never
    stopped, and into a file it wrote only the last frame (rich's live view, for a
    terminal). Into a pipe or file each refresh is written as it comes; with no --count,
    the first write after the reader left ends the command (exit 0)."""
    first, code, stderr = piped("tables", "watch", "--interval", "0.1", "--db", host_db, lines=1)
    assert " table(s) - " in first, first
    assert (code, stderr) == (0, "")
    frames = gm("tables", "watch", "--count", "3", "--interval", "0.1", "--db", host_db).stdout
    assert frames.count("table(s) - ") == 3, frames
