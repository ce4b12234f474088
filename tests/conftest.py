"""Shared fixtures for the GM console tests: the CLI in a real subprocess, live hosts, and
ONE host-produced database built per session and copied to every test that changes it.

Nothing is mocked: every database is a real SQLite file, every host is a real
`gmtool house run` process (stopped by its own pid), every command runs the installed
console script, and every run asserts that no traceback reached the user.
"""

from __future__ import annotations

import json
import random
import shutil
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest
from helpers import clean_env, gmtool_command

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "rules"
PROFILES = ("lequ-showhand", "qq-showhand", "video-showhand", "straight-flush",
            "suihua-three-card")
CLI_TIMEOUT_S = 120
OPERATOR, SUPPORT = "boss", "sue"

# The session database: every deployed system, bots with chaos (stalls, disconnects,
# escapes), GM kicks during hands, a coin adjustment and a refused command.
HOST_ARGS = ("--tables", "10", "--speed", "200", "--chaos", "0.2", "--seed", "s",
             "--duration", "8", "--grace", "5")
KICKS_WANTED = 3




class Gmtool:
    """Runs the CLI; asserts no traceback and (unless `expect` is None) the exit code."""

    def __call__(self, *args: str | Path, expect: int | None = 0, env: dict | None = None,
                 timeout: float = CLI_TIMEOUT_S) -> subprocess.CompletedProcess:
        run = subprocess.run([*gmtool_command(), *map(str, args)], env=env or clean_env(),
                             capture_output=True, text=True, timeout=timeout)
        assert "Traceback" not in run.stdout + run.stderr, run.stdout + run.stderr
        if expect is not None:
            assert run.returncode == expect, (args, run.returncode, run.stdout, run.stderr)
        return run

    def json(self, *args: str | Path, expect: int | None = 0, env: dict | None = None):
        return json.loads(self(*args, expect=expect, env=env).stdout)

    @staticmethod
    def env(**extra: str) -> dict[str, str]:
        """The clean environment plus `extra` (e.g. GMTOOL_USER="sue")."""
        return clean_env(**extra)

    def deploy_all(self, db: Path, by: str = "deployer") -> None:
        """A new store with all five shipped profiles deployed (each deploy is GM-logged)."""
        self("db", "init", "--db", db)
        for profile in PROFILES:
            self("deploy", RULES / f"{profile}.toml", "--db", db, "--as", by)

    def add_roles(self, db: Path) -> None:
        """`boss` (operator, the bootstrap: added by anyone) and `sue` (support)."""
        self("gm", "users", "add", OPERATOR, "--role", "operator", "--db", db, "--as", OPERATOR)
        self("gm", "users", "add", SUPPORT, "--role", "support", "--db", db, "--as", OPERATOR)

    def running_players(self, db: Path) -> list[tuple[str, str]]:
        """(table, player) for every player still in a running hand, from `tables list`."""
        return [(table["id"], player["name"])
                for table in self.json("tables", "list", "--db", db, "--json")
                for player in table.get("players") or [] if not player["folded"]]


