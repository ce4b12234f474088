"""Hosts on a PostgreSQL store (issue 26): each table is its host's by a lease; a host
killed with SIGKILL loses its tables to a live one, which voids the hands that were
running, every stake returned; a host held up past its lease writes nothing more.

Real `gmtool house run` processes on a real database of the test server (an unreachable
server fails these tests, never skips them), real `kill -9`. The store is the session's
deployed SQLite store moved there with `gmtool db copy` (GM writes on PostgreSQL are a
later step). Waits are for what the hosts say, never for a time.
"""

from __future__ import annotations

import json
import random
import re
import signal
from pathlib import Path

import pytest
from backends import StepClock, pg_server_fixture, shared_fixture  # noqa: F401
from helpers import until
from postgres import HOSTING, one, rows

from gmtool.store import ledger, table_leases
from gmtool.store import tables as table_store
from gmtool.store.db import open_location
from gmtool.store.hands import TableLog, begin_hand, void_hand
from gmtool.store.stakes import NotCovered, free_coins
from gmtool.store.table_leases import LeaseLost

TOOK = re.compile(r"^took table (\S+) over from host (\S+), which stopped", re.M)


def _running(url: str) -> set[int]:
    return {row[0] for row in rows(url, "SELECT id FROM hands WHERE outcome = 'running'")}


def _coins_conserved(url: str) -> None:
    granted = one(url, "SELECT SUM(delta) FROM ledger WHERE reason = 'opening_balance'")
    assert one(url, "SELECT SUM(coins) FROM players") == granted > 0
    assert one(url, "SELECT COALESCE(SUM(delta), 0) FROM ledger WHERE hand_id IS NOT NULL") == 0
    assert one(url, "SELECT MIN(coins) FROM players") >= 0
    assert one(url, "SELECT COUNT(*) FROM hands WHERE outcome = 'running'") == 0


def _audit_clean(gm, url: str, home: Path) -> dict:
    name = url.rsplit("/", 1)[1]
    run = gm("audit", "--db", url, "--key", home / f"{name}.checkpoint.pub", "--json")
    report = json.loads(run.stdout)
    assert report["problems"] == [] and run.stderr == "", run.stdout + run.stderr
    return report


def _tables(host) -> list[str]:
    found = until(lambda: HOSTING.search(host.output), "the host's tables")
    return found.group(1).split(", ")


def test_a_host_plays_a_postgresql_store_from_its_home(shared, gm, start_host) -> None:
    url, home = shared
    host = start_host(url, "--home", home, "--tables", "5", "--hands", "15", "--speed", "100")
    assert host.wait() == 0, host.output
    assert len(_tables(host)) == 5
    name = url.rsplit("/", 1)[1]
    assert {p.name for p in home.iterdir()} >= {
        f"{name}.checkpoint.key",
        f"{name}.checkpoint.pub",
        f"{name}.witness",
    }
    # the host's own seed key (each host of a shared store deals with one of its own)
    (seed_key,) = home.glob(f"{name}.seed-*.key")
    assert seed_key.stat().st_mode & 0o077 == 0 and not (home / f"{name}.seed.key").exists()
    # its leases were given back at its clean stop: the next host takes the same tables
    assert one(url, "SELECT COUNT(*) FROM table_leases WHERE host <> ''") == 0
    _coins_conserved(url)
    report = _audit_clean(gm, url, home)
    assert report["hands_checked"] >= 15


def test_a_killed_hosts_tables_are_taken_over(shared, gm, start_host) -> None:
    url, home = shared
    args = ("--home", home, "--tables", "3", "--speed", "20", "--lease", "5")
    first = start_host(url, *args)
    mine = _tables(first)
    until(lambda: first.output.count("started:") >= 3, "hands running at the first host")
    second = start_host(url, *args)
    theirs = _tables(second)
    assert not set(mine) & set(theirs), (mine, theirs)  # another host's tables passed over
    assert "another live host plays them" in second.output
    until(
        lambda: one(url, "SELECT COUNT(*) FROM hands WHERE outcome = 'running'") >= 3,
        "hands running at both hosts",
    )
    assert first.stop(signal.SIGKILL) == -signal.SIGKILL
    taken = until(
        lambda: len(TOOK.findall(second.output)) == len(mine) and TOOK.findall(second.output),
        "the second host taking every table of the killed one over",
    )
    assert sorted(table for table, _ in taken) == sorted(mine), (mine, theirs, second.output)
    until(lambda: second.output.count("settled") >= 10, "the second host playing on")
    assert second.stop() == 0, second.output
    _coins_conserved(url)
    voided = one(
        url,
        "SELECT COUNT(*) FROM events WHERE type = 'hand_voided' "
        "AND payload LIKE '%crash_recovery%'",
    )
    assert voided >= 1, second.output  # the killed host's running hands, voided
    _audit_clean(gm, url, home)


