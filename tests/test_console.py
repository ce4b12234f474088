"""The GM console (issue 6): tables, players, hands, kick, close, errors, help.

Live checks run against a real `gmtool house run` on a real SQLite file; everything else
reads copies of the session's host-produced database. Every command is the installed
console script in a subprocess, its exit code asserted, and never a traceback.
"""

from __future__ import annotations

import json
import re
import sqlite3
import time
from datetime import datetime
from pathlib import Path

import pytest

from gmtool.house.demo import SHIPPED as PROFILES
from helpers import query as _query

OPERATOR = "boss"  # added by the conftest fixtures
LIVE_ARGS = ("--tables", "10", "--speed", "10", "--chaos", "0.3", "--duration", "300",
             "--grace", "1")
README = Path(__file__).resolve().parents[1] / "README.md"



def _config(db: Path, config_id: str) -> dict:
    return json.loads(_query(db, "SELECT compiled FROM configs WHERE config_id = ?",
                             (config_id,))[0][0])


def _active_config_id(db: Path, profile: str) -> str:
    return _query(db, "SELECT config_id FROM deployments WHERE profile_id = ? AND active = 1 "
                      "ORDER BY id DESC LIMIT 1", (profile,))[0][0]


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text)


@pytest.fixture(scope="module")
def live(tmp_path_factory, gm, launch_host):
    """A host playing ten tables of every system at 10x with chaos; stopped after the module."""
    db = tmp_path_factory.mktemp("console") / "live.db"
    gm.deploy_all(db)
    gm.add_roles(db)
    host = launch_host(db, *LIVE_ARGS)
    host.wait_until(lambda: gm.running_players(db), timeout=30)
    yield db, host
    host.stop()


# -- tables list / show -------------------------------------------------------------------

def _check_running_summary(db: Path, table: dict) -> None:
    """A running table's summary against the rules and the store."""
    assert table["system"] in PROFILES and table["status"] == "open"
    assert table["config_id"] == _active_config_id(db, table["system"])
    config = _config(db, table["config_id"])
    assert table["room"] in {tier["id"] for tier in config["tiers"]}
    assert table["game"] == config["game"]
    names = [p["name"] for p in table["players"]]
    assert table["to_act"] in names
    assert not next(p for p in table["players"] if p["name"] == table["to_act"])["folded"]
    assert table["pot"] == sum(p["total"] for p in table["players"])
    if config["game"] == "stud5":
        assert 2 <= table["street"] <= 5
    else:
        assert table["street"] is None and all(p["showing"] == [] for p in table["players"])
    assert 0 <= table["seconds_left"] <= config["timeouts"]["action_s"]
    window = config["timeouts"]["reconnect_min"] * 60
    for player in table["players"]:
        assert isinstance(player["coins"], int) and player["coins"] >= 0
        if player["connected"]:
            assert "reconnect_left_s" not in player
        elif player["name"] == table["to_act"]:
            assert 0 <= player["reconnect_left_s"] <= window  # the window runs on their turn
        else:
            assert player["reconnect_left_s"] is None


def test_tables_list_and_show_json_and_text(live, gm) -> None:
    """System, room, config, players, coins, pot, street, whose turn, seconds left, and
    disconnected players with their reconnect countdown when it is their turn."""
    db, host = live
    seen = {"stud5": 0, "three-card": 0, "disconnected_on_turn": 0}

    def look():
        for table in gm.json("tables", "list", "--db", db, "--json"):
            assert {"id", "system", "room", "config_id", "seated", "hand", "status"} <= set(table)
            if not table.get("players"):
                continue
            _check_running_summary(db, table)
            seen[table["game"]] += 1
            away = [p for p in table["players"]
                    if not p["connected"] and p["name"] == table["to_act"]]
            if away and not seen["disconnected_on_turn"]:
                seen["disconnected_on_turn"] += _check_disconnected_text(gm, db, table["id"],
                                                                         away[0]["name"])
        return all(seen.values())

    host.wait_until(look, timeout=60, every=0.3)


