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

Each test runs on both store backends (`deployed_store`, tests/backends.py). On SQLite the
next host's start recovers the store (it holds the host lock: every running hand is a crash
leftover). On PostgreSQL a host's start recovers only the tables it takes: a killed host's
tables are taken over, their running hands voided, once its leases expire (`--lease 1`),
at the next host's start or at one of its heartbeats.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import signal
import subprocess
from pathlib import Path

from backends import Located, deployed_store_fixture, pg_server_fixture  # noqa: F401
from helpers import clean_env, gmtool_command

from gmtool.audit.chain import verify_event_chains, verify_gm_log
from gmtool.audit.coins import verify_balances

KILLS = {"sqlite": 20, "postgresql": 10}  # PostgreSQL's run: half as many (CI's time; its
# hosts' starts cost more: a new seed key each, leases taken and expired)
KILL_SEED = 20_261_130
KILL_AFTER_LINES = (1, 40)  # a run is killed right after its k-th line, k drawn from these
HOST_ARGS = ("--tables", "8", "--speed", "100", "--chaos", "0.2")
HAND_STARTED = r"^hand \d+ started: "  # written from inside the running host (its signal
# handlers are set by then, so a SIGTERM stops it cleanly)
RECOVERED = re.compile(r"^recovered: (\d+) unfinished hand\(s\) voided.*: ([\d, ]+)$", re.M)
# PostgreSQL: a dead host's table taken over, its running hand voided (house/takeover.py)
TOOK = re.compile(
    r"^took table \S+ over from host \S+, which stopped renewing its lease(.*)$", re.M
)
TOOK_VOIDED = re.compile(r"^; hand ([\d, ]+) voided, stakes returned$")


def gmtool(*args: str | Path, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*gmtool_command(), *map(str, args)],
        # (no $GMTOOL_HOME: `house run` takes it for --home, which a SQLite store refuses)
        env=clean_env(GMTOOL_USER="tester", PYTHONUNBUFFERED="1"),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def host_args(located: Located) -> tuple[str, ...]:
    """What `house run` needs besides `--db` on this backend (PostgreSQL: its home, and
    short leases, so the next host takes a killed one's tables over within a second)."""
    return (*located.host_args(), *(("--lease", "1") if located.postgres else ()))


def running_hands(located: Located) -> set[int]:
    return {r[0] for r in located.rows("SELECT id FROM hands WHERE outcome = 'running'")}


def run_and_kill(launch_host, located: Located, after_lines: int, log: Path) -> str:
    """Start the host, SIGKILL it right after the `after_lines`-th line it writes; its
    output (also kept in `log`)."""
    host = launch_host(located.db, *HOST_ARGS, *host_args(located))
    try:
        # (the host must still be playing when its k-th line comes: wait_until asserts it)
        host.wait_until(lambda: len(host.lines) >= after_lines)
        assert host.stop(signal.SIGKILL) == -signal.SIGKILL, host.output
    finally:
        host.kill()  # (if it is still running: only when a check above failed)
        log.write_text(host.output)
    return host.output


def recovered_ids(output: str, located: Located) -> set[int] | None:
    """The hands a host says it voided as a dead host's leftovers (None: it said none)."""
    if located.postgres:  # one line for each table taken over
        voided = [TOOK_VOIDED.match(tail) for tail in TOOK.findall(output)]
        ids = {int(x) for m in voided if m for x in m.group(1).replace(",", " ").split()}
        return ids or None
    match = RECOVERED.search(output)
    if match is None:
        return None
    ids = {int(x) for x in match.group(2).replace(",", " ").split()}
    assert len(ids) == int(match.group(1))
    return ids


def void_reason(located: Located, hand_id: int) -> str | None:
    payloads = located.rows(
        "SELECT payload FROM events WHERE hand_id = ? AND type = 'hand_voided'", (hand_id,)
    )
    return json.loads(payloads[0][0]).get("reason") if payloads else None


def check_recovery(output: str, unfinished: set[int], located: Located) -> None:
    """The host voided, as crash leftovers, only hands left unfinished before it started:
    on SQLite exactly those, if it got past recovery; on PostgreSQL those of the tables it
    took over (a table whose lease had not yet expired is taken at a later heartbeat, or
    by the next host)."""
    said = recovered_ids(output, located)
    if located.postgres:
        assert (said or set()) <= unfinished, output
    else:
        if "hosting" in output:  # tables were built, so recovery had finished
            assert (said or set()) == unfinished, output
        if said is not None:
            assert said == unfinished, output
    for hand_id in said or ():
        assert void_reason(located, hand_id) == "crash_recovery", hand_id