def test_a_host_past_its_lease_writes_nothing_more(shared) -> None:
    """The fence: once another host took the table over, the first one's writes for it
    fail in their own transaction and leave the table's chain as its successor has it."""
    url, _ = shared
    clock = StepClock()
    with open_location(url, clock=clock, postgres=True) as store:
        table_store.open_table(store, "t-1", "lequ-showhand", "table", "stud5", 1)
        first = table_leases.take(store, "t-1", "first", ttl=5.0)
        assert first is not None
        log = TableLog(store, "t-1")
        log.lease = first
        log.append(None, [{"type": "joined", "player": "bot-001"}])
        clock.at += 60  # the first host is held up: its lease expires
        second = table_leases.take(store, "t-1", "second", ttl=5.0)
        assert second is not None and second.taken_from == "first"
        with pytest.raises(LeaseLost):
            log.append(None, [{"type": "joined", "player": "bot-002"}])
        assert (log.seq, one(url, "SELECT MAX(seq) FROM events WHERE table_id = 't-1'")) == (1, 1)
        successor = TableLog(store, "t-1")
        successor.lease = second
        successor.append(None, [{"type": "joined", "player": "bot-003"}])
        assert one(url, "SELECT MAX(seq) FROM events WHERE table_id = 't-1'") == 2


def test_house_run_on_postgresql_needs_a_home(shared, gm) -> None:
    url, _ = shared
    run = gm("house", "run", "--db", url, "--hands", "1", expect=2)
    assert "--home" in run.stderr and "Traceback" not in run.stderr


def test_home_is_refused_on_sqlite(deployed_db: Path, gm, tmp_path: Path) -> None:
    run = gm("house", "run", "--db", deployed_db, "--home", tmp_path, "--hands", "1", expect=2)
    assert "--home is for PostgreSQL" in run.stderr


def _begin(store, table: str, seats: list[dict]) -> int:
    table_store.open_table(store, table, "lequ-showhand", "table", "stud5", 1)
    config = store.one("SELECT config_id FROM configs ORDER BY config_id LIMIT 1")[0]
    return begin_hand(
        store, TableLog(store, table), 1, config, "table", None, None, seats, "0" * 64, "a", []
    )


def test_coins_at_stake_on_one_host_cannot_be_brought_to_another(shared) -> None:
    """One balance over every host: a hand starts only if what its players bring is not at
    stake in a running hand elsewhere; a host seats a player with what is left."""
    url, _ = shared
    with open_location(url, clock=StepClock(), postgres=True) as store:
        ledger.open_account(store, "pat", 100, "human", lambda *_: "unsigned")
        first = _begin(store, "t-1", [{"player": "pat", "coins": 70}])
        assert free_coins(store, {"pat": 100}) == {"pat": 30}
        with pytest.raises(NotCovered, match="pat"):
            _begin(store, "t-2", [{"player": "pat", "coins": 31}])
        assert one(url, "SELECT COUNT(*) FROM hands WHERE table_id = 't-2'") == 0
        _begin(store, "t-3", [{"player": "pat", "coins": 30}])
        assert free_coins(store, {"pat": 100}) == {"pat": 0}
        assert free_coins(store, {"pat": 100}, "t-1") == {"pat": 70}  # t-1's own stake
        void_hand(store, TableLog(store, "t-1"), first, "test", None)
        assert free_coins(store, {"pat": 100}) == {"pat": 70}


def test_hosts_killed_at_random_moments_lose_no_coin(shared, gm, start_host) -> None:
    """The crash-recovery suite's run on PostgreSQL: hosts SIGKILLed right after their
    k-th line, each replaced by a new one, then a last host that takes every table left
    over and stops cleanly: every coin is where the ledger says, every hand ended, the
    audit is clean."""
    url, home = shared
    moments = random.Random(26)
    args = ("--home", home, "--tables", "3", "--speed", "50", "--lease", "1")
    left: set[int] = set()
    for kills in range(1, 13):  # at least four; then until a kill leaves hands running
        host = start_host(url, *args)
        after = moments.randint(2, 12)
        until(  # (its k-th line, once it has started a hand: the first lines are its start's)
            lambda h=host, n=after: len(h.lines) >= n and "started:" in h.output,
            f"the host's line {after}",
        )
        assert host.stop(signal.SIGKILL) == -signal.SIGKILL
        left = _running(url)  # (the next host voids those it takes over)
        if kills >= 4 and left:
            break
    assert left, "twelve kills never left a hand running"
    last = start_host(url, *args)
    _tables(last)  # it plays (its signal handlers are set)
    until(
        lambda: not left & _running(url),
        "the last host voiding every hand the killed ones left running",
    )
    assert last.stop() == 0, last.output
    _coins_conserved(url)
    voided = one(
        url, "SELECT COUNT(*) FROM events WHERE type = 'hand_voided' AND payload LIKE '%crash%'"
    )
    assert voided >= 1
    _audit_clean(gm, url, home)