def _check_disconnected_text(gm, db: Path, table_id: str, player: str) -> bool:
    """The text views say who is away and how long their reconnect window still runs;
    False if the player came back (or the hand ended) between the reads."""
    def away_on_turn() -> bool:
        shown = gm.json("tables", "show", table_id, "--db", db, "--json")
        away = next((p for p in shown.get("players") or [] if p["name"] == player), None)
        return away is not None and not away["connected"] and shown["to_act"] == player

    before = away_on_turn()
    row = next(line for line in gm("tables", "list", "--db", db).stdout.splitlines()
               if table_id in line)
    text = gm("tables", "show", table_id, "--db", db).stdout
    if not (before and away_on_turn()):
        return False
    assert re.search(rf"disconnected: {player} \(\d+s to reconnect\)", text), text
    assert f"to act {player}" in text and row.count(player) == 2, (row, text)  # to act, away
    return True


def test_tables_show_one_table(live, gm) -> None:
    db, host = live
    table_id, _ = host.wait_until(lambda: gm.running_players(db))[0]
    shown = gm.json("tables", "show", table_id, "--db", db, "--json")
    assert shown["id"] == table_id and shown["system"] in PROFILES
    text = gm("tables", "show", table_id, "--db", db).stdout
    assert text.startswith(f"table {table_id}: {shown['system']} / {shown['room']}")
    assert f"config {shown['config_id']}" in text


def test_players_show_a_seated_player_names_the_table(live, gm) -> None:
    db, host = live
    table_id, player = host.wait_until(lambda: gm.running_players(db))[0]
    shown = gm.json("players", "show", player, "--db", db, "--json")
    still = player in gm.json("tables", "show", table_id, "--db", db, "--json")["seated"]
    if still:  # (they may have left between the reads)
        assert shown["table"]["table_id"] == table_id
        assert isinstance(shown["table"]["seat"], int)
    text = gm("players", "show", player, "--db", db).stdout
    if shown["table"]:
        assert f"table: {shown['table']['table_id']} seat {shown['table']['seat']}" in text


# -- kick and close through the host -------------------------------------------------------

def _non_training(gm, db: Path) -> list[tuple[str, str]]:
    """(table, player) in running hands of coin rooms whose escapes end the hand (S19)."""
    return [(t, p) for t, p in gm.running_players(db)
            if t.split("-")[0] in ("qq", "video", "straight") and "training" not in t
            and "normal" not in t]


def _kick_until(gm, db: Path, host, targets, reason: str, landed: str, tries: int):
    """Kick the first (table, player) `targets()` offers until the outcome says `landed`
    (the moment may pass between looking and kicking); the table, player and run."""
    for _ in range(tries):
        table_id, player = host.wait_until(targets, timeout=60)[0]
        run = gm("tables", "kick", table_id, player, "--reason", reason, "--db", db,
                 "--as", OPERATOR, expect=None)
        if run.returncode == 0 and landed in run.stdout:
            return table_id, player, run
    pytest.fail(f"no kick landed {landed} in {tries} tries")


