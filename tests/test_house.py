"""The table host as operators run it: `gmtool house run` in a real subprocess on a real
SQLite file, with other processes reading the store, issuing GM commands and deploying
profiles while it plays (issue 5; RULES G2, G4, G5).

Every wait is bounded; a host still running when a test ends is killed.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

import pytest

from gmtool.audit.chain import verify_balances, verify_event_chains
from gmtool.store import gm
from gmtool.store.db import connect
from helpers import clean_env as shared_env, gmtool_command

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "rules"
SHIPPED = ("lequ-showhand", "qq-showhand", "straight-flush", "suihua-three-card",
           "video-showhand")
ESCAPE_POLICY = {"qq-showhand": "forfeit_to_banker", "lequ-showhand": "fold"}
CLI_TIMEOUT_S = 60
HOST_EXIT_TIMEOUT_S = 40



def clean_env() -> dict[str, str]:
    return shared_env(GMTOOL_USER="tester", PYTHONUNBUFFERED="1")


def gmtool(*args: str | Path, expect: int = 0) -> subprocess.CompletedProcess:
    run = subprocess.run([*gmtool_command(), *map(str, args)], env=clean_env(),
                         capture_output=True, text=True, timeout=CLI_TIMEOUT_S)
    assert "Traceback" not in run.stdout + run.stderr, run.stdout + run.stderr
    assert run.returncode == expect, (run.returncode, run.stdout, run.stderr)
    return run


def wait_until(predicate: Callable[[], object], timeout: float, what: str,
               interval: float = 0.05):
    """Poll `predicate` until it returns something truthy; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def seconds_between(start: str, end: str) -> float:
    return (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()


class HostProcess:
    """`gmtool house run` in a subprocess, its output in a file (no pipe can fill up)."""

    def __init__(self, db: Path, *args: str) -> None:
        self.db = db
        self.log_path = db.with_name(db.name + f".host-{time.monotonic_ns()}.log")
        self._log = open(self.log_path, "w")
        self.proc = subprocess.Popen([*gmtool_command(), "house", "run", "--db", str(db),
                                      *args], stdout=self._log, stderr=subprocess.STDOUT,
                                     env=clean_env())

    def __enter__(self) -> HostProcess:
        return self

    def __exit__(self, *exc) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self._log.close()

    def output(self) -> str:
        return self.log_path.read_text()

    def wait(self, timeout: float = HOST_EXIT_TIMEOUT_S) -> int:
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise AssertionError(f"host still running after {timeout} s:\n{self.output()}")

    def stop(self, signum: int = signal.SIGTERM, timeout: float = HOST_EXIT_TIMEOUT_S) -> int:
        self.proc.send_signal(signum)
        return self.wait(timeout)

    def alive(self) -> bool:
        return self.proc.poll() is None


def store_with(tmp_path: Path, profiles=SHIPPED) -> Path:
    db = tmp_path / "house.db"
    gmtool("db", "init", "--db", db)
    for profile in profiles:
        gmtool("deploy", RULES / f"{profile}.toml", "--db", db)
    return db


def query(db: Path, sql: str, params: tuple = ()) -> list[dict]:
    with connect(db) as store:
        return [dict(r) for r in store.all(sql, params)]


def assert_store_consistent(db: Path) -> None:
    with connect(db) as store:
        assert list(verify_event_chains(store)) == []
        assert list(verify_balances(store)) == []
        assert store.one("SELECT COUNT(*) FROM hands WHERE outcome = 'running'")[0] == 0
        granted = store.one("SELECT COALESCE(SUM(delta), 0) FROM ledger WHERE reason = "
                            "'opening_balance'")[0]
        assert store.one("SELECT COALESCE(SUM(coins), 0) FROM players")[0] == granted


# -- every shipped system, read by another process while it plays ----------------------------


READER = textwrap.dedent("""
    import json, sqlite3, sys, time
    from pathlib import Path
    from gmtool.store.db import connect

    path, seconds = Path(sys.argv[1]), float(sys.argv[2])
    reads, errors, end = 0, [], time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            with connect(path) as store:  # how the console opens the store
                store.all("SELECT outcome, COUNT(*) FROM hands GROUP BY outcome")
                store.all("SELECT id, live FROM tables")
                store.all("SELECT * FROM events ORDER BY id DESC LIMIT 20")
                store.one("SELECT SUM(coins) FROM players")
            conn = sqlite3.connect(path)  # a plain tool with sqlite3's default timeout
            try:
                conn.execute("SELECT COUNT(*) FROM ledger").fetchone()
                conn.execute("SELECT * FROM hands ORDER BY id DESC LIMIT 5").fetchall()
            finally:
                conn.close()
            reads += 1
        except Exception as error:
            errors.append(f"{type(error).__name__}: {error}")
    print(json.dumps({"reads": reads, "errors": errors[:20], "error_count": len(errors)}))
""")


def test_host_runs_every_shipped_system_while_another_process_reads(tmp_path: Path) -> None:
    db = store_with(tmp_path)
    with HostProcess(db, "--tables", "8", "--speed", "200", "--seed", "x",
                     "--duration", "7", "--grace", "3") as host:
        wait_until(lambda: query(db, "SELECT 1 FROM hands LIMIT 1"), 20, "a first hand")
        reader = subprocess.run([sys.executable, "-c", READER, str(db), "4"],
                                capture_output=True, text=True, timeout=60, env=clean_env())
        assert reader.returncode == 0, reader.stderr
        reads = json.loads(reader.stdout)
        assert host.wait() == 0, host.output()
        output = host.output()
    assert reads["error_count"] == 0, reads["errors"]
    assert reads["reads"] >= 20
    assert "database is locked" not in output and "Traceback" not in output

    tables = query(db, "SELECT id, profile_id, game FROM tables")
    assert len(tables) == 8
    assert {t["profile_id"] for t in tables} == set(SHIPPED)
    assert {t["game"] for t in tables} == {"stud5", "three-card"}
    settled = {r["table_id"]: r["n"] for r in query(
        db, "SELECT table_id, COUNT(*) AS n FROM hands WHERE outcome = 'settled' "
            "GROUP BY table_id")}
    assert set(settled) == {t["id"] for t in tables}, (settled, output)
    # every settled hand records its config (G4) and its revealed seed
    assert query(db, "SELECT id FROM hands WHERE outcome = 'settled' AND (seed IS NULL OR "
                     "config_id NOT IN (SELECT config_id FROM configs))") == []
    assert_store_consistent(db)


# -- GM kick from another process (G2) --------------------------------------------------------


def _running_targets(db: Path, profile: str, coins_only: bool) -> list[tuple[str, str]]:
    """(table, player) pairs: a player still in a running hand, from the public snapshot."""
    out = []
    for row in query(db, "SELECT id, tier, live FROM tables WHERE profile_id = ? AND "
                         "status = 'open'", (profile,)):
        if coins_only and row["tier"] == "training":
            continue
        live = json.loads(row["live"]) if row["live"] else {}
        running = live.get("running")
        if not running or running.get("over"):
            continue
        players = [p["name"] for p in running["players"] if not p["folded"]]
        if len(players) >= 2 and all(p in live.get("seated", []) for p in players):
            out.extend((row["id"], p) for p in players)
    return out


def _kick_and_wait(db: Path, table_id: str, player: str) -> dict:
    with connect(db) as store:  # the test's own connection: a second writer
        command_id = gm.enqueue(store, "kick", table_id, player, "test kick", "tester")
    command = wait_until(lambda: _acked(db, command_id), 5, f"acknowledgement of {command_id}",
                         interval=0.02)
    return command


def _acked(db: Path, command_id: int) -> dict | None:
    with connect(db) as store:
        command = gm.command(store, command_id)
    return command if command["status"] != "pending" else None


def _hand_of_kick(db: Path, table_id: str, player: str) -> int:
    rows = query(db, "SELECT hand_id FROM events WHERE table_id = ? AND type = 'kick' AND "
                     "json_extract(payload, '$.player') = ? ORDER BY seq DESC LIMIT 1",
                 (table_id, player))
    assert rows and rows[0]["hand_id"] is not None, (table_id, player)
    return rows[0]["hand_id"]


def _kick_a_running_hand(db: Path, profile: str, host: HostProcess,
                         attempts: int = 8) -> tuple[dict, str, str]:
    """Kick players in running hands until one kick lands during a hand."""
    latencies = []
    for _ in range(attempts):
        targets = wait_until(lambda: _running_targets(db, profile, coins_only=True), 20,
                             f"a running {profile} hand with coins")
        table_id, player = targets[0]
        command = _kick_and_wait(db, table_id, player)
        latency = seconds_between(command["issued_at"], command["acked_at"])
        latencies.append(latency)
        assert latency < 1.0, (latency, command, host.output())
        if command["status"] == "done" and command["outcome"].get("during_hand"):
            return command, table_id, player
        assert host.alive(), host.output()
    raise AssertionError(f"no kick hit a running hand in {attempts} attempts "
                         f"(latencies {latencies})")


def test_g2_kick_from_another_process_forfeits_to_the_banker_qq(tmp_path: Path) -> None:
    """G2: a GM kick during a running hand is an escape under the profile's policy (S19);
    qq-showhand's policy forfeit_to_banker: the escapee pays the pot, the banker wins it."""
    db = store_with(tmp_path, ["qq-showhand"])
    with HostProcess(db, "--system", "qq-showhand", "--tables", "3", "--speed", "4",
                     "--seed", "kick-qq", "--grace", "1") as host:
        command, table_id, player = _kick_a_running_hand(db, "qq-showhand", host)
        outcome = command["outcome"]
        assert outcome["ok"] and outcome["kicked"] == player
        assert outcome["escape_policy"] == "forfeit_to_banker"
        settlement = outcome["settlement"]
        assert settlement is not None, outcome  # forfeit ends the hand at once
        deltas = {e["player"]: e["delta"] for e in settlement["entries"]}
        banker = settlement["winners"][0]
        assert banker != player
        assert deltas[player] < 0 and deltas[banker] == -deltas[player] > 0
        assert all(d == 0 for p, d in deltas.items() if p not in (player, banker)), deltas
        # and the store says the same: the hand is settled, its ledger rows match
        hand_id = _hand_of_kick(db, table_id, player)
        hand = query(db, "SELECT outcome FROM hands WHERE id = ?", (hand_id,))[0]
        assert hand["outcome"] == "settled"
        rows = {r["player"]: r["delta"] for r in query(
            db, "SELECT player, delta FROM ledger WHERE hand_id = ?", (hand_id,))}
        assert rows == {p: d for p, d in deltas.items() if d}
        # a kick for a table this host does not run is refused, also within a second
        failed = _kick_and_wait(db, "no-such-table", "bot-001")
        assert failed["status"] == "failed" and not failed["outcome"]["ok"]
        assert seconds_between(failed["issued_at"], failed["acked_at"]) < 1.0
        # a GM close of a table with a running hand voids it (stakes returned)
        table_id = wait_until(lambda: _running_targets(db, "qq-showhand", coins_only=False),
                              20, "another running hand")[0][0]
        with connect(db) as store:
            close_id = gm.enqueue(store, "close", table_id, None, "test close", "tester")
        closed = wait_until(lambda: _acked(db, close_id), 5, "the close acknowledgement",
                            interval=0.02)
        assert seconds_between(closed["issued_at"], closed["acked_at"]) < 1.0
        assert closed["status"] == "done" and closed["outcome"]["closed"] == table_id
        voided = closed["outcome"]["voided_hand"]
        if voided is not None:
            hand = query(db, "SELECT table_id, outcome FROM hands WHERE id = ?", (voided,))[0]
            assert hand == {"table_id": table_id, "outcome": "voided"}
            assert query(db, "SELECT id FROM ledger WHERE hand_id = ?", (voided,)) == []
        assert query(db, "SELECT status FROM tables WHERE id = ?", (table_id,)) == [
            {"status": "closed"}]
        assert host.alive(), host.output()
        assert host.stop(signal.SIGTERM) == 0, host.output()
    assert query(db, "SELECT status FROM tables WHERE id = ?", (table_id,)) == [
        {"status": "closed"}]
    assert_store_consistent(db)


def test_g2_kick_from_another_process_folds_the_player_lequ(tmp_path: Path) -> None:
    """G2 with lequ-showhand's policy fold (S19/L13): the kicked player is folded and
    forfeits what they put in the pot."""
    db = store_with(tmp_path, ["lequ-showhand"])
    with HostProcess(db, "--system", "lequ-showhand", "--tables", "2", "--speed", "8",
                     "--seed", "kick-lequ", "--grace", "1") as host:
        command, table_id, player = _kick_a_running_hand(db, "lequ-showhand", host)
        outcome = command["outcome"]
        assert outcome["ok"] and outcome["escape_policy"] == "fold"
        hand_id = _hand_of_kick(db, table_id, player)
        events = query(db, "SELECT type, payload FROM events WHERE hand_id = ? ORDER BY seq",
                       (hand_id,))
        kinds = [(e["type"], json.loads(e["payload"])) for e in events]
        kick_at = next(i for i, (t, p) in enumerate(kinds) if t == "kick")
        assert any(t == "fold" and p.get("player") == player and p.get("cause") == "kick"
                   for t, p in kinds[kick_at:]), kinds[kick_at:]
        assert not any(t == "hand_ended" and p.get("reason") == "escape" for t, p in kinds)
        # the hand goes on without them (or ends if one player is left); wait for its end
        wait_until(lambda: query(db, "SELECT 1 FROM hands WHERE id = ? AND outcome != "
                                     "'running'", (hand_id,)), 30, f"the end of hand {hand_id}")
        assert host.stop(signal.SIGTERM) == 0, host.output()
    hand = query(db, "SELECT outcome, winners FROM hands WHERE id = ?", (hand_id,))[0]
    if hand["outcome"] == "settled":
        assert player not in json.loads(hand["winners"])
        ledger_rows = query(db, "SELECT delta, reason FROM ledger WHERE hand_id = ? AND "
                                "player = ?", (hand_id, player))
        assert [r["delta"] for r in ledger_rows] and sum(r["delta"] for r in ledger_rows) < 0
    assert_store_consistent(db)


# -- G5: a deployment reaches each table at its next hand ------------------------------------


def _changed_profile(tmp_path: Path, profile: str, key: str, value: str) -> Path:
    changed = tmp_path / f"{profile}.toml"
    shutil.copy(RULES / f"{profile}.toml", changed)
    gmtool("rules", "set", changed, key, value)
    return changed


def _replays(store, hand: dict) -> bool:
    """The hand's recorded inputs, replayed under its recorded config, give its events."""
    from gmtool.engine.events import Event
    from gmtool.engine.hand import Seat
    from gmtool.engine.play import replay, seeded_source, start_hand
    from gmtool.store.configs import load_config

    config = load_config(store, hand["config_id"])
    seats = [Seat(s["player"], s["coins"]) for s in json.loads(hand["seats"])]
    ante = hand["ante"] if config["betting"].get("style") == "owner_ante" else None
    fresh = start_hand(config, hand["tier"], seats, hand["banker"],
                       seeded_source(config, bytes.fromhex(hand["seed"])), ante=ante)
    recorded = [Event(r["type"], json.loads(r["payload"])) for r in store.all(
        "SELECT type, payload FROM events WHERE hand_id = ? ORDER BY seq", (hand["id"],))]
    return [e.as_json() for e in replay(fresh, recorded)] == [e.as_json() for e in recorded]


def test_g5_a_profile_deployed_while_hands_run_applies_at_each_tables_next_hand(
        tmp_path: Path) -> None:
    """G5: a profile change takes effect at the next hand of each table, never mid-hand
    (checked by the config_id recorded with every hand, G4)."""
    profiles = ["qq-showhand", "lequ-showhand"]
    db = store_with(tmp_path, profiles)
    changed = [_changed_profile(tmp_path, "qq-showhand", "tiers.junior.street_caps",
                                "[300, 500, 1000, 1000]"),
               _changed_profile(tmp_path, "lequ-showhand", "owner_ante.min_holding_antes",
                                "100")]
    old = {r["profile_id"]: r["config_id"] for r in query(
        db, "SELECT profile_id, config_id FROM deployments")}

    def tables_with_hands(after: str = "") -> set[str]:
        return {r["table_id"] for r in query(
            db, "SELECT DISTINCT table_id FROM hands WHERE started_at > ?", (after,))}

    with HostProcess(db, "--system", "qq-showhand", "--system", "lequ-showhand",
                     "--tables", "6", "--speed", "100", "--seed", "g5", "--grace", "2") as host:
        table_ids = wait_until(lambda: {r["id"] for r in query(db, "SELECT id FROM tables")},
                               20, "tables")
        wait_until(lambda: tables_with_hands() == table_ids, 30, "a hand on every table")
        deploy_started = utc_now()
        for path in changed:
            gmtool("deploy", path, "--db", db)
        deployed = utc_now()
        wait_until(lambda: tables_with_hands(deployed) == table_ids, 40,
                   "a hand after the deployment on every table")
        assert host.stop(signal.SIGTERM) == 0, host.output()

    new = {r["profile_id"]: r["config_id"] for r in query(
        db, "SELECT profile_id, config_id, deployed_at FROM deployments WHERE deployed_at >= ?",
        (deploy_started,))}
    deployed_at = {r["profile_id"]: r["deployed_at"] for r in query(
        db, "SELECT profile_id, deployed_at FROM deployments WHERE deployed_at >= ?",
        (deploy_started,))}
    assert set(new) == set(profiles) and all(new[p] != old[p] for p in profiles)

    with connect(db) as store:
        for table_id in sorted(table_ids):
            profile = store.one("SELECT profile_id FROM tables WHERE id = ?", (table_id,))[0]
            hands = [dict(r) for r in store.all(
                "SELECT * FROM hands WHERE table_id = ? ORDER BY number", (table_id,))]
            sequence = [h["config_id"] for h in hands]
            assert set(sequence) <= {old[profile], new[profile]}, (table_id, sequence)
            switches = sum(a != b for a, b in zip(sequence, sequence[1:]))
            assert switches <= 1 and sequence[0] == old[profile], (table_id, sequence)
            owner_table = profile == "lequ-showhand"  # see the owner-ante test below
            for hand in hands:
                if hand["started_at"] < deployed_at[profile]:
                    assert hand["config_id"] == old[profile], (table_id, hand["number"])
                if hand["started_at"] > deployed and not owner_table:
                    assert hand["config_id"] == new[profile], (table_id, hand["number"])
            if not owner_table:
                assert switches == 1, (table_id, sequence)
                started = store.one("SELECT payload FROM events WHERE hand_id = ? AND "
                                    "type = 'hand_started'", (hand["id"],))
                assert json.loads(started[0])["config_id"] == hand["config_id"]
                if hand["outcome"] == "settled":
                    assert _replays(store, hand), (table_id, hand["number"])
    assert_store_consistent(db)


def test_g5_an_owner_ante_table_switches_at_its_next_hand(tmp_path: Path) -> None:
    """G5 on an owner-ante table (lequ): a hand that starts after a deployment committed
    plays the deployed config, also when the deployment lands while the bots are about to
    press start (the countdown after everyone agreed, or "continue" after a hand)."""
    from gmtool.rules.compile import compile_file
    from gmtool.store import configs

    db = store_with(tmp_path, ["lequ-showhand"])
    original = RULES / "lequ-showhand.toml"
    changed = _changed_profile(tmp_path, "lequ-showhand", "owner_ante.min_holding_antes", "100")
    versions = [(compile_file(path), path.read_text(encoding="utf-8"))
                for path in (changed, original)]
    checked = []
    with HostProcess(db, "--system", "lequ-showhand", "--tables", "1", "--speed", "20",
                     "--seed", "g5-owner", "--grace", "1") as host, connect(db) as store:
        for attempt in range(3):
            def about_to_start():
                row = store.one("SELECT live FROM tables")
                live = json.loads(row[0]) if row and row[0] else {}
                return live.get("phase") in ("countdown", "continue")

            wait_until(about_to_start, 30, "a table about to start a hand", interval=0.002)
            compiled, text = versions[attempt % 2]
            configs.deploy(store, compiled, text, None, "tester")
            deployed_at = store.one("SELECT deployed_at FROM deployments ORDER BY id DESC "
                                    "LIMIT 1")[0]
            hand = wait_until(lambda: store.one(
                "SELECT number, config_id, started_at FROM hands WHERE started_at > ? ORDER BY "
                "number LIMIT 1", (deployed_at,)), 30, "the next hand")
            checked.append((attempt, hand["number"], hand["config_id"][:12],
                            compiled["config_id"][:12]))
            assert hand["config_id"] == compiled["config_id"], checked
            assert host.alive(), host.output()
        assert host.stop(signal.SIGTERM) == 0, host.output()
    assert_store_consistent(db)


# -- a clean stop -------------------------------------------------------------------------------


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_signal_stops_the_host_cleanly(tmp_path: Path, signum: int) -> None:
    """Running hands finish within the grace period or are voided (stakes returned); the
    host says which, and exits 0 with no hand left running."""
    db = store_with(tmp_path, ["qq-showhand", "suihua-three-card"])
    with HostProcess(db, "--tables", "6", "--speed", "10", "--seed", "stop",
                     "--grace", "0.5") as host:
        wait_until(lambda: len(query(db, "SELECT id FROM hands WHERE outcome = 'running'")) >= 3,
                   30, "three running hands")
        running = {r["id"]: r["table_id"] for r in query(
            db, "SELECT id, table_id FROM hands WHERE outcome = 'running'")}
        assert host.stop(signum) == 0, host.output()
        output = host.output()
    assert "Traceback" not in output
    assert "stopping" in output and "stopped:" in output
    voided = {r["id"] for r in query(db, "SELECT h.id FROM hands h JOIN events e ON "
                                         "e.hand_id = h.id AND e.type = 'hand_voided' WHERE "
                                         "h.outcome = 'voided' AND json_extract(e.payload, "
                                         "'$.reason') = 'host_stopped'")}
    said_voided: set[int] = set()
    said_finished: set[str] = set()
    for line in output.splitlines():
        if line.startswith("voided on stop"):
            said_voided = {int(x) for x in line.split("hand(s)")[1].replace(",", " ").split()}
        if line.startswith("finished their hand before stopping:"):
            said_finished = {x.strip() for x in line.split(":", 1)[1].split(",")}
    assert said_voided == voided, output
    assert voided or said_finished, output
    for hand_id, table_id in running.items():  # each hand running at the stop is accounted for
        outcome = query(db, "SELECT outcome FROM hands WHERE id = ?", (hand_id,))[0]["outcome"]
        assert outcome in ("settled", "voided")
        if outcome == "voided":
            assert hand_id in said_voided
    for table_id in said_finished:
        last = query(db, "SELECT outcome FROM hands WHERE table_id = ? ORDER BY number DESC "
                         "LIMIT 1", (table_id,))[0]
        assert last["outcome"] == "settled", table_id
    assert_store_consistent(db)
