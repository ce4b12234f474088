"""GM commands on a PostgreSQL store several hosts share (issue 26, item 4): `tables kick`,
`tables close` and `tables open` from the console reach the host that holds the table's
lease, which answers within the command's timeout; the other host leaves them alone. A
console killed with SIGKILL while it waits leaves a command that is withdrawn and never
carried out (its word and lock are in the database: house/lease.py).

Real `gmtool` processes, real `gmtool house run` hosts on a real database of the test
server (an unreachable server fails these tests, never skips them), real signals. Waits
are for what the hosts and the store say, never for a time.
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
from pathlib import Path

from backends import pg_server_fixture, shared_fixture  # noqa: F401
from conftest import OPERATOR, RULES
from helpers import clean_env, gmtool_command, until
from postgres import (
    Databases,
    hosted_tables,
    one,
    seated,
    stopped_outside_a_transaction,
    url_of,
)

WAIT_S = 120  # the most any awaited event may take on a busy machine


def _table_no_host_holds(url: str, home: Path, start_host) -> str:
    """A table a host played two hands at and gave back at its clean stop (its lease
    released): no live host holds it now."""
    host = start_host(
        url, "--home", home, "--system", "qq-showhand", "--tables", "1", "--hands", "2",
        "--speed", "100",
    )  # fmt: skip
    (table,) = hosted_tables(host)
    assert host.wait() == 0, host.output
    return table


def _last_command(url: str) -> int:
    return one(url, "SELECT COALESCE(MAX(id), 0) FROM gm_commands")


def _status(url: str, command_id: int) -> str:
    return one(url, "SELECT status FROM gm_commands WHERE id = %s", (command_id,))


def _console(url: str, home: Path, *args: str) -> subprocess.Popen:
    """A `gmtool tables ...` console command on the store, in its own process."""
    return subprocess.Popen(
        [*gmtool_command(), "tables", *args, "--db", url, "--as", OPERATOR],
        env=clean_env(GMTOOL_HOME=str(home)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _word(url: str, command_id: int) -> bool:
    """Whether the console's word for the command is in the database."""
    request = one(url, "SELECT request FROM gm_commands WHERE id = %s", (command_id,))
    digest = hashlib.sha256(request.encode("utf-8")).hexdigest()
    return one(url, "SELECT COUNT(*) FROM console_words WHERE digest = %s", (digest,)) == 1


def _logged(gm, url: str, command_id: int) -> dict:
    """The GM log entry of the command's fate."""
    (entry,) = [
        a
        for a in gm.json("gm", "log", "--limit", "0", "--json", "--db", url)
        if a["outcome"].get("command") == command_id
    ]
    return entry


def test_kick_close_and_open_reach_the_host_that_holds_the_table(shared, gm, start_host) -> None:
    url, home = shared
    args = ("--home", home, "--system", "qq-showhand", "--tables", "2", "--speed", "5")
    first = start_host(url, *args)
    mine = hosted_tables(first)
    second = start_host(url, *args)
    theirs = hosted_tables(second)
    assert not set(mine) & set(theirs), (mine, theirs)
    env = clean_env(GMTOOL_HOME=str(home))
    listening = (
        "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() "
        "AND query = 'LISTEN gmtool_commands'"
    )
    until(lambda: one(url, listening) == 2, "both hosts listening for announced commands")

    # a kick at the second host's table: the second host carries it out, the first never
    table = theirs[0]
    player = until(lambda: (seated(url, table) or [None])[0], "a player seated there")
    before = _last_command(url)
    run = gm(
        "tables", "kick", table, player, "--reason", "abuse", "--timeout", "60",
        "--db", url, "--as", OPERATOR, env=env,
    )  # fmt: skip
    assert f"kicked {player}" in run.stdout, run.stdout + run.stderr
    kick = _last_command(url)
    assert kick == before + 1 and _status(url, kick) == "done"
    second.wait_for_line(rf"command {kick} \(kick {table} {player}\): kicked {player}")
    assert f"command {kick} " not in first.output, first.output
    assert player not in seated(url, table)
    assert _logged(gm, url, kick)["outcome"]["kicked"] == player

    # a close at the first host's table: the first host closes it, the second never
    table = mine[0]
    run = gm(
        "tables", "close", table, "--reason", "maintenance", "--timeout", "60",
        "--db", url, "--as", OPERATOR, env=env,
    )  # fmt: skip
    assert f"closed {table}" in run.stdout, run.stdout + run.stderr
    close = _last_command(url)
    first.wait_for_line(rf"command {close} \(close {table}\): closed")
    assert f"command {close} " not in second.output, second.output
    assert one(url, "SELECT status FROM tables WHERE id = %s", (table,)) == "closed"
    assert _logged(gm, url, close)["outcome"]["closed"] == table

    # and the console reopens it (no host needed)
    run = gm("tables", "open", table, "--reason", "done", "--db", url, "--as", OPERATOR, env=env)
    assert f"reopened {table}" in run.stdout, run.stdout + run.stderr
    assert one(url, "SELECT status FROM tables WHERE id = %s", (table,)) != "closed"
    opened = gm.json("gm", "log", "--limit", "1", "--json", "--db", url)[0]
    assert (opened["action"], opened["target"], opened["outcome"]["ok"]) == ("open", table, True)

    assert first.stop() == 0 and second.stop() == 0
    report = gm.json(
        "audit", "--db", url, "--key", home / f"{url.rsplit('/', 1)[1]}.checkpoint.pub", "--json"
    )
    assert report["problems"] == [], report["problems"]


