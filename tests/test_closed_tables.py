"""A table a GM closed stays closed (issue 23, items 2 and 13).

A close is a GM command the host carries out (its running hand voided, every stake
returned). The table then stays closed across host restarts, until an operator reopens
it with `gmtool tables open`, an action signed, logged and audited like the close; the
next host start hosts it again. A close of a closed table is answered at once, with
nothing sent to a host. Hosts run on virtual time (tests/hosting.py) or as a real `gmtool
house run` process; every console command is the real script in a subprocess.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import OPERATOR, SUPPORT, Gmtool
from helpers import gm_identity, query

from gmtool.evidence import request as requests
from gmtool.store import gm as gm_store
from gmtool.store import log_append
from gmtool.store import tables as table_store
from gmtool.store.db import connect

TRAINING, JUNIOR = "qq-showhand-training-1", "qq-showhand-junior-1"
SEED = "closed-tables"


def close_junior(db: Path | str, virtual_host, **where):
    """`db` once its host played two qq tables until an operator closed JUNIOR during a
    hand, and then stopped (`where`: the host's home, on PostgreSQL)."""
    host = virtual_host(db, systems=["qq-showhand"], tables=2, seed=SEED, grace=1.0, **where)
    host.run_until(
        lambda: [t for t, _ in host.running_players() if t == JUNIOR], what="a hand at JUNIOR"
    )
    outcome = host.command(OPERATOR, "close", JUNIOR, None, "test: closed")
    assert outcome["closed"] == JUNIOR and outcome["voided_hand"]
    host.close()
    return db


@pytest.fixture
def closed_db(deployed_db: Path, virtual_host) -> Path:
    return close_junior(deployed_db, virtual_host)


def host_run(gm: Gmtool, db: Path, *extra: str, expect: int = 0):
    """A real `gmtool house run` of the two qq tables, for one settled hand."""
    return gm(
        "house",
        "run",
        "--db",
        db,
        "--system",
        "qq-showhand",
        "--tables",
        "2",
        "--hands",
        "1",
        "--speed",
        "1000",
        "--seed",
        SEED,
        *extra,
        expect=expect,
    )


def statuses(gm: Gmtool, db: Path) -> dict[str, tuple[str, str]]:
    """(status, host) of every table, as `tables list --closed --json` shows them."""
    return {
        t["id"]: (t["status"], t["host"])
        for t in gm.json("tables", "list", "--closed", "--json", "--db", db)
    }


def hosted(run) -> list[str]:
    """The tables a `house run` said it hosts."""
    (line,) = [line for line in run.stdout.splitlines() if line.startswith("hosting ")]
    return line.split(": ", 1)[1].split(" (speed")[0].split(", ")


def test_a_closed_table_stays_closed_when_the_host_starts_again(closed_db: Path, gm) -> None:
    dealt = query(closed_db, "SELECT COUNT(*) FROM hands WHERE table_id = ?", (JUNIOR,))[0][0]
    run = host_run(gm, closed_db)
    assert JUNIOR not in hosted(run), run.stdout
    assert f"not hosting closed table(s) {JUNIOR}" in run.stdout
    assert hosted(run) == [TRAINING, "qq-showhand-junior-2"]  # the room is still served
    assert statuses(gm, closed_db)[JUNIOR][0] == "closed"
    assert query(closed_db, "SELECT COUNT(*) FROM hands WHERE table_id = ?", (JUNIOR,))[0][0] == (
        dealt
    )


def test_tables_open_reopens_a_closed_table_signed_logged_and_audited(closed_db: Path, gm) -> None:
    run = gm("tables", "open", JUNIOR, "--reason", "fixed", "--db", closed_db, "--as", OPERATOR)
    assert run.stdout.startswith(f"reopened {JUNIOR}: the next `gmtool house run`")
    (action,) = gm.json("gm", "log", "--limit", "1", "--json", "--db", closed_db)
    assert (action["actor"], action["action"], action["target"], action["reason"]) == (
        OPERATOR,
        "open",
        JUNIOR,
        "fixed",
    )
    assert action["outcome"] == {"ok": True, "opened": JUNIOR}
    (row,) = query(closed_db, "SELECT request FROM gm_actions WHERE id = ?", (action["id"],))
    assert row["request"]  # the operator's signed request, kept with the action
    assert statuses(gm, closed_db)[JUNIOR][0] == "stopped"
    gm("audit", "--db", closed_db)
    assert JUNIOR in hosted(host_run(gm, closed_db))  # hosted again from the next start
    gm("audit", "--db", closed_db)


def test_support_may_not_reopen_a_table_and_the_refusal_is_logged(closed_db: Path, gm) -> None:
    run = gm("tables", "open", JUNIOR, "--db", closed_db, "--as", SUPPORT, expect=1)
    assert run.stderr.strip() == (
        f"error: refused: '{SUPPORT}' is support; only operators may open (logged)"
    )
    (action,) = gm.json("gm", "log", "--limit", "1", "--json", "--db", closed_db)
    assert (action["action"], action["outcome"]["ok"]) == ("open", False)
    assert statuses(gm, closed_db)[JUNIOR][0] == "closed"


def test_tables_open_of_a_table_that_is_not_closed_changes_nothing(closed_db: Path, gm) -> None:
    actions = len(gm.json("gm", "log", "--json", "--db", closed_db))
    run = gm("tables", "open", TRAINING, "--db", closed_db, "--as", OPERATOR)
    assert run.stdout.strip() == f"{TRAINING} is not closed (stopped): unchanged"
    missing = gm("tables", "open", "no-such", "--db", closed_db, "--as", OPERATOR, expect=2)
    assert missing.stderr.strip() == "error: no table 'no-such' (see `gmtool tables list --closed`)"
    log = gm.json("gm", "log", "--json", "--db", closed_db)
    assert len(log) == actions + 1 and log[-1]["outcome"]["ok"] is False  # the unknown table


def test_audit_finds_a_reopening_no_operator_signed(closed_db: Path, gm) -> None:
    """A table made hostable again by writing the store, with the action logged as gmtool
    logs one but signed by support: the audit checks an open like every signed action."""
    with connect(closed_db) as store, store.write():
        request = requests.make(
            gm_identity(SUPPORT), log_append.store_id(store), "open", JUNIOR, None, {}, store.now()
        )
        table_store.reopen_table(store, JUNIOR)
        gm_store.log_action(store, SUPPORT, "open", JUNIOR, None, {"ok": True}, request)
    run = gm("audit", "--db", closed_db, "--json", expect=1)
    problems = json.loads(run.stdout)["problems"]
    assert [p["kind"] for p in problems] == ["gm_signature"], problems
    assert "is support; only operators may open" in problems[0]["detail"], problems


def test_closing_a_closed_table_answers_already_closed_at_once(closed_db: Path, gm) -> None:
    """Item 13: nothing is queued for a host (before, the console waited out --timeout for
    a host that does not host the table, then said the command was withdrawn)."""
    commands = len(query(closed_db, "SELECT id FROM gm_commands"))
    actions = len(gm.json("gm", "log", "--json", "--db", closed_db))
    run = gm("tables", "close", JUNIOR, "--timeout", "5", "--db", closed_db, "--as", OPERATOR)
    assert run.stdout.startswith(f"{JUNIOR} is already closed (since "), run.stdout
    assert run.stdout.rstrip().endswith(f"unchanged; `gmtool tables open {JUNIOR}` reopens it")
    assert len(query(closed_db, "SELECT id FROM gm_commands")) == commands
    assert len(gm.json("gm", "log", "--json", "--db", closed_db)) == actions
