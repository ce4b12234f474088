"""Issue 23, item 7: hand reports support can hand to a player.

`hands show` and `hands export --format md` of the session's host-produced store (real
subprocesses): a voided hand reads as sentences, every outcome has a settlement section,
every settlement line names the rule behind it (an escape: S19 with D-1, D-9 or D-10
where they applied; folded players; returned stakes; training rooms S22), and the
markdown header names the profile, its version and the tier. A kick during a hand of a
player who had folded is not reported "between hands".
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import OPERATOR, Gmtool
from helpers import query

from gmtool.cli.render_tables import command_lines
from gmtool.sandbox.run import play
from gmtool.sandbox.scenario import load_scenario
from gmtool.store import tables as table_store

SCENARIOS = Path(__file__).resolve().parent.parent / "rules" / "scenarios"
RULE_ID = re.compile(r"^(S\d+|Q\d+|L\d+|H\d+|G\d+|D-\d+)$")


def hands_by(db: Path, sql: str) -> list[int]:
    return [row[0] for row in query(db, sql)]


def settlement_rows(markdown: str) -> list[list[str]]:
    """The rows of the report's settlement table: player, change, why, rules (its reason
    and result columns, as JSON gives them, left out)."""
    section = markdown.split("## Settlement", 1)[1].split("\n## ", 1)[0]
    rows = [
        [cell.strip() for cell in line.strip("|").split(" | ")]
        for line in section.splitlines()
        if line.startswith("| ") and not line.startswith("| player")
    ]
    return [[player, change, why, rules] for player, change, _, _, why, rules in rows]


def signed(text: str) -> int:
    return int(text.replace(",", ""))


def test_a_voided_hand_reads_as_sentences(gm: Gmtool, host_db: Path) -> None:
    voided = hands_by(host_db, "SELECT id FROM hands WHERE outcome = 'voided'")
    assert voided
    for hand in voided:
        out = gm("hands", "show", hand, "--db", host_db).stdout
        assert "detail " not in out and "reason host_stopped" not in out, out
        assert "stakes returned" not in out, out  # "every stake returned", in a sentence
        assert "outcome: the hand was voided: " in out, out
        seats = json.loads(query(host_db, "SELECT seats FROM hands WHERE id = ?", (hand,))[0][0])
        for seat in seats:
            assert re.search(
                rf"^  {re.escape(seat['player'])}\s+\+0  stake returned: the hand was voided "
                r"\(S20\)$",
                out,
                re.MULTILINE,
            ), out
        assert "No coins moved" in out


def test_the_report_of_a_hand_closed_by_a_gm_says_so(gm: Gmtool, host_db: Path) -> None:
    closed = hands_by(
        host_db,
        "SELECT hand_id FROM events WHERE type = 'hand_voided' AND "
        "json_extract(payload, '$.reason') = 'closed by GM'",
    )
    assert closed
    report = gm("hands", "export", closed[0], "--format", "md", "--db", host_db).stdout
    assert "The hand was voided: a GM closed the table during the hand" in report, report
    rows = settlement_rows(report)
    assert rows and all(row[1] == "+0" and row[3] == "S20" for row in rows), rows


@pytest.mark.parametrize(
    "outcome",
    ["showdown", "all_folded", "escape", "all_passed", "open", "voided"],
)
def test_every_outcome_has_a_settlement_section_with_a_rule_on_every_line(
    gm: Gmtool, host_db: Path, outcome: str
) -> None:
    if outcome == "voided":
        hands = hands_by(host_db, "SELECT id FROM hands WHERE outcome = 'voided' LIMIT 3")
    else:
        hands = hands_by(
            host_db,
            "SELECT hand_id FROM events WHERE type = 'settlement' AND "
            f"json_extract(payload, '$.reason') = '{outcome}' LIMIT 3",
        )
    assert hands, outcome
    for hand in hands:
        report = gm("hands", "export", hand, "--format", "md", "--db", host_db).stdout
        assert "## Outcome" in report and "## Settlement" in report, report
        rows = settlement_rows(report)
        entries = gm.json("hands", "show", hand, "--db", host_db, "--json")["settlement"]
        expected = len(entries["entries"]) if entries else len(rows)
        assert len(rows) == expected and rows, report
        assert sum(signed(row[1]) for row in rows) == 0, rows
        for player, change, why, rules in rows:
            assert why, (player, report)
            assert all(RULE_ID.match(rule) for rule in rules.split(", ")), (rules, report)
            assert re.fullmatch(r"[+-]\d{1,3}(,\d{3})*", change), change


def test_an_escape_names_s19_and_the_decision_that_chose_the_winner(
    gm: Gmtool, host_db: Path
) -> None:
    """RULES S19 with D-1 (the banker escaped) or D-10 (the banker had folded) on the
    winner's line and in the outcome; the escapee's line cites S19 (and G2 for a kick);
    everyone else's stake is returned under S19."""
    for rule in ("D-1", "D-10"):
        hands = hands_by(
            host_db,
            "SELECT hand_id FROM events WHERE type = 'banker_replaced' AND "
            f"json_extract(payload, '$.rule') = '{rule}' LIMIT 2",
        )
        assert hands, rule
        for hand in hands:
            report = gm("hands", "export", hand, "--format", "md", "--db", host_db).stdout
            outcome = report.split("## Outcome", 1)[1].split("## Settlement", 1)[0]
            assert "S19" in outcome and rule in outcome, outcome
            winner = next(
                row for row in settlement_rows(report) if "wins" in row[2] or ": win," in row[2]
            )
            assert winner[3].split(", ")[:1] == ["S19"] and rule in winner[3], winner
    kicked = hands_by(
        host_db,
        "SELECT e.hand_id FROM events e JOIN events s ON s.hand_id = e.hand_id AND "
        "s.type = 'settlement' WHERE e.type = 'kick' AND "
        "json_extract(s.payload, '$.reason') = 'escape' AND "
        "json_extract(s.payload, '$.entries[0].reason') != 'training'",
    )
    assert kicked
    out = gm("hands", "show", kicked[0], "--db", host_db).stdout
    assert re.search(r"escaped \(kicked by a GM: [^)]*\): charged .* \(G2, S19", out), out
    assert re.search(r"\+0  stake returned: after an escape .* \(S19\)", out), out