def test_a_table_no_live_host_holds_is_refused_at_once(shared, gm, start_host) -> None:
    url, home = shared
    table = _table_no_host_holds(url, home, start_host)
    before = _last_command(url)
    run = gm(
        "tables", "close", table, "--timeout", "60", "--db", url, "--as", OPERATOR,
        env=clean_env(GMTOOL_HOME=str(home)), expect=2,
    )  # fmt: skip
    assert run.stderr.startswith(f"error: no host runs {table} ("), run.stderr
    assert _last_command(url) == before  # nothing queued


def test_a_killed_consoles_command_is_withdrawn_and_never_carried_out(
    shared, gm, start_host
) -> None:
    """The host holding the table has not looked at the command (it is stopped with
    SIGSTOP) when its console is killed; resumed, it finds the console's lock free in the
    database and withdraws it: the player keeps the seat, the table stays open."""
    url, home = shared
    args = ("--home", home, "--system", "qq-showhand", "--tables", "1", "--speed", "2")
    host = start_host(url, *args, "--lease", "60")
    (table,) = hosted_tables(host)
    other = start_host(url, *args)
    (elsewhere,) = hosted_tables(other)
    player = until(lambda: (seated(url, table) or [None])[0], "a player seated there")
    until(lambda: stopped_outside_a_transaction(url, host.proc.pid), "the host stopped idle")
    try:
        killed = []
        for command in (
            ("kick", table, player, "--reason", "abuse"),
            ("close", table),
        ):
            before = _last_command(url)
            console = _console(url, home, *command, "--wait", "--timeout", "600")
            killed.append(until(lambda b=before: max(_last_command(url) - b, 0), "queued") + before)
            until(lambda: _word(url, killed[-1]), "the console's word in the database")
            console.kill()
            console.communicate(timeout=WAIT_S)
            assert console.returncode == -signal.SIGKILL
            assert _status(url, killed[-1]) == "pending"
    finally:
        os.kill(host.proc.pid, signal.SIGCONT)
    for command_id, kind in zip(killed, ("kick", "close"), strict=True):
        host.wait_for_line(rf"command {command_id} \({kind} {table}\): withdrawn")
        assert _status(url, command_id) == "withdrawn"
        fate = _logged(gm, url, command_id)["outcome"]
        assert fate["ok"] is False and fate["fate"] == "withdrawn", fate
    assert one(url, "SELECT status FROM tables WHERE id = %s", (table,)) == "open"
    assert "kicked" not in host.output and "closed" not in host.output, host.output
    kicks = "SELECT COUNT(*) FROM events WHERE type = 'kick' AND payload LIKE %s"
    assert one(url, kicks, (f'%"{player}"%',)) == 0
    assert one(url, "SELECT COUNT(*) FROM console_words") == 0  # the host removed them
    assert elsewhere != table and "withdrawn" not in other.output, other.output
    assert host.stop() == 0 and other.stop() == 0