def test_sigkill_at_random_moments_loses_no_coin(
    tmp_path: Path, launch_host, deployed_store: Located
) -> None:
    located = deployed_store
    kills = KILLS[located.backend]
    moments = random.Random(KILL_SEED)
    recovered_total = 0
    for kill in range(kills):
        unfinished = running_hands(located)
        output = run_and_kill(
            launch_host, located, moments.randint(*KILL_AFTER_LINES), tmp_path / f"run-{kill}.log"
        )
        assert "Traceback" not in output, output
        check_recovery(output, unfinished, located)
        recovered_total += len(recovered_ids(output, located) or ())

    # A last, clean run: it recovers what the last kill left (PostgreSQL: it takes every
    # killed host's table over), plays, and stops on SIGTERM.
    unfinished = running_hands(located)
    final = launch_host(located.db, *HOST_ARGS, *host_args(located), "--grace", "0")
    try:
        final.wait_for_line(HAND_STARTED)
        final.wait_until(lambda: not unfinished & running_hands(located))
        assert final.stop(signal.SIGTERM) == 0, final.output
    finally:
        final.kill()
    assert "Traceback" not in final.output, final.output
    check_recovery(final.output, unfinished, located)
    # (every hand the kills left ended while it played: it voided them all, none other)
    assert (recovered_ids(final.output, located) or set()) == unfinished, final.output
    recovered_total += len(unfinished)
    assert recovered_total >= 5, "the kills should have interrupted hands in play"

    with located.open() as store:
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
        # with the seed keys beside the database (PostgreSQL: each host's in the home),
        # every voided hand's seed is revealed
        assert all(h["seed"] for h in voided)
    print(
        f"{kills} kills: {len(hands)} hands, {len(hands) - len(voided)} settled, "
        f"{recovered_total} voided by recovery"
    )


def host_key_file(located: Located) -> Path:
    """The store's host key file: `<db>.key` beside a SQLite file; on PostgreSQL in the
    hosts' home, named after the database (`home/<database>.key`)."""
    if located.postgres:
        return located.home / f"{located.db.rsplit('/', 1)[1]}.key"
    return Path(located.db).with_name(Path(located.db).name + ".key")


def test_an_empty_host_key_file_is_refused_not_used(deployed_store: Located) -> None:
    """The host key is created with O_EXCL and then written: a kill -9 between the two
    leaves an empty `<db>.key`. The host must not deal from an empty HMAC key (every deck
    would be public); it should refuse with one clear message (exit 2)."""
    located = deployed_store
    host_key_file(located).write_text("")
    run = gmtool(
        "house",
        "run",
        "--db",
        located.db,
        *located.host_args(),
        "--system",
        "qq-showhand",
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
    assert located.one("SELECT COUNT(*) FROM hands") == 0
    assert located.one("SELECT COUNT(*) FROM tables") == 0  # refused before anything changed


def test_a_second_host_leaves_a_running_hosts_hands_alone(
    launch_host, deployed_store: Located
) -> None:
    """Start-up recovery voids hands left by a *crashed* host. A second `house run` on the
    same database while the first still plays must not take the first one's running
    hands for crash leftovers (SQLite: it should refuse to start, or at least leave them
    alone; PostgreSQL: it plays other tables than the first one's, whose leases are
    renewed), and the first host must go on and stop cleanly."""
    located = deployed_store
    first = launch_host(
        located.db,
        *located.host_args(),
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
            located.db,
            *located.host_args(),
            "--system",
            "qq-showhand",
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
    if located.postgres:  # the first host's tables are passed over, the start goes on
        assert second.returncode == 0, second.stdout + second.stderr
        assert "another live host plays them" in second.stdout, second.stdout
    else:
        assert second.returncode in (0, 2), second.stdout + second.stderr
    output = first.output
    assert "Traceback" not in output and first_code == 0, output
    stolen = [
        hand
        for (hand,) in located.rows("SELECT hand_id FROM events WHERE type = 'hand_voided'")
        if void_reason(located, hand) == "crash_recovery"
    ]
    assert stolen == [], second.stdout
    with located.open() as store:
        assert list(verify_event_chains(store)) == [] and list(verify_balances(store)) == []
