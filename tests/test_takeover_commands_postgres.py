"""A GM command queued for a table whose host dies before carrying it out (issue 26, item
4, PostgreSQL): the host that takes the table over carries it out while its console still
waits, and withdraws it once its console is gone; never both, never twice.

Real `gmtool house run` hosts and `gmtool tables` consoles on a real database of the test
server, real SIGSTOP and SIGKILL. The only thing the test does besides signals is end the
dead host's lease in the database (its expiry set to the past), which stands for the lease
time passing: the test waits for what the hosts and the store say, never for a time.
"""

from __future__ import annotations

import hashlib
import json
import re
import signal
import subprocess
from pathlib import Path

import psycopg
from backends import pg_server_fixture, shared_fixture  # noqa: F401
from conftest import OPERATOR
from helpers import clean_env, gmtool_command, until
from postgres import (
    hosted_tables,
    one,
    rows,
    seated,
    stopped_outside_a_transaction,
)

WAIT_S = 120  # the most any awaited event may take on a busy machine


def _queued(url: str, home: Path, *args: str) -> tuple[subprocess.Popen, int]:
    """`gmtool tables ARGS --wait` in its own process, once its command is queued and its
    word is in the database: (the console, the command's id)."""
    before = one(url, "SELECT COALESCE(MAX(id), 0) FROM gm_commands")
    console = subprocess.Popen(
        [*gmtool_command(), "tables", *args, "--wait", "--timeout", "600"]
        + ["--db", url, "--as", OPERATOR],
        env=clean_env(GMTOOL_HOME=str(home)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    command = until(
        lambda: one(url, "SELECT MAX(id) FROM gm_commands WHERE id > %s", (before,)), "queued"
    )
    request = one(url, "SELECT request FROM gm_commands WHERE id = %s", (command,))
    digest = hashlib.sha256(request.encode("utf-8")).hexdigest()
    words = "SELECT COUNT(*) FROM console_words WHERE digest = %s"
    until(lambda: one(url, words, (digest,)) == 1, "the console's word in the database")
    return console, command


def _coins_conserved(url: str) -> None:
    granted = one(url, "SELECT SUM(delta) FROM ledger WHERE reason = 'opening_balance'")
    assert one(url, "SELECT SUM(coins) FROM players") == granted > 0
    assert one(url, "SELECT COALESCE(SUM(delta), 0) FROM ledger WHERE hand_id IS NOT NULL") == 0
    assert one(url, "SELECT MIN(coins) FROM players") >= 0


def test_the_host_that_takes_a_table_over_answers_its_waiting_command(
    shared, gm, start_host
) -> None:
    """Host A holds the table and is stopped (outside a transaction) before it looks at
    two commands: a kick whose console is then killed, and a close whose console waits. A
    is killed and its lease ended; host B takes the table over (the running hand voided,
    stakes returned), withdraws the kick (nobody waits for it: never carried out) and
    carries the close out for the console that still waits, which prints it and exits 0."""
    url, home = shared
    args = ("--home", home, "--system", "qq-showhand", "--tables", "1", "--speed", "2")
    first = start_host(url, *args, "--lease", "60")
    (table,) = hosted_tables(first)
    second = start_host(url, *args, "--lease", "60")
    (elsewhere,) = hosted_tables(second)
    assert elsewhere != table
    player = until(lambda: (seated(url, table) or [None])[0], "a player seated there")
    until(lambda: stopped_outside_a_transaction(url, first.proc.pid), "the host stopped idle")

    gone, kick = _queued(url, home, "kick", table, player, "--reason", "abuse")
    gone.kill()
    gone.communicate(timeout=WAIT_S)
    waiting, close = _queued(url, home, "close", table, "--reason", "maintenance")
    assert first.stop(signal.SIGKILL) == -signal.SIGKILL  # (SIGKILL ends a stopped process)
    (dead,) = rows(url, "SELECT host FROM table_leases WHERE table_id = %s", (table,))[0]
    with psycopg.connect(url) as conn:  # the lease time passes
        conn.execute("UPDATE table_leases SET expires = 0 WHERE table_id = %s", (table,))

    second.wait_for_line(rf"took table {table} over from host {dead}, which stopped")
    out, err = waiting.communicate(timeout=WAIT_S)
    assert waiting.returncode == 0, out + err
    assert f"closed {table}" in out, out + err
    second.wait_for_line(rf"command {kick} \(kick {table}\): withdrawn")
    second.wait_for_line(rf"command {close} \(close {table}\): closed")

    statuses = "SELECT id, status FROM gm_commands WHERE id IN (%s, %s)"
    assert dict(rows(url, statuses, (kick, close))) == {kick: "withdrawn", close: "done"}
    assert one(url, "SELECT status FROM tables WHERE id = %s", (table,)) == "closed"
    kicks = "SELECT COUNT(*) FROM events WHERE type = 'kick' AND payload LIKE %s"
    assert one(url, kicks, (f'%"{player}"%',)) == 0
    assert second.stop() == 0, second.output
    _coins_conserved(url)
    assert one(url, "SELECT COUNT(*) FROM hands WHERE outcome = 'running'") == 0
    name = url.rsplit("/", 1)[1]
    # each host deals from a key of its own, and says which file holds it
    mine = rf"dealt from {re.escape(str(home.resolve()))}/{name}\.seed-[0-9a-f]{{16}}\.key, "
    assert re.search(mine, second.output), second.output
    run = gm("audit", "--db", url, "--key", home / f"{name}.checkpoint.pub", "--json")
    assert json.loads(run.stdout)["problems"] == [], run.stdout