def test_folded_players_lines_say_why_they_pay(gm: Gmtool, host_db: Path) -> None:
    hands = hands_by(
        host_db,
        "SELECT hand_id FROM events WHERE type = 'settlement' AND "
        "json_extract(payload, '$.reason') = 'showdown' AND payload LIKE '%\"folded\"%'",
    )
    assert hands
    out = gm("hands", "show", hands[0], "--db", host_db).stdout
    folded = [line for line in out.splitlines() if "forfeits what they put in" in line]
    assert folded and all(re.search(r"\((S13|S17|S19)[,)]", line) for line in folded), out


def test_the_markdown_header_names_profile_version_and_tier(gm: Gmtool, host_db: Path) -> None:
    hand = gm.json("hands", "show", 9, "--db", host_db, "--json")
    report = gm("hands", "export", 9, "--format", "md", "--db", host_db).stdout
    header = report.split("## ", 1)[0]
    profile = hand["profile"]
    assert f"`{profile['id']}` version {profile['version']}" in header, header
    assert f"tier `{hand['tier']}`" in header and profile["title"] in header, header


@pytest.mark.parametrize(
    ("scenario", "rules"),
    [
        ("stud5/s19-d9-charge-capped-at-coins", "D-9"),
        ("stud5/s19-d10-folded-banker-does-not-win-an-escape", "D-10"),
        ("stud5/s19-d1-banker-escapes", "D-1"),
        ("stud5/s18-reconnect-past-window-escapes", "S18"),
        ("stud5/s19-escape-training-room", "S22"),
        ("three-card/h8-opener-wins", "H8"),
    ],
)
def test_settlement_lines_cite_the_rule_the_engine_applied(scenario: str, rules: str) -> None:
    """The explanation of a hand the engine played from a rule's own scenario names that
    rule (the same function renders `hands show` and `hands export`)."""
    from gmtool.cli.render_settlement import explain

    outcome = play(load_scenario(SCENARIOS / f"{scenario}.toml"))
    events = [{"type": e.type, **e.fields} for e in outcome.events]
    explained = explain({"outcome": "settled", "events": events, "seats": []})
    cited = {rule for line in explained.lines for rule in line.rules.split(", ")}
    assert rules in cited or rules in explained.summary, explained
    assert all(RULE_ID.match(rule) for rule in cited), cited


# -- a kick during a hand is never "between hands" ------------------------------------------


def _folded_in_a_running_hand(store) -> list[tuple[str, str]]:
    out = []
    for row in table_store.list_tables(store):
        running = (row["live"] or {}).get("running")
        if not running or running.get("over"):
            continue
        seated = row["live"].get("seated", [])
        live = [p for p in running["players"] if not p["folded"]]
        if len(live) < 2:
            continue
        out += [
            (row["id"], p["name"])
            for p in running["players"]
            if p["folded"] and p["name"] in seated
        ]
    return out


def test_a_kick_of_a_folded_player_during_a_hand_is_not_between_hands(
    gm: Gmtool, deployed_db: Path, virtual_host
) -> None:
    db = deployed_db
    host = virtual_host(db, tables=3, systems=["qq-showhand"], speed=1.0, seed="kick-folded")
    table, player = host.run_until(
        lambda: _folded_in_a_running_hand(host.store), what="a folded player in a running hand"
    )[0]
    hand = query(db, "SELECT id FROM hands WHERE table_id = ? AND outcome = 'running'", (table,))[
        0
    ][0]
    outcome = host.command(OPERATOR, "kick", table, player, "abusive chat")
    assert outcome["during_hand"] is False and outcome["hand"] == hand, outcome
    said = command_lines(outcome)
    assert "between hands" not in " ".join(said), said
    assert said[0].startswith(f"kicked {player} while hand {hand} ran"), said
    host.stop()
    assert not [m for m in host.messages if "between hands" in m], host.messages
    log = gm("gm", "log", "--db", db).stdout
    assert "between hands" not in log and f"while hand {hand} ran" in log, log


def test_a_running_hand_has_a_settlement_section_saying_none_yet(
    gm: Gmtool, deployed_db: Path, virtual_host
) -> None:
    db = deployed_db
    host = virtual_host(db, tables=1, systems=["qq-showhand"], speed=1.0, seed="running")
    host.run_until(host.running_players, what="a running hand")
    hand = query(db, "SELECT id FROM hands WHERE outcome = 'running'")[0][0]
    report = gm("hands", "export", hand, "--format", "md", "--db", db).stdout
    assert "## Settlement\n\nNone yet: coins move only when the hand ends (S20)." in report
    out = gm("hands", "show", hand, "--db", db).stdout
    assert "outcome: the hand is running: nothing is settled until it ends (S20)" in out
