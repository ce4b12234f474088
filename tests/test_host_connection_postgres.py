"""A host of a PostgreSQL store whose connection to the database is lost (issue 26): the
server restarted or ended its session, or the host froze inside a transaction and the
server ended it (`idle_in_transaction_session_timeout`, so a frozen host cannot hold every
other writer up). The host stops at once, writes nothing more, says so in one line and
exits 2; the host that takes its tables over voids their running hands, every stake
returned, and the audit is clean.

Real `gmtool house run` processes on a real database of the test server, real SIGSTOP,
real `pg_terminate_backend`. The only change the test makes to the store is a dead host's
lease ended (its expiry set to the past), which stands for the lease time passing.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import psycopg
from backends import pg_server_fixture, shared_fixture  # noqa: F401
from helpers import until
from postgres import (
    hosted_tables,
    local_ports,
    one,
    stopped_inside_a_transaction,
)

LOST = "lost the connection to the database"


def _stopped_for_its_loss(host) -> str:
    """The host's exit: 2, its last line one plain error saying what happened and what
    becomes of its tables; no traceback, no internal error."""
    assert host.wait() == 2, host.output
    last = host.output.strip().splitlines()[-1]
    assert last.startswith("error: ") and LOST in last, host.output
    assert "this host stopped at once, writing nothing more" in last, last
    assert "Traceback" not in host.output and "internal error" not in host.output, host.output
    assert "nested" not in host.output, host.output
    return last


def _end_leases(url: str, tables: list[str]) -> None:
    with psycopg.connect(url) as conn:  # the lease time passes
        conn.execute("UPDATE table_leases SET expires = 0 WHERE table_id = ANY(%s)", (tables,))


def _settled_clean(gm, url: str, home: Path) -> None:
    granted = one(url, "SELECT SUM(delta) FROM ledger WHERE reason = 'opening_balance'")
    assert one(url, "SELECT SUM(coins) FROM players") == granted > 0
    assert one(url, "SELECT COALESCE(SUM(delta), 0) FROM ledger WHERE hand_id IS NOT NULL") == 0
    assert one(url, "SELECT COUNT(*) FROM hands WHERE outcome = 'running'") == 0
    name = url.rsplit("/", 1)[1]
    run = gm("audit", "--db", url, "--key", home / f"{name}.checkpoint.pub", "--json")
    assert json.loads(run.stdout)["problems"] == [], run.stdout


def test_a_host_whose_sessions_the_server_ends_stops_at_once(shared, gm, start_host) -> None:
    url, home = shared
    args = ("--home", home, "--tables", "3", "--speed", "20")
    first = start_host(url, *args, "--lease", "60")
    mine = hosted_tables(first)
    until(lambda: first.output.count("started:") >= 3, "hands running")
    ports = local_ports(first.proc.pid)
    with psycopg.connect(url) as conn:  # as an administrator or a restarting server does
        ended = conn.execute(
            "SELECT COUNT(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE client_port = ANY(%s)",
            (ports,),
        ).fetchone()[0]
    assert ended >= 1
    _stopped_for_its_loss(first)
    assert one(url, "SELECT COUNT(*) FROM hands WHERE outcome = 'running'") >= 1

    _end_leases(url, mine)
    second = start_host(url, *args, "--hands", "3")
    for table in mine:
        second.wait_for_line(rf"took table {table} over from host \S+, which stopped")
    assert second.wait() == 0, second.output
    _settled_clean(gm, url, home)


def test_a_host_frozen_inside_a_transaction_holds_the_others_up_only_so_long(
    shared, gm, start_host
) -> None:
    """Frozen while it holds the writers' lock, the first host would hold every writer up
    for as long as it stays frozen; the server ends its session once it has sat inside its
    transaction for its lease time (5 s at least), the second host takes its tables over
    and plays on, and the first, resumed, finds its connection lost and stops."""
    url, home = shared
    args = ("--home", home, "--tables", "2", "--speed", "50", "--lease", "2")
    first = start_host(url, *args)
    mine = hosted_tables(first)
    second = start_host(url, *args)
    theirs = hosted_tables(second)
    until(lambda: second.output.count("settled") >= 1, "both hosts playing")
    until(lambda: stopped_inside_a_transaction(url, first.proc.pid), "frozen inside a write")
    try:
        for table in mine:
            second.wait_for_line(rf"took table {table} over from host \S+, which stopped")
        settled = second.output.count("settled")
        until(lambda: second.output.count("settled") > settled + 2, "the second host playing on")
    finally:
        first.proc.send_signal(signal.SIGCONT)
    _stopped_for_its_loss(first)
    assert set(mine).isdisjoint(theirs)
    assert second.stop() == 0, second.output
    _settled_clean(gm, url, home)


FROZEN_WRITER = """
import sys
from gmtool.store import pg_open
from gmtool.store.errors import StoreGone

store = pg_open.connect(sys.argv[1])
store.hold_transactions_at_most(1.0)
try:
    with store.write():  # many statements in one write: the test freezes it between two
        store.conn.executemany(
            "UPDATE tables SET updated_at = ? WHERE id = ?",
            ((0, f"no-table-{i}") for i in range(10**7)),
        )
except StoreGone as error:
    sys.exit(f"error: {error}")
"""


def test_a_writer_frozen_between_statements_is_ended_by_the_server(shared) -> None:
    """Whatever a write sends, a writer frozen inside it sits "idle in transaction" and
    the server ends it. (psycopg's pipelined `executemany` sent its Sync only after the
    last row: frozen before it, the session stayed "active", never timed out, and held
    every writer's lock until the process ran again: CI saw a second host wait 120 s.)"""
    url, _home = shared
    child = subprocess.Popen(
        [sys.executable, "-c", FROZEN_WRITER, url], stderr=subprocess.PIPE, text=True
    )
    try:
        until(lambda: local_ports(child.pid), "the writer connected")
        until(lambda: stopped_inside_a_transaction(url, child.pid), "frozen inside the write")
        ports = local_ports(child.pid)
        ended = "SELECT COUNT(*) FROM pg_stat_activity WHERE client_port = ANY(%s)"
        until(lambda: one(url, ended, (ports,)) == 0, "the server ending the frozen session")
    finally:
        child.send_signal(signal.SIGCONT)
    assert child.wait(timeout=60) == 1
    assert "lost the connection to the database" in child.stderr.read()