def test_kick_is_acknowledged_within_a_second_and_prints_the_settlement(live, gm) -> None:
    """G2: a kick during a running hand is an escape (forfeit_to_banker ends the hand)."""
    db, host = live
    table_id, player, run = _kick_until(gm, db, host, lambda: _non_training(gm, db),
                                        "collusion report", "during a hand", tries=8)
    command = _query(db, "SELECT * FROM gm_commands WHERE table_id = ? AND player = ? "
                         "ORDER BY id DESC LIMIT 1", (table_id, player))[0]
    assert command["status"] == "done"
    assert (_at(command["acked_at"]) - _at(command["issued_at"])).total_seconds() < 1.0
    outcome = json.loads(command["outcome"])
    assert outcome["during_hand"] is True and outcome["kicked"] == player
    lines = run.stdout.splitlines()
    assert lines[0] == (f"kicked {player} during a hand: an escape under policy "
                        "forfeit_to_banker (RULES G2, S19)")
    settlement = outcome["settlement"]
    assert sum(e["delta"] for e in settlement["entries"]) == 0
    assert lines[1] == "settlement: " + ", ".join(
        f"{e['player']} {e['delta']:+d} ({e['reason']})" for e in settlement["entries"])
    assert any(e["player"] == player and e["delta"] < 0 for e in settlement["entries"])
    kick = _query(db, "SELECT e.hand_id, e.payload FROM events e WHERE e.type = 'kick' AND "
                      "e.table_id = ? ORDER BY e.id DESC LIMIT 1", (table_id,))[0]
    assert json.loads(kick["payload"])["player"] == player
    assert _query(db, "SELECT outcome FROM hands WHERE id = ?", (kick["hand_id"],))[0][0] == \
        "settled"
    log = gm.json("gm", "log", "--db", db, "--json")[-1]
    assert (log["actor"], log["action"], log["target"], log["reason"]) == (
        OPERATOR, "kick", f"{table_id}/{player}", "collusion report")


def test_kick_of_a_player_not_seated_fails_with_one_message(live, gm) -> None:
    db, host = live
    table_id, _ = host.wait_until(lambda: gm.running_players(db))[0]
    run = gm("tables", "kick", table_id, "nobody-here", "--reason", "x", "--db", db,
             "--as", OPERATOR, expect=2)
    assert run.stdout == ""
    assert run.stderr.strip() == f"error: nobody-here is not seated at {table_id}"


def _fresh_hands(gm, db: Path) -> list[str]:
    """Tables whose running hand has just begun (street 2, or any three-card hand)."""
    return [t["id"] for t in gm.json("tables", "list", "--db", db, "--json")
            if t.get("players") and t["street"] in (None, 2) and not t["id"].startswith("lequ")]


def test_close_voids_the_running_hand_with_every_stake_returned(live, gm) -> None:
    db, host = live
    before = _query(db, "SELECT MAX(id) FROM ledger")[0][0]
    for _ in range(3):  # a hand may end between the look and the close
        table_id = host.wait_until(lambda: _fresh_hands(gm, db), timeout=60)[0]
        run = gm("tables", "close", table_id, "--reason", "maintenance", "--db", db, "--as",
                 OPERATOR)
        match = re.fullmatch(rf"closed {re.escape(table_id)}; hand (\d+) voided, every stake "
                             r"returned\n", run.stdout)
        if match:
            break
        assert run.stdout == f"closed {table_id}\n"
    else:
        pytest.fail("no close landed during a running hand in 3 tries")
    hand_id = int(match.group(1))
    hand = _query(db, "SELECT * FROM hands WHERE id = ?", (hand_id,))[0]
    assert hand["outcome"] == "voided" and hand["seed"]
    assert _query(db, "SELECT COUNT(*) FROM ledger WHERE hand_id = ?", (hand_id,))[0][0] == 0
    voided = _query(db, "SELECT payload FROM events WHERE hand_id = ? AND type = 'hand_voided'",
                    (hand_id,))
    assert json.loads(voided[0][0])["stakes"] == "returned"
    for seat in json.loads(hand["seats"]):  # coins moved only by other hands since
        later = _query(db, "SELECT COALESCE(SUM(delta), 0) FROM ledger WHERE player = ? AND "
                           "id > ?", (seat["player"], before))[0][0]
        coins = _query(db, "SELECT coins FROM players WHERE name = ?", (seat["player"],))[0][0]
        assert coins - later == seat["coins"], seat
    tables = {t["id"]: t for t in gm.json("tables", "list", "--db", db, "--json", "--closed")}
    assert tables[table_id]["status"] == "closed"
    assert table_id not in {t["id"] for t in gm.json("tables", "list", "--db", db, "--json")}
    report = gm.json("hands", "show", hand_id, "--db", db, "--json")
    assert report["outcome"] == "voided" and report["seed_verifies"] is True


