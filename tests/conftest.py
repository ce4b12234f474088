"""Shared fixtures for the GM console tests: the CLI in a real subprocess, hosts, and
ONE host-produced database built per session and copied to every test that changes it.

Nothing is mocked: every database is a real SQLite file, every command runs the installed
console script, and every run asserts that no traceback reached the user. Hosts are the
real `Host`, run in this process on virtual time (tests/hosting.py), so what they play
depends on their seeds, never on the machine's speed; a few end-to-end tests start a real
`gmtool house run` process (`LiveHost`) and wait for events, never for a fixed time.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import threading
import time
from pathlib import Path

import pytest
from helpers import clean_env, gmtool_command, public_key
from hosting import VIRTUAL_EPOCH, VirtualHost

from gmtool.errors import GmtoolError, Refused
from gmtool.house.host import HostOptions

# pytest-xdist's workers are given COLUMNS=80 and LINES=24 (execnet); a command's width
# is what its environment says (in a pipe: $COLUMNS, else wide enough for any table), so
# the suite runs as it does in one process: a test that wants a width sets it itself.
for _name in ("COLUMNS", "LINES"):
    os.environ.pop(_name, None)

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "rules"
PROFILES = ("lequ-showhand", "qq-showhand", "video-showhand", "straight-flush", "suihua-three-card")
CLI_TIMEOUT_S = 120
OPERATOR, SUPPORT = "boss", "sue"

# The session database: every deployed system, bots with chaos (stalls, disconnects,
# escapes), GM kicks during hands, a coin adjustment and a refused command.
SESSION_HOST = HostOptions(tables=10, speed=1.0, chaos=0.2, seed="s", grace=60.0)
KICKS_WANTED = 3


class Gmtool:
    """Runs the CLI; asserts no traceback and (unless `expect` is None) the exit code."""

    def __call__(
        self,
        *args: str | Path,
        expect: int | None = 0,
        env: dict | None = None,
        timeout: float = CLI_TIMEOUT_S,
    ) -> subprocess.CompletedProcess:
        run = subprocess.run(
            [*gmtool_command(), *map(str, args)],
            env=env or clean_env(),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
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

    def deploy_all(self, db: Path, by: str = OPERATOR) -> None:
        """A new store whose first operator is `by` (`db init`), with all five shipped
        profiles deployed by them (each deploy signed and GM-logged)."""
        self("db", "init", "--db", db, "--as", by)
        for profile in PROFILES:
            self("deploy", RULES / f"{profile}.toml", "--db", db, "--as", by)

    def add_roles(self, db: Path) -> None:
        """`boss` (operator: the bootstrap, unless `deploy_all` made them already) and `sue`
        (support), each with their key."""
        self("db", "init", "--db", db, "--as", OPERATOR)
        self(
            "gm",
            "users",
            "add",
            SUPPORT,
            "--role",
            "support",
            "--key",
            public_key(SUPPORT),
            "--db",
            db,
            "--as",
            OPERATOR,
        )

    def running_players(self, db: Path) -> list[tuple[str, str]]:
        """(table, player) for every player still in a running hand, from `tables list`."""
        return [
            (table["id"], player["name"])
            for table in self.json("tables", "list", "--db", db, "--json")
            for player in table.get("players") or []
            if not player["folded"]
        ]


class LiveHost:
    """A real `gmtool house run --verbose` process on `db`, for the end-to-end tests.

    Its output is read line by line as the host writes it (a line for every hand that
    starts or settles, every GM command, every stop), so a test waits for what the host
    says, or re-checks a condition each time the host says something: never for a fixed
    time. A slow machine makes these tests slower, not red. Stopped by its own pid.
    """

    def __init__(self, db: Path, *args: str) -> None:
        self.db = db
        self.proc = subprocess.Popen(
            [*gmtool_command(), "house", "run", "--db", str(db), "--verbose", *args],
            env=clean_env(PYTHONUNBUFFERED="1"),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.lines: list[str] = []
        self._ended = False
        self._said = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            with self._said:
                self.lines.append(line.rstrip("\n"))
                self._said.notify_all()
        with self._said:
            self._ended = True
            self._said.notify_all()

    @property
    def running(self) -> bool:
        return self.proc.poll() is None

    @property
    def output(self) -> str:
        with self._said:
            return "\n".join(self.lines)

    def wait(self, timeout: float = 120) -> int:
        """The host's exit code; if it is still running after `timeout`, it is killed and
        the test fails with what it said."""
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"the host still ran {timeout} s later:\n{self.output}") from None
        with self._said:
            self._said.wait_for(lambda: self._ended, timeout=timeout)
        return code

    def stop(self, signum: int = signal.SIGTERM, timeout: float = 120) -> int:
        if self.running:
            self.proc.send_signal(signum)
        return self.wait(timeout)

    def kill(self) -> None:
        if self.running:
            self.proc.kill()
        self.wait()

    def wait_for_line(self, pattern: str, timeout: float = 120, start: int = 0) -> re.Match:
        """The first line from index `start` on that matches `pattern` (waits for it)."""
        regex = re.compile(pattern)
        found: list[re.Match] = []
        read = [start]  # lines looked at so far: each line is searched once

        def said() -> bool:
            for line in self.lines[read[0] :]:
                if not found and (match := regex.search(line)):
                    found.append(match)
            read[0] = len(self.lines)
            return bool(found) or self._ended

        with self._said:
            if not self._said.wait_for(said, timeout=timeout) or not found:
                raise AssertionError(
                    f"the host never said /{pattern}/ (within {timeout} s):\n"
                    + "\n".join(self.lines)
                )
        return found[0]

    def wait_until(self, predicate, timeout: float = 120):
        """Check `predicate()` now and again after every line the host writes, until it is
        truthy (its value); the host must keep running."""
        deadline = time.monotonic() + timeout
        while True:
            seen = len(self.lines)
            assert self.running, f"the host stopped early:\n{self.output}"
            value = predicate()
            if value:
                return value
            left = deadline - time.monotonic()
            with self._said:
                if left <= 0 or not self._said.wait_for(
                    lambda seen=seen: len(self.lines) > seen or self._ended, timeout=left
                ):
                    raise AssertionError(
                        f"timed out after {timeout} s waiting on the host:\n{self.output}"
                    )


STORE_FILES = ("", "-wal", "-shm", ".key", ".seed.key", ".checkpoint.key", ".checkpoint.pub")


def copy_db(source: Path, folder: Path, name: str = "copy.db") -> Path:
    """A copy of a store that a test may change, as an operator copies one whole: its WAL,
    key files and the witness folders beside it, if any (a store records its default
    witness by the folder's name beside the store, `<first name>.witness`, so the copy's
    keep their names)."""
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / name
    for suffix in STORE_FILES:
        src = source.with_name(source.name + suffix)
        if src.exists():
            shutil.copyfile(src, target.with_name(target.name + suffix))
    if source.parent.resolve() != folder.resolve():
        for witness in source.parent.glob("*.witness"):
            if witness.is_dir():
                shutil.copytree(witness, folder / witness.name, dirs_exist_ok=True)
    return target


def copy_made(template: Path, folder: Path) -> Path:
    """A copy, under the same name, of a store a fixture made once for many tests: as
    `copy_db`, its files as private as gmtool made them (a test may change the copy)."""
    db = copy_db(template, folder, template.name)
    for suffix in STORE_FILES:
        made = template.with_name(template.name + suffix)
        if made.exists():
            shutil.copymode(made, db.with_name(db.name + suffix))
    return db


def _kick_during_hands(host: VirtualHost) -> int:
    """GM kicks of players in running hands, a few game seconds apart."""
    rng = random.Random(6)
    kicked = 0
    for _ in range(20):
        candidates = host.run_until(host.running_players, what="a player in a running hand")
        table, player = rng.choice(candidates)
        try:
            outcome = host.command(OPERATOR, "kick", table, player, "fixture: abusive chat")
        except GmtoolError:  # the player left the table between the look and the kick
            continue
        kicked += bool(outcome.get("during_hand"))
        if kicked == KICKS_WANTED:
            break
        host.advance(30)
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
    with VirtualHost(db, SESSION_HOST) as host:
        host.advance(900)  # game seconds (speed 1): some 15 minutes of play at ten tables
        kicked = _kick_during_hands(host)
        with pytest.raises(Refused):
            host.command(SUPPORT, "kick", "qq-showhand-junior-1", "bot-001", "support tries")
        busy = host.run_until(
            lambda: [t for t, _ in host.running_players() if t.startswith("video-showhand-")],
            what="a running video-showhand hand",
        )
        host.command(OPERATOR, "close", busy[0], None, "fixture: table closed")
        host.advance(600)
        host.stop()
        assert not [m for m in host.messages if "internal error" in m], host.messages
    assert kicked == KICKS_WANTED, "the kicks did not land during hands"
    gm(
        "players",
        "adjust",
        "bot-002",
        "500",
        "--reason",
        "fixture: goodwill",
        "--db",
        db,
        "--as",
        OPERATOR,
    )
    written = _row_counts(db)
    yield db
    assert _row_counts(db) == written, "a test wrote to the shared database: use host_copy"


def _row_counts(db: Path) -> dict[str, int]:
    conn = sqlite3.connect(db)
    try:
        return {
            table: conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
            for table in ("hands", "events", "ledger", "gm_actions", "gm_commands")
        }
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


@pytest.fixture(scope="session")
def deployed_template(gm: Gmtool, tmp_path_factory) -> Path:
    """The store `deployed_db` copies, made once a session through the console (eight
    commands): no test writes it."""
    db = tmp_path_factory.mktemp("deployed-template") / "live.db"
    gm.deploy_all(db)
    gm.add_roles(db)
    return db


@pytest.fixture
def deployed_db(deployed_template: Path, tmp_path: Path) -> Path:
    """A new store: the five profiles deployed, `boss` operator and `sue` support (a copy
    of one made once a session, with its key files and witness folder, under the same
    name: the test may change it)."""
    return copy_made(deployed_template, tmp_path)


@pytest.fixture
def virtual_host():
    """`virtual_host(db, plan=None, wall_start=VIRTUAL_EPOCH, home=None, **options)`: a
    VirtualHost (tests/hosting.py) on `db` (a SQLite file, a PostgreSQL URL with the
    host's `home`, or a `Located` of tests/backends.py, which gives both) with
    `HostOptions(**options)`, its clock starting at `wall_start`; stopped and closed after
    the test."""
    hosts: list[VirtualHost] = []

    def start(
        db, plan=None, wall_start: float = VIRTUAL_EPOCH, home: Path | None = None, **options
    ) -> VirtualHost:
        if hasattr(db, "host_options"):  # a Located: its database and, on PostgreSQL, home
            home, db = db.host_options().get("home", home), db.db
        hosts.append(
            VirtualHost(db, HostOptions(**options), plan=plan, wall_start=wall_start, home=home)
        )
        return hosts[-1]

    yield start
    for host in hosts:
        host.close()
