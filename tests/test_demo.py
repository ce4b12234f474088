"""`gmtool demo`, the newcomer's first command (issue 5, deliverable 5): a fresh store,
every shipped profile deployed, tables of every system played by bots for a bounded
time, then a summary a newcomer can act on. Run as a real subprocess, twice.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from helpers import clean_env, gmtool_command

from gmtool.store import ledger
from gmtool.store.db import connect

SHIPPED = {"lequ-showhand", "qq-showhand", "straight-flush", "suihua-three-card", "video-showhand"}
DEMO_TIMEOUT_S = 90
SUMMARY = re.compile(
    r"^tables: (\d+)\s+hands: (\d+) settled, (\d+) voided\s+coins in play: "
    r"([\d,]+) held by (\d+) players$",
    re.M,
)


def demo(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("GMTOOL_DB", "GMTOOL_DEBUG")}
    run = subprocess.run(
        [*gmtool_command(), "demo", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=DEMO_TIMEOUT_S,
    )
    assert "Traceback" not in run.stdout + run.stderr, run.stdout + run.stderr
    assert run.returncode == 0, run.stdout + run.stderr
    return run


def check_summary(output: str, db: Path) -> None:
    """The summary names tables, hands, coins in play, a hand's timeline, the audit
    verdict and next commands, and agrees with the store it describes."""
    match = SUMMARY.search(output)
    assert match, output
    tables, settled, voided, coins, players = match.groups()
    with connect(db) as store:
        assert int(tables) == store.one("SELECT COUNT(*) FROM tables")[0] >= len(SHIPPED)
        assert {r[0] for r in store.all("SELECT DISTINCT profile_id FROM tables")} == SHIPPED
        assert {r[0] for r in store.all("SELECT DISTINCT profile_id FROM deployments")} == SHIPPED
        assert (
            int(settled) == store.one("SELECT COUNT(*) FROM hands WHERE outcome = 'settled'")[0] > 0
        )
        assert int(voided) == store.one("SELECT COUNT(*) FROM hands WHERE outcome = 'voided'")[0]
        assert int(coins.replace(",", "")) == store.one("SELECT SUM(coins) FROM players")[0]
        assert int(players) == store.one("SELECT COUNT(*) FROM players")[0]
        assert store.one("SELECT COUNT(*) FROM hands WHERE outcome = 'running'")[0] == 0
        shown = re.search(r"^one hand \(#(\d+)\):$", output, re.M)
        assert shown, output
        hand = store.one("SELECT outcome FROM hands WHERE id = ?", (int(shown.group(1)),))
        assert hand is not None and hand["outcome"] == "settled"
    timeline = output[shown.end() :].split("\n\n", 1)[0].strip().splitlines()
    assert len(timeline) >= 3 and any("settlement" in line for line in timeline), timeline
    assert re.search(r"^audit of \d+ hands \(.*\): ok$", output, re.M), output
    steps = output.split("next, try:", 1)[1].strip().splitlines()
    assert len(steps) >= 3 and all(s.strip().startswith("gmtool ") for s in steps), steps
    assert any(str(db.name) in s for s in steps)


def test_demo_runs_summarises_and_replaces_its_database(tmp_path: Path) -> None:
    (tmp_path / "tmp").mkdir()
    db = tmp_path / "tmp" / "demo.db"
    first = demo(tmp_path, "--seconds", "5", "--db", "tmp/demo.db")
    assert db.exists()
    check_summary(first.stdout, db)
    with connect(db) as store:  # something only the first run's database holds
        ledger.grant(store, "left-over", 123, "opening_balance")
        first_hands = store.one("SELECT COUNT(*) FROM hands")[0]
    assert first_hands > 0

    second = demo(tmp_path, "--seconds", "5", "--db", "tmp/demo.db")
    check_summary(second.stdout, db)
    with connect(db) as store:
        assert store.one("SELECT 1 FROM players WHERE name = 'left-over'") is None
        assert store.one("SELECT COUNT(*) FROM deployments")[0] == len(SHIPPED)
        assert store.one("SELECT MIN(id) FROM hands")[0] == 1


def test_a_host_run_on_the_demo_store_deals_from_the_demo_key(tmp_path: Path) -> None:
    """The demo keeps the key its --seed stands for beside the store (0600), so a later
    `house run` on it deals from the same key and audit checks every seed, the demo's
    and the host's, with no false alarm (it made a new random key before)."""
    demo(tmp_path, "--seconds", "3", "--db", "demo.db")
    key = tmp_path / "demo.db.key"
    assert key.read_text().strip() == hashlib.sha256(b"demo").hexdigest()
    assert key.stat().st_mode & 0o777 == 0o600
    env = {k: v for k, v in os.environ.items() if k not in ("GMTOOL_DB", "GMTOOL_DEBUG")}
    for command in (["house", "run", "--tables", "2", "--hands", "6", "--speed", "100"], ["audit"]):
        run = subprocess.run(
            [*gmtool_command(), *command, "--db", "demo.db"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=DEMO_TIMEOUT_S,
        )
        assert run.returncode == 0, run.stdout + run.stderr
    assert key.read_text().strip() == hashlib.sha256(b"demo").hexdigest()


def test_demo_without_the_shipped_profiles_makes_no_store(tmp_path: Path) -> None:
    """A copy of the package with no rules/ beside it (as a non-editable install is), run
    where there is none either: one message, exit 2, and no half-made store left behind
    (an outside probe found the store, its key and its GM keys made before the refusal)."""
    package = tmp_path / "site"
    shutil.copytree(
        Path(__file__).resolve().parent.parent / "gmtool",
        package / "gmtool",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    work = tmp_path / "work"
    work.mkdir()
    run = subprocess.run(
        [sys.executable, "-m", "gmtool", "demo", "--db", "x.db"],
        cwd=work,
        env={**clean_env(), "PYTHONPATH": str(package)},
        capture_output=True,
        text=True,
    )
    assert run.returncode == 2, run.stdout + run.stderr
    assert "cannot find the shipped profiles" in run.stderr and "Traceback" not in run.stderr
    assert list(work.iterdir()) == []
