"""A row that is not what gmtool writes (the outside probe's a50: fields made non-JSON, a
balance made text) stops a reading or writing command with one plain message naming the
row, exit 1, never an internal error; `gmtool audit` reports the same rows as findings."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from conftest import OPERATOR


def _edit(db: Path, sql: str) -> None:
    """An edit as an attacker makes it: the append-only triggers dropped, then put back."""
    conn = sqlite3.connect(db)
    with conn:
        triggers = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'")
        triggers = triggers.fetchall()
        for name, _ in triggers:
            conn.execute(f"DROP TRIGGER {name}")
        conn.execute(sql)
        for _, text in triggers:
            conn.execute(text)
    conn.close()


def _first(db: Path, sql: str):
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql).fetchone()[0]
    finally:
        conn.close()


HAND = "(SELECT MIN(id) FROM hands WHERE outcome = 'settled')"
CASES = {
    "seats": (f"UPDATE hands SET seats = '[{{broken' WHERE id = {HAND}", "seats"),
    "winners": (f"UPDATE hands SET winners = '{{x' WHERE id = {HAND}", "winners"),
    "payload": (
        f"UPDATE events SET payload = '[' WHERE hand_id = {HAND} AND seq = "
        f"(SELECT MAX(seq) FROM events WHERE hand_id = {HAND})",
        "event",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_hand_row_that_is_not_json_is_named_not_an_internal_error(
    gm, host_copy: Path, case: str
) -> None:
    hand = str(_first(host_copy, f"SELECT {HAND}"))
    sql, named = CASES[case]
    _edit(host_copy, sql)
    commands = [("hands", "show", hand), ("hands", "show", hand, "--json")]
    if case != "payload":
        commands.append(("hands", "list", "--limit", "0"))
    for command in commands:
        run = gm(*command, "--db", host_copy, expect=1)
        assert "internal error" not in run.stderr, (command, run.stderr)
        assert named in run.stderr and "the store was edited" in run.stderr, (command, run.stderr)
    assert gm("audit", "--db", host_copy, expect=1).returncode == 1


def test_a_gm_outcome_a_config_and_a_balance_that_are_not_what_gmtool_wrote(
    gm, host_copy: Path
) -> None:
    _edit(host_copy, "UPDATE gm_actions SET outcome = '{' WHERE id = 1")
    for command in (("gm", "log"), ("gm", "log", "--json")):
        run = gm(*command, "--db", host_copy, expect=1)
        assert "GM action 1's outcome" in run.stderr and "internal error" not in run.stderr
    _edit(host_copy, "UPDATE configs SET compiled = '{bad'")
    for command in (("players", "list"), ("players", "show", "bot-003", "--json")):
        run = gm(*command, "--db", host_copy, expect=1)
        assert "deployed config" in run.stderr and "internal error" not in run.stderr
    _edit(host_copy, "UPDATE players SET coins = 'lots' WHERE name = 'bot-003'")
    run = gm(
        "players",
        "adjust",
        "bot-003",
        "5",
        "--reason",
        "x",
        "--db",
        host_copy,
        "--as",
        OPERATOR,
        expect=1,
    )
    assert "bot-003's coins in the store are 'lots'" in run.stderr, run.stderr
    assert "internal error" not in run.stderr


@pytest.mark.parametrize(
    "seats",
    ['{"a": {"player": "bot-003", "coins": 5}}', '["bot-003", 7, null, [1]]'],
    ids=["an object", "an array of no objects"],
)
def test_a_seat_list_of_valid_json_but_no_seats_is_skipped_by_the_player_filters(
    gm, host_copy: Path, seats: str
) -> None:
    """Valid JSON that is not a list of seats (an object, an array holding a bare string)
    is skipped by `hands list --player` and `players show` as text that is not JSON is,
    not a stop with SQLite's "malformed JSON"; the audit finds the edit."""
    hand = _first(host_copy, f"SELECT {HAND}")
    player = _first(
        host_copy,
        "SELECT json_extract(value, '$.player') FROM hands h, json_each(h.seats) "
        f"WHERE h.id = {hand}",
    )
    before = gm.json(
        "hands", "list", "--player", player, "--limit", "0", "--json", "--db", host_copy
    )
    _edit(host_copy, f"UPDATE hands SET seats = '{seats}' WHERE id = {hand}")
    listed = gm.json(
        "hands", "list", "--player", player, "--limit", "0", "--json", "--db", host_copy
    )
    assert [h["id"] for h in listed] == [h["id"] for h in before if h["id"] != hand]
    shown = gm("players", "show", player, "--db", host_copy)
    assert "malformed" not in shown.stderr and player in shown.stdout
    assert gm("audit", "--db", host_copy, expect=1).returncode == 1


# Values of a type gmtool never writes in their column (the outside attack run of
# 2026-12-05): each stopped `gmtool audit` (or `hands show`) with an internal error, so
# a one-byte edit left no report on anything else. Now the rows are named, exit 1.
TYPE_EDITS = {
    "a blob for a player's kind": (
        "UPDATE players SET kind = X'ff' WHERE name = 'bot-003'",
        "players row 'bot-003': kind holds blob",
    ),
    "a blob for a hand's seats": (
        f"UPDATE hands SET seats = X'5b5d' WHERE id = {HAND}",
        "hands row",
    ),
    "text for an event's hand": (
        f"UPDATE events SET hand_id = 'zz' WHERE hand_id = {HAND} AND seq = "
        f"(SELECT MAX(seq) FROM events WHERE hand_id = {HAND})",
        "hand_id holds text",
    ),
}


@pytest.mark.parametrize("case", sorted(TYPE_EDITS))
def test_audit_names_a_value_of_a_type_gmtool_never_writes(gm, host_copy: Path, case: str) -> None:
    sql, named = TYPE_EDITS[case]
    _edit(host_copy, sql)
    run = gm("audit", "--db", host_copy, "--json", expect=1)
    assert "internal error" not in run.stderr, run.stderr
    problems = json.loads(run.stdout)["problems"]
    assert any(p["kind"] == "row_type" and named in p["detail"] for p in problems), problems


def test_a_config_whose_compiled_rules_are_a_number_is_a_finding(gm, host_copy: Path) -> None:
    _edit(host_copy, "UPDATE configs SET compiled = 1.5")
    run = gm("audit", "--db", host_copy, expect=1)
    assert "internal error" not in run.stderr and "not a JSON object" in run.stdout, run.stdout


def test_hands_show_names_an_event_sequence_number_edited_into_text(gm, host_copy: Path) -> None:
    hand = str(_first(host_copy, f"SELECT {HAND}"))
    _edit(
        host_copy,
        f"UPDATE events SET seq = 'zz' WHERE hand_id = {hand} AND seq = "
        f"(SELECT MAX(seq) FROM events WHERE hand_id = {hand})",
    )
    for command in (("hands", "show", hand), ("hands", "export", hand, "--format", "json")):
        run = gm(*command, "--db", host_copy, expect=1)
        assert "internal error" not in run.stderr, (command, run.stderr)
        assert "seq holds text" in run.stderr, (command, run.stderr)