def test_kick_between_hands_at_an_owner_table_frees_the_seat(deployed_db: Path, gm,
                                                            start_host) -> None:
    """G2: a kick between hands frees the seat; the player is not dealt into the next hand."""
    db = deployed_db
    host = start_host(db, "--system", "lequ-showhand", "--tables", "1", "--speed", "2",
                      "--duration", "120", "--grace", "1")
    table_id = "lequ-showhand-table-1"

    def waiting_player():
        run = gm("tables", "show", table_id, "--db", db, "--json", expect=None)
        table = json.loads(run.stdout) if run.returncode == 0 else {}  # (not opened yet)
        if table.get("phase") in ("agreeing", "countdown") and len(table["seated"]) >= 2:
            return [(table_id, p) for p in table["seated"] if p != table.get("owner")]
        return None

    _, player, _ = _kick_until(gm, db, host, waiting_player, "between hands",
                               "between hands", tries=6)
    kicked_at = _query(db, "SELECT MAX(acked_at) FROM gm_commands")[0][0]
    # the snapshot published with the kick, before its acknowledgement, shows the seat free
    assert player not in gm.json("tables", "show", table_id, "--db", db, "--json")["seated"]
    next_hand = host.wait_until(lambda: _query(
        db, "SELECT seats FROM hands WHERE table_id = ? AND started_at > ? ORDER BY id LIMIT 1",
        (table_id, kicked_at)), timeout=90)[0]
    assert player not in {s["player"] for s in json.loads(next_hand["seats"])}


def test_an_adjustment_reaches_the_host_before_the_next_hand(deployed_db: Path, gm,
                                                              start_host) -> None:
    """A hand started after `players adjust` seats the player with the adjusted coins."""
    db = deployed_db
    host = start_host(db, "--system", "qq-showhand", "--tables", "3", "--speed", "5",
                      "--duration", "120", "--grace", "1")
    host.wait_until(lambda: gm.running_players(db), timeout=30)
    seated = {p for t in gm.json("tables", "list", "--db", db, "--json") for p in t["seated"]}
    idle = [r[0] for r in _query(db, "SELECT name FROM players WHERE kind = 'bot' ORDER BY name")
            if r[0] not in seated]
    assert idle
    for name in idle:  # 1,200 coins: enough for the junior room, not for middle (Q1)
        coins = _query(db, "SELECT coins FROM players WHERE name = ?", (name,))[0][0]
        gm("players", "adjust", "--db", db, "--as", OPERATOR, "--reason", "test", "--", name,
           str(1200 - coins))
    adjusted_at = _query(db, "SELECT MAX(at) FROM gm_actions")[0][0]

    def hands_with_them():
        rows = _query(db, "SELECT id, tier, seats, started_at FROM hands WHERE started_at > ? "
                          "ORDER BY id", (adjusted_at,))
        return [r for r in rows if {s["player"] for s in json.loads(r["seats"])} & set(idle)]

    for hand in host.wait_until(hands_with_them, timeout=60):
        for seat in json.loads(hand["seats"]):
            balance = _query(db, "SELECT COALESCE(SUM(delta), 0) FROM ledger WHERE player = ? "
                                 "AND created_at < ?", (seat["player"], hand["started_at"]))[0][0]
            assert seat["coins"] == balance, (hand["id"], hand["tier"], seat, balance)
    host.stop()
    assert not _query(db, "SELECT name, coins FROM players WHERE coins < 0")


