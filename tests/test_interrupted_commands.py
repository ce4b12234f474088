"""Issue 24 point 1: a kick or close whose console was interrupted (Ctrl-C, exit 130) or
killed (`kill -9`) before a host took it ends withdrawn, logged, and is never carried out
by a host, not even one that starts later. Issue 23's leftover: a kick or close of a table
no host runs is answered at once (unless the GM asks to wait with --wait).

Real processes and real signals throughout: the console (`gmtool tables close/kick`) and
the host (`gmtool house run`) are subprocesses of the installed script; the tests wait
for what the store and the host say, never for a fixed time.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
from pathlib import Path

from conftest import OPERATOR, LiveHost
from helpers import clean_env, gmtool_command, query, until
from postgres import _stop as stop

WAIT_S = 120  # the most any awaited event may take on a busy machine


def _console(db: Path, *args: str) -> subprocess.Popen:
    """A `gmtool tables ...` console command running in its own process."""
    return subprocess.Popen(
        [*gmtool_command(), "tables", *args, "--db", str(db), "--as", OPERATOR],
        env=clean_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _queued(db: Path, before: int) -> dict:
    """The command a console queued after command `before`, once it is in the store."""
    return dict(
        until(
            lambda: query(db, "SELECT * FROM gm_commands WHERE id > ? ORDER BY id", (before,)),
            "the console's command in the store",
        )[0]
    )


def _stopped_outside_a_write(db: Path, pid: int) -> bool:
    """Stop process `pid` with SIGSTOP, and keep it stopped only if it holds no write
    transaction on the store (a writer may take the write lock at once)."""
    stop(pid)  # (every thread stopped, as tests/postgres.py stops a host there)
    conn = sqlite3.connect(db, timeout=0)
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.rollback()
        return True
    except sqlite3.OperationalError:  # locked: it was stopped inside a write
        os.kill(pid, signal.SIGCONT)
        return False
    finally:
        conn.close()


def _last_command(db: Path) -> int:
    return query(db, "SELECT COALESCE(MAX(id), 0) FROM gm_commands")[0][0]


def _status(db: Path, command_id: int) -> str:
    return query(db, "SELECT status FROM gm_commands WHERE id = ?", (command_id,))[0][0]


def _fate(gm, db: Path, command_id: int) -> dict:
    """The GM log entry that logs the command's fate (as `gm log --json` gives it)."""
    (entry,) = [
        a
        for a in gm.json("gm", "log", "--limit", "0", "--json", "--db", db)
        if a["outcome"].get("command") == command_id
    ]
    return entry


def _stopped_tables(gm, db: Path) -> list[str]:
    """A short real host run, stopped by itself: the tables it hosted, now with no host."""
    run = gm(
        "house",
        "run",
        "--db",
        db,
        "--system",
        "qq-showhand",
        "--tables",
        "2",
        "--speed",
        "200",
        "--hands",
        "2",
        "--seed",
        "interrupted",
    )
    assert "stopped:" in run.stdout, run.stdout
    tables = [r[0] for r in query(db, "SELECT id FROM tables WHERE status = 'stopped' ORDER BY id")]
    assert len(tables) == 2, tables
    return tables


def test_no_host_runs_the_table_is_said_at_once(deployed_db: Path, gm) -> None:
    """Issue 23's leftover: without --wait nothing is queued; the refusal is logged."""
    db = deployed_db
    table, _ = _stopped_tables(gm, db)
    before = _last_command(db)
    for args in (("close", table), ("kick", table, "bot-001", "--reason", "spam")):
        run = gm("tables", *args, "--timeout", "600", "--db", db, "--as", OPERATOR, expect=2)
        message = run.stderr.strip()
        assert message.startswith(f"error: no host runs {table} (it is stopped): nothing was sent")
        assert "gmtool house run" in message and "--wait" in message, message
        assert _last_command(db) == before  # nothing queued for a host to find later
        logged = gm.json("gm", "log", "--limit", "1", "--json", "--db", db)[0]
        assert (logged["action"], logged["outcome"]["ok"]) == (args[0], False), logged
        assert "no host runs" in logged["outcome"]["error"]
    gm("audit", "--db", db)  # each refusal logged with its signed request