class LiveHost:
    """A `gmtool house run` subprocess on `db`; stopped by SIGTERM to its own pid."""

    def __init__(self, db: Path, *args: str) -> None:
        self.db = db
        self.log = db.with_name(db.name + ".host.log")
        self._out = self.log.open("w", encoding="utf-8")
        self.proc = subprocess.Popen([*gmtool_command(), "house", "run", "--db", str(db), *args],
                                     env=clean_env(), stdout=self._out,
                                     stderr=subprocess.STDOUT, text=True)

    @property
    def running(self) -> bool:
        return self.proc.poll() is None

    @property
    def output(self) -> str:
        self._out.flush()
        return self.log.read_text(encoding="utf-8")

    def wait(self, timeout: float = 120) -> int:
        code = self.proc.wait(timeout=timeout)
        self._out.close()
        return code

    def stop(self, timeout: float = 120) -> int:
        if self.running:
            self.proc.send_signal(signal.SIGTERM)
        return self.wait(timeout)

    def wait_until(self, predicate, timeout: float = 30, every: float = 0.2):
        """Poll `predicate()` until it returns something truthy; fail after `timeout`."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.running, f"the host stopped early:\n{self.output}"
            value = predicate()
            if value:
                return value
            time.sleep(every)
        raise AssertionError(f"timed out after {timeout} s waiting on the host:\n{self.output}")


def copy_db(source: Path, folder: Path, name: str = "copy.db") -> Path:
    """A copy of a store (with its WAL and key file, if any) that a test may change."""
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / name
    for suffix in ("", "-wal", "-shm", ".key"):
        src = source.with_name(source.name + suffix)
        if src.exists():
            shutil.copyfile(src, target.with_name(target.name + suffix))
    return target


def _kick_during_hands(gm: Gmtool, host: LiveHost, db: Path, until: float) -> int:
    rng = random.Random(6)
    kicked = 0
    while kicked < KICKS_WANTED and time.monotonic() < until and host.running:
        candidates = gm.running_players(db)
        if not candidates:
            time.sleep(0.1)
            continue
        table, player = rng.choice(candidates)
        run = gm("tables", "kick", table, player, "--reason", "fixture: abusive chat",
                 "--timeout", "3", "--db", db, "--as", OPERATOR, expect=None)
        kicked += run.returncode == 0 and "during a hand" in run.stdout
    return kicked


@pytest.fixture(scope="session")
def gm() -> Gmtool:
    return Gmtool()


@pytest.fixture(scope="session")
def host_db(tmp_path_factory, gm: Gmtool):
    """ONE database produced by the host (build once, copy per test; never change it).

    All five systems with chaos 0.2 (timeouts, disconnects, reconnects, escapes), GM kicks
    during running hands, a refused kick by support, and, last in the GM log, an operator's
    coin adjustment (so the log ends with an action that a ledger row points at).
    """
    db = tmp_path_factory.mktemp("host") / "host.db"
    gm.deploy_all(db)
    gm.add_roles(db)
    started = time.monotonic()
    host = LiveHost(db, *HOST_ARGS)
    try:
        host.wait_until(lambda: gm.running_players(db), timeout=30, every=0.1)
        kicked = _kick_during_hands(gm, host, db, until=started + 5.5)
        gm("tables", "kick", "qq-showhand-junior-1", "bot-001", "--reason", "support tries",
           "--db", db, "--as", SUPPORT, expect=1)
        busy = host.wait_until(lambda: [t for t, _ in gm.running_players(db)
                                        if t.startswith("video-showhand-")], every=0.05)
        gm("tables", "close", busy[0], "--reason", "fixture: table closed", "--db", db,
           "--as", OPERATOR)
        assert host.wait(timeout=60) == 0, host.output
    finally:
        if host.running:
            host.stop()
    assert kicked >= 1, f"no kick landed during a hand:\n{host.output}"
    gm("players", "adjust", "bot-002", "500", "--reason", "fixture: goodwill", "--db", db,
       "--as", OPERATOR)
    written = _row_counts(db)
    yield db
    assert _row_counts(db) == written, "a test wrote to the shared database: use host_copy"


def _row_counts(db: Path) -> dict[str, int]:
    conn = sqlite3.connect(db)
    try:
        return {table: conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
                for table in ("hands", "events", "ledger", "gm_actions", "gm_commands")}
    finally:
        conn.close()


@pytest.fixture
def host_copy(host_db: Path, tmp_path: Path) -> Path:
    """A private copy of the session's host-produced database."""
    return copy_db(host_db, tmp_path)


@pytest.fixture(scope="session")
def launch_host():
    """`launch_host(db, *args)`: a LiveHost (for fixtures wider than one test)."""
    return LiveHost


@pytest.fixture
def start_host():
    """Start `gmtool house run` subprocesses; each is stopped (by its pid) after the test."""
    hosts: list[LiveHost] = []

    def start(db: Path, *args: str) -> LiveHost:
        hosts.append(LiveHost(db, *args))
        return hosts[-1]

    yield start
    for host in hosts:
        if host.running:
            host.stop()


@pytest.fixture
def deployed_db(gm: Gmtool, tmp_path: Path) -> Path:
    """A new store: the five profiles deployed, `boss` operator and `sue` support."""
    db = tmp_path / "live.db"
    gm.deploy_all(db)
    gm.add_roles(db)
    return db