def test_the_host_stops_within_its_grace_while_a_player_is_away(deployed_db: Path, gm,
                                                                 start_host) -> None:
    """SIGTERM: running hands get --grace seconds, then are voided; a bot waiting out its
    reconnect window (minutes of game time) must not hold the stop up."""
    import signal
    import subprocess

    db = deployed_db
    host = start_host(db, "--system", "qq-showhand", "--tables", "3", "--speed", "2",
                      "--chaos", "0.6", "--duration", "300", "--grace", "1")

    def someone_away():
        return [p for t in gm.json("tables", "list", "--db", db, "--json")
                for p in t.get("players") or [] if not p["connected"]]

    host.wait_until(someone_away, timeout=60)
    started = time.monotonic()
    host.proc.send_signal(signal.SIGTERM)
    try:
        host.proc.wait(timeout=8)
    except subprocess.TimeoutExpired:
        host.proc.kill()  # by its own pid; the test has failed
        host.proc.wait()
        pytest.fail(f"the host was still running {time.monotonic() - started:.0f} s after "
                    "SIGTERM with --grace 1")
    assert "voided on stop" in host.output or "finished their hand" in host.output


# -- players show ---------------------------------------------------------------------------

def _ladder(db: Path) -> list[dict]:
    return _config(db, _active_config_id(db, "video-showhand"))["ladder"]["titles"]


@pytest.mark.parametrize("coins, title", [(51_200, "经理"), (51_199, "副经理"),
                                          (100, "待业"), (99, None), (838_860_800, "财神")])
def test_players_show_title_by_the_s23_ladder(host_copy: Path, gm, coins: int,
                                              title: str | None) -> None:
    """S23: titles by coin holdings, 24 steps each double the last; below 100 no title."""
    assert [s["at"] for s in _ladder(host_copy)] == [100 * 2 ** i for i in range(24)]
    player = "bot-003"
    held = _query(host_copy, "SELECT coins FROM players WHERE name = ?", (player,))[0][0]
    gm("players", "adjust", "--db", host_copy, "--as", OPERATOR, "--reason", "ladder test",
       "--", player, str(coins - held))
    shown = gm.json("players", "show", player, "--db", host_copy, "--json")
    assert shown["coins"] == coins and shown["titles"]["video-showhand"] == title
    text = gm("players", "show", player, "--db", host_copy).stdout
    assert f"title: {title or 'no title'} (video-showhand)" in text


def test_players_show_json(host_db: Path, gm) -> None:
    """Coins, score and tallies (S22), table, recent hands with their deltas, the ledger."""
    name = _query(host_db, "SELECT player FROM ledger WHERE gm_action_id IS NOT NULL LIMIT 1")[0][0]
    shown = gm.json("players", "show", name, "--db", host_db, "--json")
    row = dict(_query(host_db, "SELECT * FROM players WHERE name = ?", (name,))[0])
    for key in ("coins", "score", "wins", "losses", "draws", "escapes", "disconnects", "kind"):
        assert shown[key] == row[key], key
    assert shown["table"] is None  # the host has stopped: nobody is seated
    assert shown["recent_hands"] and [h["id"] for h in shown["recent_hands"]] == sorted(
        (h["id"] for h in shown["recent_hands"]), reverse=True)
    for hand in shown["recent_hands"]:
        seats = json.loads(_query(host_db, "SELECT seats FROM hands WHERE id = ?",
                                  (hand["id"],))[0][0])
        assert name in {s["player"] for s in seats}
        assert hand["delta"] == _query(host_db, "SELECT COALESCE(SUM(delta), 0) FROM ledger WHERE "
                                       "hand_id = ? AND player = ?", (hand["id"], name))[0][0]
    ledger = shown["ledger"]
    assert [r["id"] for r in ledger] == sorted((r["id"] for r in ledger), reverse=True)
    adjust = next(r for r in ledger if r["gm_action_id"] is not None)
    assert adjust["hand_id"] is None and adjust["reason"] == "gm_adjust"
    text = gm("players", "show", name, "--db", host_db).stdout
    assert text.startswith(f"{name} (bot): {row['coins']:,} coins, score {row['score']}")
    assert (f"tallies: {row['wins']} won, {row['losses']} lost, {row['draws']} drawn, "
            f"{row['escapes']} escaped, {row['disconnects']} disconnected") in text