def test_witness_changes_run_on_postgresql(gm, pg_server: Databases, tmp_path: Path, start_host):
    """`gm witness add` and `remove` on a PostgreSQL store: the folder is recorded by its
    full path, a checkpoint is signed into it with the hosts' key from `$GMTOOL_HOME`."""
    url = url_of(pg_server.new())
    gm("db", "init", "--db", url, "--as", OPERATOR)
    gm("deploy", RULES / "qq-showhand.toml", "--db", url, "--as", OPERATOR)
    home = tmp_path / "home"
    host = start_host(url, "--home", home, "--tables", "1", "--hands", "2", "--speed", "100")
    assert host.wait() == 0, host.output
    env = clean_env(GMTOOL_HOME=str(home))
    second = tmp_path / "second"
    gm("gm", "witness", "add", second, "--db", url, "--as", OPERATOR, env=env)
    assert list(second.glob("*.checkpoint")), "no checkpoint signed into the new witness"
    listed = gm.json("gm", "witness", "list", "--db", url, "--json", env=env)
    assert str(second) in [w["location"] for w in listed["witnesses"]], listed
    gm("gm", "witness", "remove", second, "--db", url, "--as", OPERATOR, env=env)
    listed = gm.json("gm", "witness", "list", "--db", url, "--json", env=env)
    assert str(second) not in [w["location"] for w in listed["witnesses"]], listed
    actions = [a["action"] for a in gm.json("gm", "log", "--limit", "2", "--json", "--db", url)]
    assert actions == ["witness_add", "witness_remove"], actions
    report = gm.json(
        "audit", "--db", url, "--key", home / f"{url.rsplit('/', 1)[1]}.checkpoint.pub", "--json"
    )
    assert report["problems"] == [], report["problems"]


def test_a_consoles_word_and_lock_under_the_roles_db_grant_makes(gm, pg_server: Databases) -> None:
    """An operator's console holds the command's lock and writes its word; a host's role
    sees the lock held (`pg_locks`), reads the word and may remove it; the lock is free
    once the console's connection ends. Queueing a command wakes a listening host."""
    from gmtool.store import console_words
    from gmtool.store.db import open_location

    name = pg_server.new()
    gm("db", "init", "--db", url_of(name), "--as", OPERATOR)
    host, operator = f"{name}_h1", f"{name}_o1"
    gm("db", "grant", "--db", url_of(name), "--host", host, "--operator", operator)
    digest = hashlib.sha256(b"a request").hexdigest()
    with open_location(url_of(name, host), write=True, postgres=True) as hosting:
        listener = console_words.Listener(url_of(name, host))
        try:
            with open_location(url_of(name, operator), write=True, postgres=True) as console:
                assert console_words.hold(console, digest)
                at = console_words.database_time(console)
                console_words.say(console, digest, "signed note", at)
                console_words.announce(console, "qq-1")
                assert console_words.held(hosting, digest)
                assert console_words.word(hosting, digest) == "signed note"
                assert not console_words.hold(hosting, digest)  # one console's lock
                assert until(lambda: listener.wait(1.0), "the announcement") == ["qq-1"]
            assert until(lambda: not console_words.held(hosting, digest), "the lock freed")
            console_words.forget(hosting, digest)
            assert console_words.word(hosting, digest) is None
        finally:
            listener.close()


def test_an_interrupted_console_withdraws_its_command_and_its_word(shared, gm, start_host) -> None:
    url, home = shared
    table = _table_no_host_holds(url, home, start_host)
    before = _last_command(url)
    console = _console(url, home, "close", table, "--wait", "--timeout", "600")
    command = until(lambda: max(_last_command(url) - before, 0), "queued") + before
    until(lambda: _word(url, command), "the console's word in the database")
    console.send_signal(signal.SIGINT)
    _, err = console.communicate(timeout=WAIT_S)
    assert console.returncode == 130, err
    assert f"command {command} was withdrawn" in err, err
    assert _status(url, command) == "withdrawn"
    assert one(url, "SELECT COUNT(*) FROM console_words") == 0
    assert one(url, "SELECT status FROM tables WHERE id = %s", (table,)) != "closed"