def test_interrupted_or_killed_commands_are_withdrawn_and_a_later_host_never_runs_them(
    deployed_db: Path, gm, tmp_path: Path
) -> None:
    db = deployed_db
    closing, kicking = _stopped_tables(gm, db)

    # Ctrl-C (SIGINT) of a close that waits for a host: withdrawn at once, exit 130.
    before = _last_command(db)
    console = _console(db, "close", closing, "--wait", "--timeout", "600")
    interrupted = _queued(db, before)
    console.send_signal(signal.SIGINT)
    out, err = console.communicate(timeout=WAIT_S)
    assert console.returncode == 130, (out, err)
    assert err.strip() == (
        f"error: interrupted: command {interrupted['id']} was withdrawn (logged in `gmtool gm "
        "log`); it will not be carried out"
    ), err
    assert _status(db, interrupted["id"]) == "withdrawn"

    # kill -9 of a close and of a kick: no clean-up runs, the commands stay pending...
    killed = []
    for args in (
        ("close", closing, "--wait", "--timeout", "600"),
        ("kick", kicking, "bot-003", "--reason", "abuse", "--wait", "--timeout", "600"),
    ):
        before = _last_command(db)
        console = _console(db, *args)
        killed.append(_queued(db, before)["id"])
        console.kill()
        console.communicate(timeout=WAIT_S)
        assert console.returncode == -signal.SIGKILL
    assert [_status(db, c) for c in killed] == ["pending", "pending"]

    # ...until a host starts, much later: it withdraws them before any table plays.
    host = LiveHost(
        db, "--system", "qq-showhand", "--tables", "2", "--speed", "200", "--seed", "interrupted"
    )
    try:
        line = host.wait_for_line(r"GM command\(s\) .* withdrawn")
        assert f"{killed[0]}, {killed[1]} left pending by a console that is gone" in line.string
        host.wait_until(
            lambda: (
                {closing, kicking}
                <= {t["id"] for t in gm.json("tables", "list", "--json", "--db", db)}
            )
        )  # both tables live: the close was not carried out
        assert host.stop() == 0
    finally:
        host.kill()
    assert "closed" not in host.output and "kicked" not in host.output, host.output
    for command_id in (interrupted["id"], *killed):
        assert _status(db, command_id) == "withdrawn"
        fate = _fate(gm, db, command_id)
        assert fate["outcome"]["fate"] == "withdrawn" and fate["outcome"]["ok"] is False, fate
        assert "closed" not in fate["outcome"] and "kicked" not in fate["outcome"]
    assert query(db, "SELECT status FROM tables WHERE id = ?", (closing,))[0][0] == "stopped"
    log = gm("gm", "log", "--limit", "0", "--db", db, env=gm.env(COLUMNS="400")).stdout
    assert log.count("withdrawn: the console") == 3, log
    assert not [e for e in _events(db, "kick") if e.get("player") == "bot-003"]
    leases = sorted(p.name for p in db.parent.iterdir() if ".command-" in p.name)
    assert leases == [], leases  # the host removed what the killed consoles left
    gm("audit", "--db", db)  # every fate logged once, the rows agree with the log


def _events(db: Path, kind: str) -> list[dict]:
    return [
        json.loads(r[0]) for r in query(db, "SELECT payload FROM events WHERE type = ?", (kind,))
    ]


def test_a_kick_whose_console_is_killed_before_the_running_host_takes_it_is_withdrawn(
    deployed_db: Path, gm
) -> None:
    """The host runs but has not picked the kick up (it is stopped with SIGSTOP) when the
    console is killed; resumed, it finds nobody waiting and withdraws the kick: the
    player keeps their seat and their stake."""
    db = deployed_db
    host = LiveHost(
        db, "--system", "qq-showhand", "--tables", "1", "--speed", "2", "--seed", "sigstop"
    )
    try:

        def seated_in_a_hand():
            rows = query(
                db, "SELECT id, table_id, seats FROM hands WHERE outcome = 'running' LIMIT 1"
            )
            return rows and (rows[0]["id"], rows[0]["table_id"], json.loads(rows[0]["seats"]))

        hand, table, seats = host.wait_until(seated_in_a_hand)
        player = seats[0]["player"]
        # Stopped outside a write: a host frozen inside one holds the store's write lock,
        # and the console could never queue its kick (CI, on a loaded machine).
        until(
            lambda: _stopped_outside_a_write(db, host.proc.pid), "the host stopped between writes"
        )
        try:
            before = _last_command(db)
            # --wait: however slowly the console starts, the stopped host's heartbeat
            # going stale must not make it refuse at once
            console = _console(
                db, "kick", table, player, "--reason", "abuse", "--wait", "--timeout", "600"
            )
            command = _queued(db, before)
            console.kill()
            console.communicate(timeout=WAIT_S)
        finally:
            os.kill(host.proc.pid, signal.SIGCONT)
        host.wait_for_line(rf"command {command['id']} \(kick {table}\): withdrawn")
        seated = [r[0] for r in query(db, "SELECT player FROM seats WHERE table_id = ?", (table,))]
        hand_over = query(db, "SELECT outcome FROM hands WHERE id = ?", (hand,))[0][0]
        # still seated, unless the hand has ended since and they stood up as bots do
        assert player in seated or hand_over != "running", (player, seated)
        assert host.stop() == 0
    finally:
        host.kill()
    assert _status(db, command["id"]) == "withdrawn"
    assert "kicked" not in host.output, host.output
    assert not [e for e in _events(db, "kick") if e.get("player") == player]
    log = gm("gm", "log", "--db", db, env=gm.env(COLUMNS="400")).stdout
    assert "withdrawn: the console that sent it" in log, log