# -- hands list / export -----------------------------------------------------------------

def _ids(gm, db: Path, *flags: str) -> list[int]:
    return [h["id"] for h in gm.json("hands", "list", "--db", db, "--json", "--limit", "100000",
                                     *flags)]


def test_hands_list_filters(host_db: Path, gm) -> None:
    """--player, --table, --since and --until, alone and together, newest first."""
    everything = _ids(gm, host_db)
    assert everything == sorted(everything, reverse=True)
    assert len(everything) == _query(host_db, "SELECT COUNT(*) FROM hands")[0][0]
    table = _query(host_db, "SELECT table_id FROM hands GROUP BY table_id ORDER BY COUNT(*) DESC"
                   )[0][0]
    by_table = _ids(gm, host_db, "--table", table)
    assert by_table and by_table == [r[0] for r in _query(
        host_db, "SELECT id FROM hands WHERE table_id = ? ORDER BY id DESC", (table,))]
    player = "bot-002"
    by_player = _ids(gm, host_db, "--player", player)
    assert by_player and by_player == [r[0] for r in _query(
        host_db, "SELECT id FROM hands WHERE seats LIKE ? ORDER BY id DESC",
        (f'%"player":"{player}"%',))]
    middle = _query(host_db, "SELECT started_at FROM hands ORDER BY started_at LIMIT 1 OFFSET ?",
                    (len(everything) // 2,))[0][0]
    since, until = _ids(gm, host_db, "--since", middle), _ids(gm, host_db, "--until", middle)
    assert since and until and sorted(since + until, reverse=True) == everything
    assert not set(since) & set(until)
    for hand in gm.json("hands", "list", "--db", host_db, "--json", "--since", middle):
        assert hand["started_at"] >= middle
    both = _ids(gm, host_db, "--table", table, "--player", player, "--since", middle)
    assert both == [h for h in since if h in by_table and h in by_player]
    assert len(gm.json("hands", "list", "--db", host_db, "--json", "--limit", "3")) == 3
    text = gm("hands", "list", "--db", host_db, "--table", table, "--limit", "5").stdout
    assert text.startswith("5 hand(s)") and table in text


def _showdown_hand(db: Path) -> int:
    return _query(db, "SELECT h.id FROM hands h JOIN events e ON e.hand_id = h.id AND e.type = "
                      "'showdown' JOIN ledger l ON l.hand_id = h.id WHERE h.outcome = 'settled' "
                      "ORDER BY h.id LIMIT 1")[0][0]


def test_hands_export_markdown_and_json(host_db: Path, gm) -> None:
    """A dispute report: settlement, commitment, seed, replay verdict and the timeline."""
    hand_id = _showdown_hand(host_db)
    row = _query(host_db, "SELECT * FROM hands WHERE id = ?", (hand_id,))[0]
    report = gm.json("hands", "export", hand_id, "--format", "json", "--db", host_db)
    assert (report["hand"], report["commitment"], report["seed"]) == (
        hand_id, row["commitment"], row["seed"])
    assert report["seed_verifies"] is True and report["config_id"] == row["config_id"]
    assert report["replay"] == {"hand": hand_id, "ok": True, "problems": [],
                                "events_checked": report["replay"]["events_checked"]}
    entries = report["settlement"]["entries"]
    ledger = _query(host_db, "SELECT player, delta FROM ledger WHERE hand_id = ?", (hand_id,))
    assert sorted((r[0], r[1]) for r in ledger) == sorted(
        (e["player"], e["delta"]) for e in entries if e["delta"])
    markdown = gm("hands", "export", hand_id, "--format", "md", "--db", host_db).stdout
    assert markdown.startswith(f"# Hand {hand_id} dispute report")
    for entry in entries:
        assert f"| {entry['player']} | {entry['delta']:+d} | {entry['reason']} |" in markdown
    assert row["commitment"] in markdown and f"seed: {row['seed']} verifies" in markdown
    assert "## Verification" in markdown
    assert "the engine reproduces every event and the settlement" in markdown
    assert "showdown:" in markdown and "settlement:" in markdown


def test_hands_export_of_a_tampered_hand_says_mismatch(host_copy: Path, gm) -> None:
    hand_id = _showdown_hand(host_copy)
    conn = sqlite3.connect(host_copy)
    with conn:
        conn.execute("DROP TRIGGER events_no_delete")
        conn.execute("DELETE FROM events WHERE hand_id = ? AND type = 'showdown'", (hand_id,))
    conn.close()
    markdown = gm("hands", "export", hand_id, "--format", "md", "--db", host_copy).stdout
    assert "MISMATCH" in markdown
    report = gm.json("hands", "export", hand_id, "--format", "json", "--db", host_copy)
    assert report["replay"]["ok"] is False


# -- errors ---------------------------------------------------------------------------------

ERRORS = {
    "tables show": ["tables", "show", "no-such-table"],
    "tables watch": ["tables", "watch", "no-such-table", "--count", "1"],
    "tables kick": ["tables", "kick", "no-such-table", "bot-001", "--reason", "x",
                    "--as", OPERATOR],
    "tables close": ["tables", "close", "no-such-table", "--as", OPERATOR],
    "players show": ["players", "show", "no-such-player"],
    "players adjust": ["players", "adjust", "no-such-player", "5", "--reason", "x",
                       "--as", OPERATOR],
    "hands show": ["hands", "show", "999999"],
    "hands export": ["hands", "export", "999999"],
    "hands replay": ["hands", "replay", "999999"],
    "hands replay --json": ["hands", "replay", "999999", "--json"],
    "hands export --format": ["hands", "export", "1", "--format", "pdf"],
    "hands show not a number": ["hands", "show", "seven"],
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_unknown_table_player_or_hand_is_exit_2_with_one_message(host_copy: Path, gm,
                                                                 case: str) -> None:
    run = gm(*ERRORS[case], "--db", host_copy, expect=None)  # (failed GM commands are logged)
    assert run.returncode == 2, (run.returncode, run.stdout, run.stderr)
    message = [line for line in (run.stdout + run.stderr).splitlines() if line.strip()]
    if case in ("hands show not a number", "hands export --format"):
        assert message[-1].startswith("Error: Invalid value"), message  # click's usage error
    else:
        assert len(message) == 1, message


# -- help and README ------------------------------------------------------------------------

def _commands():
    """Every visible leaf command as its words, e.g. ("tables", "kick"), with the click object."""
    import typer.main

    from gmtool.cli import app

    def walk(command, path):
        subcommands = getattr(command, "commands", None)
        if subcommands is None:
            yield path, command
            return
        yield path, command
        for name, sub in subcommands.items():
            if not sub.hidden:
                yield from walk(sub, (*path, name))

    yield from walk(typer.main.get_command(app), ())


def test_every_command_has_help_text() -> None:
    missing = [" ".join(path) or "gmtool" for path, command in _commands()
               if not (command.help or command.short_help or "").strip()]
    assert not missing


def test_every_command_appears_in_the_readme_command_list() -> None:
    """README's command table names every command (README is being rewritten: adjust here)."""
    documented = set()
    for cell in re.findall(r"`(gmtool [^`]+)`", README.read_text(encoding="utf-8")):
        words = []
        for word in cell.replace("\\|", "|").split()[1:]:
            if not re.fullmatch(r"[a-z][a-z|-]*", word):
                break
            words.append(word.split("|"))
        paths = [()]
        for choices in words:
            paths = [(*path, choice) for path in paths for choice in choices]
        for path in paths:
            documented.update(path[:i] for i in range(1, len(path) + 1))
    leaves = [path for path, command in _commands()
              if path and getattr(command, "commands", None) is None]
    assert [" ".join(p) for p in leaves if p not in documented] == []
