"""Time windows (issue 23, item 11): `--until` not after `--since` is a usage error wherever
the two options exist, and `audit --since/--until` reports only what lies in its window
(docs/evidence.md, "An audit of a time window").

The audit tests tamper with a copy of the session's host-made store as an attacker would
(straight into SQLite, the append-only triggers dropped): a hand, a ledger row and a GM
action before the middle of play, and a hand after it. A full audit names them all; an
audit of the later half names only the later hand; one of the earlier half only the rest.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from conftest import Gmtool
from helpers import query

COMMANDS = [("hands", "list"), ("audit",)]


@pytest.mark.parametrize("command", COMMANDS, ids=["hands", "audit"])
@pytest.mark.parametrize(
    "since, until",
    [("today", "yesterday"), ("2026-12-02T10:00+08:00", "2026-12-02T01:00Z"), ("1h", "2h")],
    ids=["words", "offsets", "spans"],
)
def test_until_before_since_is_a_usage_error(
    gm: Gmtool, deployed_db: Path, command: tuple[str, ...], since: str, until: str
) -> None:
    for order in (("--since", since, "--until", until), ("--until", until, "--since", since)):
        run = gm(*command, *order, "--db", deployed_db, expect=2)
        assert run.stdout == "", run.stdout
        assert run.stderr.startswith("error: --until ") and "is not after --since" in run.stderr


@pytest.mark.parametrize("command", COMMANDS, ids=["hands", "audit"])
def test_an_empty_window_is_refused(gm: Gmtool, deployed_db: Path, command: tuple) -> None:
    moment = "2026-12-02T08:00:00Z"
    run = gm(*command, "--since", moment, "--until", moment, "--db", deployed_db, expect=2)
    assert "is not after --since" in run.stderr, run.stderr


@pytest.mark.parametrize("command", COMMANDS, ids=["hands", "audit"])
def test_a_window_in_order_is_read(gm: Gmtool, deployed_db: Path, command: tuple) -> None:
    gm(*command, "--since", "yesterday", "--until", "today", "--db", deployed_db)


# -- an audit of a window --------------------------------------------------------------------


def _settled_with_ledger(conn: sqlite3.Connection, order: str) -> sqlite3.Row:
    return conn.execute(
        "SELECT h.id, h.started_at FROM hands h WHERE h.outcome = 'settled' AND EXISTS "
        f"(SELECT 1 FROM ledger l WHERE l.hand_id = h.id) ORDER BY h.id {order} LIMIT 1"
    ).fetchone()


@pytest.fixture
def tampered(host_copy: Path) -> dict:
    """The copy, with an early hand's seed, an early ledger row and an early GM action
    edited, and a late hand's seed; and the middle of play's start time."""
    conn = sqlite3.connect(host_copy)
    conn.row_factory = sqlite3.Row
    try:
        with conn:
            for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'"):
                conn.execute(f"DROP TRIGGER {name}")
            stamps = [r[0] for r in conn.execute("SELECT started_at FROM hands ORDER BY id")]
            middle = stamps[len(stamps) // 2]
            early, late = _settled_with_ledger(conn, "ASC"), _settled_with_ledger(conn, "DESC")
            assert early["started_at"] < middle <= late["started_at"]
            ledger_hand = conn.execute(
                "SELECT l.id, l.hand_id, l.created_at FROM ledger l JOIN hands h ON h.id = "
                "l.hand_id WHERE h.id != ? AND l.created_at < ? ORDER BY l.id LIMIT 1",
                (early["id"], middle),
            ).fetchone()
            action = conn.execute("SELECT id, at FROM gm_actions ORDER BY id LIMIT 1 OFFSET 1")
            action = action.fetchone()
            assert action["at"] < middle
            for hand in (early, late):
                conn.execute("UPDATE hands SET seed = ? WHERE id = ?", ("5e" * 32, hand["id"]))
            conn.execute("UPDATE ledger SET delta = delta + 7 WHERE id = ?", (ledger_hand["id"],))
            conn.execute("UPDATE gm_actions SET reason = 'edited' WHERE id = ?", (action["id"],))
    finally:
        conn.close()
    return {
        "db": host_copy,
        "middle": middle,
        "early": {early["id"], ledger_hand["hand_id"]},
        "late": {late["id"]},
        "action": action["id"],
    }


def _audit(gm: Gmtool, db: Path, *window: str) -> list[dict]:
    return gm.json("audit", "--db", db, "--json", *window, expect=1)["problems"]


def _named(problems: list[dict]) -> tuple[set, set, set]:
    """The hands, GM actions and players the problems name; and the kinds of the rest."""
    hands = {p["hand"] for p in problems if "hand" in p}
    actions = {p["gm_action"] for p in problems if "gm_action" in p}
    whole = {p["kind"] for p in problems if not {"hand", "gm_action", "player"} & p.keys()}
    return hands, actions, whole


def test_a_full_audit_names_every_edit(gm: Gmtool, tampered: dict) -> None:
    problems = _audit(gm, tampered["db"])
    hands, actions, _ = _named(problems)
    assert tampered["early"] | tampered["late"] <= hands, problems
    assert tampered["action"] in actions, problems
    assert any(p["kind"] == "balance" for p in problems), problems


def test_an_audit_since_the_middle_reports_only_what_lies_after_it(
    gm: Gmtool, tampered: dict
) -> None:
    problems = _audit(gm, tampered["db"], "--since", tampered["middle"])
    hands, actions, whole = _named(problems)
    assert hands == tampered["late"], problems
    assert not actions and not [p for p in problems if p["kind"] == "balance"], problems
    assert whole == {"triggers"}, problems  # the dropped guards: the whole store's
    report = gm.json("audit", "--db", tampered["db"], "--json", "--since", tampered["middle"],
                     expect=1)  # fmt: skip
    assert report["window"]["until"] is None and report["window"]["since"].startswith("2100-")
    text = gm("audit", "--db", tampered["db"], "--since", tampered["middle"], expect=1).stdout
    assert "hand(s) checked in the window 2100-" in text.splitlines()[-1], text


def test_an_audit_until_the_middle_reports_only_what_lies_before_it(
    gm: Gmtool, tampered: dict
) -> None:
    problems = _audit(gm, tampered["db"], "--until", tampered["middle"])
    hands, actions, _ = _named(problems)
    assert hands == tampered["early"], problems
    assert actions == {tampered["action"]}, problems


def test_a_window_holds_the_same_hands_as_hands_list(gm: Gmtool, host_copy: Path) -> None:
    stamps = [r[0] for r in query(host_copy, "SELECT started_at FROM hands ORDER BY id")]
    since = stamps[len(stamps) // 3]
    listed = gm.json("hands", "list", "--since", since, "--limit", "0", "--db", host_copy,
                     "--json")  # fmt: skip
    report = gm.json("audit", "--since", since, "--db", host_copy, "--json")
    assert report["hands_checked"] == len(listed) and report["problems"] == [], report
