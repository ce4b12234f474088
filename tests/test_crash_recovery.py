"""Crash recovery (issue 5, deliverable 4): the host is killed with SIGKILL at random
moments, many times over, and restarted; start-up voids every unfinished hand with every
stake returned and a recorded event, before any table plays again.

These are end-to-end tests: a real `gmtool house run --verbose` process (the `launch_host`
fixture's LiveHost reads its output line by line as it is written) and a real SIGKILL.
The moments are events, not times: each run is killed right after the k-th line the host
writes (`recovered: ...`, `hosting ...`, a hand started or settled), k drawn from a seeded
generator, so the kills land at different points of play and a slow machine only makes the
test slower.

Afterwards the store must still be whole: every player's coins equal their ledger, the
coins in play equal the coins ever granted, every chain verifies, nothing is left
running, and each voided hand's revealed seed matches its commitment.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import signal
import subprocess
from pathlib import Path

from helpers import clean_env as shared_env
from helpers import gm_identity, gmtool_command

from gmtool.audit.chain import verify_event_chains, verify_gm_log
from gmtool.audit.coins import verify_balances
from gmtool.store.db import connect

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "rules"
SHIPPED = ("lequ-showhand", "qq-showhand", "straight-flush", "suihua-three-card", "video-showhand")
KILLS = 20
KILL_SEED = 20_261_130
KILL_AFTER_LINES = (1, 40)  # a run is killed right after its k-th line, k drawn from these
HOST_ARGS = ("--tables", "8", "--speed", "100", "--chaos", "0.2")
HAND_STARTED = r"^hand \d+ started: "  # written from inside the running host (its signal
# handlers are set by then, so a SIGTERM stops it cleanly)
RECOVERED = re.compile(r"^recovered: (\d+) unfinished hand\(s\) voided.*: ([\d, ]+)$", re.M)


def clean_env() -> dict[str, str]:
    return shared_env(GMTOOL_USER="tester", PYTHONUNBUFFERED="1")


def gmtool(*args: str | Path, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*gmtool_command(), *map(str, args)],
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def running_hands(db: Path) -> set[int]:
    with connect(db) as store:
        return {r[0] for r in store.all("SELECT id FROM hands WHERE outcome = 'running'")}


def run_and_kill(launch_host, db: Path, after_lines: int, log: Path) -> str:
    """Start the host, SIGKILL it right after the `after_lines`-th line it writes; its
    output (also kept in `log`)."""
    host = launch_host(db, *HOST_ARGS)
    try:
        # (the host must still be playing when its k-th line comes: wait_until asserts it)
        host.wait_until(lambda: len(host.lines) >= after_lines)
        assert host.stop(signal.SIGKILL) == -signal.SIGKILL, host.output
    finally:
        host.kill()  # (if it is still running: only when a check above failed)
        log.write_text(host.output)
    return host.output


def recovered_ids(output: str) -> set[int] | None:
    match = RECOVERED.search(output)
    if match is None:
        return None
    ids = {int(x) for x in match.group(2).replace(",", " ").split()}
    assert len(ids) == int(match.group(1))
    return ids


def check_recovery(output: str, unfinished: set[int], db: Path) -> None:
    """If the host got past recovery, it voided exactly the hands left unfinished."""
    said = recovered_ids(output)
    if "hosting" in output:  # tables were built, so recovery had finished
        assert (said or set()) == unfinished, output
    if said is not None:
        assert said == unfinished, output
        with connect(db) as store:
            for hand_id in said:
                reason = store.one(
                    "SELECT json_extract(payload, '$.reason') FROM events WHERE "
                    "hand_id = ? AND type = 'hand_voided'",
                    (hand_id,),
                )
                assert reason and reason[0] == "crash_recovery", hand_id


def test_sigkill_at_random_moments_loses_no_coin(tmp_path: Path, launch_host) -> None:
    db = tmp_path / "crash.db"
    assert gmtool("db", "init", "--db", db).returncode == 0
    from gmtool.ops.deploy import deploy_profile

    with connect(db) as store:
        for profile in SHIPPED:
            deploy_profile(store, RULES / f"{profile}.toml", None, gm_identity("tester"))

    moments = random.Random(KILL_SEED)
    recovered_total = 0
    for kill in range(KILLS):
        unfinished = running_hands(db)
        output = run_and_kill(
            launch_host, db, moments.randint(*KILL_AFTER_LINES), tmp_path / f"run-{kill}.log"
        )
        assert "Traceback" not in output, output
        check_recovery(output, unfinished, db)
        recovered_total += len(recovered_ids(output) or ())

    # A last, clean run: it recovers what the last kill left, plays, and stops on SIGTERM.
    unfinished = running_hands(db)
    final = launch_host(db, *HOST_ARGS, "--grace", "0")
    try:
        final.wait_for_line(HAND_STARTED)
        assert final.stop(signal.SIGTERM) == 0, final.output
    finally:
        final.kill()
    assert "Traceback" not in final.output, final.output
    check_recovery(final.output, unfinished, db)
    recovered_total += len(recovered_ids(final.output) or ())
    assert recovered_total >= 5, "the kills should have interrupted hands in play"

    with connect(db) as store:
        assert list(verify_balances(store)) == []
        assert list(verify_event_chains(store)) == []
        assert list(verify_gm_log(store)) == []
        granted = store.one("SELECT SUM(delta) FROM ledger WHERE reason = 'opening_balance'")[0]
        in_play = store.one("SELECT SUM(coins) FROM players")[0]
        assert in_play == granted > 0
        assert (
            store.one("SELECT COALESCE(SUM(delta), 0) FROM ledger WHERE hand_id IS NOT NULL")[0]
            == 0
        )
        assert store.one("SELECT COUNT(*) FROM hands WHERE outcome = 'running'")[0] == 0
        hands = [dict(r) for r in store.all("SELECT * FROM hands ORDER BY id")]
        assert sum(h["outcome"] == "settled" for h in hands) > 0
        voided = [h for h in hands if h["outcome"] == "voided"]
        assert voided
        for hand in voided:
            events = store.all(
                "SELECT type, payload FROM events WHERE hand_id = ? ORDER BY seq", (hand["id"],)
            )
            assert [e["type"] for e in events].count("hand_voided") == 1, hand["id"]
            assert events[-1]["type"] == "hand_voided", hand["id"]
            assert json.loads(events[-1]["payload"])["stakes"] == "returned"
            assert (
                store.one("SELECT COUNT(*) FROM ledger WHERE hand_id = ?", (hand["id"],))[0] == 0
            ), hand["id"]  # stakes never left
        for hand in hands:
            if hand["seed"] is not None:
                assert (
                    hashlib.sha256(bytes.fromhex(hand["seed"])).hexdigest() == hand["commitment"]
                ), hand["id"]
        # with the key file beside the database, every voided hand's seed is revealed
        assert all(h["seed"] for h in voided)
    print(
        f"{KILLS} kills: {len(hands)} hands, {len(hands) - len(voided)} settled, "
        f"{recovered_total} voided by recovery"
    )


def test_an_empty_host_key_file_is_refused_not_used(tmp_path: Path) -> None:
    """The host key is created with O_EXCL and then written: a kill -9 between the two
    leaves an empty `<db>.key`. The host must not deal from an empty HMAC key (every deck
    would be public); it should refuse with one clear message (exit 2)."""
    db = tmp_path / "key.db"
    assert gmtool("db", "init", "--db", db).returncode == 0
    assert gmtool("deploy", RULES / "qq-showhand.toml", "--db", db).returncode == 0
    db.with_name(db.name + ".key").write_text("")
    run = gmtool(
        "house",
        "run",
        "--db",
        db,
        "--tables",
        "1",
        "--speed",
        "50",
        "--duration",
        "0.5",
        "--grace",
        "0",
    )
    assert "Traceback" not in run.stdout + run.stderr
    assert run.returncode == 2, run.stdout + run.stderr
    assert "key" in run.stderr
    with connect(db) as store:
        assert store.one("SELECT COUNT(*) FROM hands")[0] == 0


def test_a_second_host_leaves_a_running_hosts_hands_alone(tmp_path: Path, launch_host) -> None:
    """Start-up recovery voids hands left by a *crashed* host. A second `house run` on the
    same database while the first still plays must not take the first one's running
    hands for crash leftovers (it should refuse to start, or at least leave them alone),
    and the first host must go on and stop cleanly."""
    db = tmp_path / "two.db"
    assert gmtool("db", "init", "--db", db).returncode == 0
    from gmtool.ops.deploy import deploy_profile

    with connect(db) as store:
        for profile in ("qq-showhand", "lequ-showhand"):
            deploy_profile(store, RULES / f"{profile}.toml", None, gm_identity("tester"))
    first = launch_host(
        db,
        "--system",
        "qq-showhand",
        "--tables",
        "3",
        "--speed",
        "10",
        "--grace",
        "0",
        "--seed",
        "first",
    )
    try:
        first.wait_for_line(HAND_STARTED)  # the first host is playing a hand
        second = gmtool(
            "house",
            "run",
            "--db",
            db,
            "--system",
            "lequ-showhand",
            "--tables",
            "1",
            "--speed",
            "10",
            "--duration",
            "1",
            "--grace",
            "0",
        )
        assert first.running, first.output  # it goes on (it has no --duration: it plays on)
        first_code = first.stop(signal.SIGTERM)
    finally:
        first.kill()
    assert "Traceback" not in second.stdout + second.stderr
    assert second.returncode in (0, 2), second.stdout + second.stderr
    output = first.output
    assert "Traceback" not in output and first_code == 0, output
    with connect(db) as store:
        stolen = store.all(
            "SELECT hand_id FROM events WHERE type = 'hand_voided' AND "
            "json_extract(payload, '$.reason') = 'crash_recovery'"
        )
        assert [r[0] for r in stolen] == [], second.stdout
        assert list(verify_event_chains(store)) == [] and list(verify_balances(store)) == []
