"""The GM console (issue 6): tables, players, hands, kick, close, GM log, audit, errors,
help; every test that involves the store once per backend (issue 26), SQLite and
PostgreSQL, with the same assertions.

Live checks run the real host in this process on virtual time (tests/hosting.py), on a
real store: a test plays the host until the situation it needs (a player away on
their turn, a hand that has just begun), and the console reads the store while the host
is still, so what it shows can be checked exactly against the host's own state. One
end-to-end test drives a real `gmtool house run` through `gmtool tables kick`, waiting
for what the host says, never for a fixed time. Everything else reads the session's
host-produced database (`host_store`: on PostgreSQL a copy of its rows made once a
module), or a copy of it of its own where the test writes. Every command is the installed
console script in a subprocess, its exit code asserted, and never a traceback.
"""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import psycopg
import pytest
from backends import (  # noqa: F401  (pytest finds the fixtures by their names)
    BACKENDS,
    Located,
    carry,
    deployed_store_fixture,
    pg_server_fixture,
)
from conftest import KICKS_WANTED, copy_db, copy_made
from helpers import query
from hosting import VirtualHost
from postgres import Databases, url_of

from gmtool.cli.render_tables import command_lines
from gmtool.engine.view import public_view
from gmtool.house.commands import COMMAND_POLL_S
from gmtool.house.host import HostOptions
from gmtool.ops.demo import SHIPPED as PROFILES
from gmtool.ops.tables import CommandFailed
from gmtool.store import tables as table_store

OPERATOR, SUPPORT = "boss", "sue"  # added by the conftest fixtures
# The module's host: ten tables of every system with chaos (stalls, disconnects, escapes).
LIVE = HostOptions(tables=10, speed=1.0, chaos=0.3, seed="console", grace=1.0)
# The module's host runs its virtual wall clock far ahead of the real one
# (hosting.VIRTUAL_EPOCH). The console reads a snapshot at max(real now, published_at)
# (render_tables.table_summaries): a host whose clock is ahead is read at the moment it
# published, as a still host should be; one whose clock is behind the real one would
# show every countdown at 0.
# A snapshot this young (game seconds) is "fresh". After any snapshot, the next action
# that can end or start a hand, or change an owner table's phase, comes at least 0.5 game
# seconds later: bots think, stall or are away first (house/table.py play_turn,
# owner_host.py; only a disconnect is published at once, and it ends nothing). A GM
# command is picked up within a poll of the host's queue. So a command sent right after
# a fresh snapshot lands in exactly the state the test has just read.
FRESH_S = 0.1
assert FRESH_S + COMMAND_POLL_S < 0.5
README = Path(__file__).resolve().parents[1] / "README.md"


def _query(store: Located, sql: str, params: tuple = ()) -> list:
    """Rows of one query on either backend, by position or by column name: a SQLite file
    through a connection of its own, as before; PostgreSQL through the store's own (its
    `?` placeholders)."""
    if not store.postgres:
        return query(Path(store.db), sql, params)
    with store.open() as opened:
        return list(opened.all(sql, params))


def _config(store: Located, config_id: str) -> dict:
    return json.loads(
        _query(store, "SELECT compiled FROM configs WHERE config_id = ?", (config_id,))[0][0]
    )


def _active_config_id(store: Located, profile: str) -> str:
    return _query(
        store,
        "SELECT config_id FROM deployments WHERE profile_id = ? AND active = 1 "
        "ORDER BY id DESC LIMIT 1",
        (profile,),
    )[0][0]


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text)


# -- the stores, on both backends -----------------------------------------------------------


def _database(store: Located) -> str:
    return store.db.rsplit("/", 1)[1]


def _clone(base: Located, server: Databases, home: Path) -> Located:
    """A new database made from `base`'s (CREATE DATABASE ... TEMPLATE: its files copied by
    the server, no row sent again), with `base`'s home files under the new name in `home`:
    a copy a test may change, as `copy_db` makes of a SQLite store."""
    source = _database(base)
    name = server.clone(source)  # dropped with the module's other databases
    home.mkdir(mode=0o700)
    for kept in base.home.iterdir():
        target = home / kept.name.replace(source, name, 1)
        if kept.is_dir():
            shutil.copytree(kept, target)
        else:
            shutil.copy2(kept, target)
    return Located("postgresql", url_of(name), home)


def _row_counts(store: Located) -> dict[str, int]:
    return {
        table: _query(store, f"SELECT COUNT(*) FROM {table}")[0][0]
        for table in ("hands", "events", "ledger", "gm_actions", "gm_commands")
    }


@pytest.fixture(scope="module", params=BACKENDS, name="host_store")
def host_store_fixture(
    request: pytest.FixtureRequest, host_db: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Located]:
    """The session's host-produced store (`host_db`: five systems played with chaos, kicks,
    a close, an adjustment) on each backend, carried to PostgreSQL once a module: the
    tests that take it only read it (`host_store_copy` is for those that write)."""
    store = carry(request.param, host_db, request, tmp_path_factory.mktemp("host-store"))
    written = _row_counts(store)
    yield store
    assert _row_counts(store) == written, "a test wrote to the shared store: use host_store_copy"


@pytest.fixture
def host_store_copy(
    host_store: Located, host_db: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> Located:
    """A private copy of `host_store` on its backend: the SQLite file copied (`copy_db`),
    or a new PostgreSQL database made from the carried one (`_clone`)."""
    if not host_store.postgres:
        return Located("sqlite", str(copy_db(host_db, tmp_path)), tmp_path)
    return _clone(host_store, request.getfixturevalue("pg_server"), tmp_path / "home")


def _evidence(store: Located) -> list[str]:
    """`--db` and what the audit, `hands show|export|replay` check a store's evidence
    against, the hosts' verifier key and witness folder: beside a SQLite file they are
    found; a PostgreSQL store has no file, so they are given (`--key`, `--witness`: the
    hosts' home holds them, its key by the database's name, its witness folder by the name
    the store records)."""
    if not store.postgres:
        return ["--db", store.db]
    (witness,) = [path for path in store.home.iterdir() if path.name.endswith(".witness")]
    key = store.home / f"{_database(store)}.checkpoint.pub"
    return ["--db", store.db, "--key", str(key), "--witness", str(witness)]


@pytest.fixture(scope="module", params=BACKENDS)
def live(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    deployed_template: Path,
) -> Iterator[tuple[Located, VirtualHost]]:
    """A host playing ten tables of every system with chaos, on virtual time, on each
    backend (the five profiles deployed, `boss` and `sue`: a copy of `deployed_template`);
    between the test's steps it is still, and the console reads it at rest. Stopped after
    the module."""
    folder = tmp_path_factory.mktemp("console")
    store = carry(request.param, copy_made(deployed_template, folder), request, folder)
    host = VirtualHost(store.db, LIVE, **store.host_options())
    try:
        host.run_until(host.running_players, what="a running hand")
        yield store, host
        host.stop()
        assert not [m for m in host.messages if "internal error" in m], host.messages
    finally:
        host.close()


# -- what the host published (the rows the console reads) ---------------------------------


def _snapshots(host: VirtualHost) -> dict[str, dict]:
    """Each open table's live snapshot, as the host last published it."""
    return {row["id"]: row["live"] or {} for row in table_store.list_tables(host.store)}


def _running(host: VirtualHost) -> dict[str, dict]:
    """The running hand of each table that has one (its public view, as published)."""
    return {
        table: live["running"] for table, live in _snapshots(host).items() if live.get("running")
    }


def _fresh(host: VirtualHost, live: dict) -> bool:
    """Published less than FRESH_S game seconds ago (see FRESH_S)."""
    return host.clock.wall() - live["published_at"] < FRESH_S


def _away_on_turn(host: VirtualHost) -> list[tuple[str, str]]:
    """(table, player) where the player to act is disconnected (their window runs)."""
    return [
        (table, running["to_act"])
        for table, running in _running(host).items()
        if not next(p for p in running["players"] if p["name"] == running["to_act"])["connected"]
    ]


# -- tables list / show -------------------------------------------------------------------


def _check_running_summary(store: Located, table: dict) -> None:
    """A running table's summary against the rules and the store."""
    assert table["system"] in PROFILES and table["status"] == "open"
    assert table["config_id"] == _active_config_id(store, table["system"])
    config = _config(store, table["config_id"])
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


def _check_against_the_host(host: VirtualHost, table: dict) -> None:
    """What the console shows of a table's hand is the host's state now, exactly (every
    input to a hand publishes a snapshot; seating may change between publications)."""
    hosted = host.host.tables[table["id"]]
    assert table["hand"] == hosted.recorder.hand_id
    hand = hosted.current_hand()
    if not table.get("players"):
        assert hand is None or hand.is_over
        return
    view = public_view(hand)
    assert (table["to_act"], table["pot"], table["street"]) == (
        view["to_act"],
        view["pot"],
        view["street"],
    )
    keys = ("name", "total", "folded", "connected", "showing", "seen")
    assert [{k: p[k] for k in keys} for p in table["players"]] == [
        {k: p[k] for k in keys} for p in view["players"]
    ]
    assert [p["coins"] for p in table["players"]] == [
        host.host.pool.coins[p["name"]] for p in view["players"]
    ]


def test_tables_list_and_show_json_and_text(live, gm) -> None:
    """System, room, config, players, coins, pot, street, whose turn, seconds left, and
    disconnected players with their reconnect countdown when it is their turn."""
    store, host = live

    def wanted():
        games = {_snapshots(host)[t]["game"] for t in _running(host)}
        return games >= {"stud5", "three-card"} and _away_on_turn(host)

    table_id, player = host.run_until(wanted, what="a player away on their turn")[0]
    listed = gm.json("tables", "list", "--db", store.db, "--json")
    assert [t["id"] for t in listed] == sorted(  # every table the host keeps open
        table.id for table in host.host.tables.values() if not table.closed
    )
    for table in listed:
        assert {"id", "system", "room", "config_id", "seated", "hand", "status"} <= set(table)
        _check_against_the_host(host, table)
        if table.get("players"):
            _check_running_summary(store, table)
    assert {t["game"] for t in listed if t.get("players")} >= {"stud5", "three-card"}

    shown = gm.json("tables", "show", table_id, "--db", store.db, "--json")
    assert shown == next(t for t in listed if t["id"] == table_id)  # the same still host
    away = next(p for p in shown["players"] if p["name"] == player)
    assert shown["to_act"] == player and not away["connected"] and not away["folded"]
    timeouts = _config(store, shown["config_id"])["timeouts"]
    window = timeouts["reconnect_min"] * 60
    # The snapshot was published as they disconnected (their turn's clock starts then),
    # and the host has stood still since, less than a watch step (0.05 s) later.
    assert window - 0.1 <= away["reconnect_left_s"] <= window
    assert timeouts["action_s"] - 0.1 <= shown["seconds_left"] <= timeouts["action_s"]

    wide = gm.env(COLUMNS="400")  # every column: a pipe is 200 wide, and rows vary in width
    row = next(
        line
        for line in gm("tables", "list", "--db", store.db, env=wide).stdout.splitlines()
        if table_id in line
    )
    text = gm("tables", "show", table_id, "--db", store.db).stdout
    assert f"disconnected: {player} ({window}s to reconnect)" in text, text
    assert f"to act {player} ({timeouts['action_s']} s left)" in text, text
    assert row.count(player) == 2, (row, text)  # to act, and away


def test_tables_show_one_table(live, gm) -> None:
    store, host = live
    table_id = host.run_until(host.running_players, what="a running hand")[0][0]
    shown = gm.json("tables", "show", table_id, "--db", store.db, "--json")
    assert shown["id"] == table_id and shown["system"] in PROFILES
    assert shown == next(
        t for t in gm.json("tables", "list", "--db", store.db, "--json") if t["id"] == table_id
    )
    _check_against_the_host(host, shown)
    text = gm("tables", "show", table_id, "--db", store.db).stdout
    assert text.startswith(
        f"table {table_id}: {shown['system']} / {shown['room']} "
        f"({shown['game']}), host live, snapshot "
    )
    assert (
        f"config {shown['config_id']}, hand {shown['hand']} (#{shown['hand_number']} "
        "at this table)" in text
    )
    assert f"pot {shown['pot']:,}, to act {shown['to_act']}" in text
    for player in shown["players"]:
        assert re.search(
            rf"^  {re.escape(player['name'])} +coins +{player['coins']:,} ", text, re.MULTILINE
        ), text


def test_players_show_a_seated_player_names_the_table(live, gm) -> None:
    store, host = live
    table_id, player = host.run_until(host.running_players, what="a running hand")[0]
    seat = _snapshots(host)[table_id]["seated"].index(player)
    shown = gm.json("players", "show", player, "--db", store.db, "--json")
    assert shown["table"] == {"table_id": table_id, "seat": seat}
    text = gm("players", "show", player, "--db", store.db).stdout
    assert f"table: {table_id} seat {seat}" in text


# -- kick and close through the host -------------------------------------------------------


def _escape_ends_the_hand(table_id: str) -> bool:
    """Coin rooms whose escapes end the hand (forfeit_to_banker, S19)."""
    return (
        table_id.split("-")[0] in ("qq", "video", "straight")
        and "training" not in table_id
        and "normal" not in table_id
    )


def _fresh_hands(host: VirtualHost, tables=lambda table_id: True) -> list[str]:
    """Tables among `tables` whose running hand was published FRESH_S ago or less: a GM
    command sent now lands in that very hand."""
    snapshots = _snapshots(host)
    return [table for table in _running(host) if tables(table) and _fresh(host, snapshots[table])]


def test_kick_is_acknowledged_within_a_second_and_prints_the_settlement(live, gm) -> None:
    """G2: a kick during a running hand is an escape (forfeit_to_banker ends the hand)."""
    store, host = live
    table_id = host.run_until(
        lambda: _fresh_hands(host, _escape_ends_the_hand), what="a fresh hand in a coin room"
    )[0]
    running = _running(host)[table_id]
    hand_id = _snapshots(host)[table_id]["hand"]
    kicked = next(p for p in running["players"] if not p["folded"])
    player = kicked["name"]

    outcome = host.command(OPERATOR, "kick", table_id, player, "collusion report")

    command = _query(store, "SELECT * FROM gm_commands ORDER BY id DESC LIMIT 1")[0]
    assert (
        command["kind"],
        command["table_id"],
        command["player"],
        command["status"],
        command["issued_by"],
    ) == ("kick", table_id, player, "done", OPERATOR)
    assert (_at(command["acked_at"]) - _at(command["issued_at"])).total_seconds() < 1.0
    assert json.loads(command["outcome"]) == {k: v for k, v in outcome.items() if k != "command"}
    assert outcome["command"] == command["id"]
    assert (outcome["during_hand"], outcome["kicked"], outcome["escape_policy"]) == (
        True,
        player,
        "forfeit_to_banker",
    )
    settlement = outcome["settlement"]
    entries = settlement["entries"]
    assert sum(e["delta"] for e in entries) == 0
    charge = min(running["pot"], kicked["coins"])  # D-9: never more than they held
    assert charge > 0
    assert [(e["delta"], e["reason"]) for e in entries if e["player"] == player] == [
        (-charge, "escape")
    ]
    assert sorted((e["delta"], e["reason"]) for e in entries if e["player"] != player) == [
        (0, "returned")
    ] * (len(entries) - 2) + [(charge, "escape_win")]
    assert (outcome["hand"], outcome["pot"]) == (hand_id, running["pot"])
    winner = next(e["player"] for e in entries if e["reason"] == "escape_win")
    charged = (
        f"all they held when the hand started, of the {running['pot']:,} on the table (S19, D-9)"
        if charge < running["pot"]
        else "the whole pot on the table (S19)"
    )
    assert command_lines(outcome) == [
        (
            f"kicked {player} during hand {hand_id}: an escape (G2) under the profile's "
            f"escape_policy forfeit_to_banker: the hand ended at once; {player} is charged "
            f"{charge:,}, {charged}, and {winner} wins it; every other stake is returned"
        ),
        "settlement: "
        + ", ".join(f"{e['player']} {e['delta']:+,} ({e['reason']})" for e in entries),
    ]

    kick = _query(
        store,
        "SELECT hand_id, payload FROM events WHERE type = 'kick' AND "
        "table_id = ? ORDER BY id DESC LIMIT 1",
        (table_id,),
    )[0]
    assert kick["hand_id"] == hand_id and json.loads(kick["payload"])["player"] == player
    assert _query(store, "SELECT outcome FROM hands WHERE id = ?", (hand_id,))[0][0] == "settled"
    assert sorted(
        tuple(r)
        for r in _query(store, "SELECT player, delta FROM ledger WHERE hand_id = ?", (hand_id,))
    ) == sorted((e["player"], e["delta"]) for e in entries if e["delta"])
    log = gm.json("gm", "log", "--db", store.db, "--json")[-1]
    assert (log["actor"], log["action"], log["target"], log["reason"]) == (
        OPERATOR,
        "kick",
        f"{table_id}/{player}",
        "collusion report",
    )
    assert log["outcome"]["ok"] is True and log["outcome"]["command"] == command["id"]
    assert player not in host.host.tables[table_id].seated
    assert player in host.host.pool.benched  # not seated again by this host


def test_kick_of_a_player_not_seated_fails_with_one_message(live, gm) -> None:
    """The host refuses it (exit code 2); the command and the attempt are on record."""
    store, host = live
    table_id = host.run_until(host.running_players, what="a running hand")[0][0]
    with pytest.raises(CommandFailed) as failed:
        host.command(OPERATOR, "kick", table_id, "nobody-here", "x")
    assert str(failed.value) == f"nobody-here is not seated at {table_id}"
    assert failed.value.exit_code == 2
    command = _query(store, "SELECT * FROM gm_commands ORDER BY id DESC LIMIT 1")[0]
    assert (command["table_id"], command["player"], command["status"]) == (
        table_id,
        "nobody-here",
        "failed",
    )
    log = gm.json("gm", "log", "--db", store.db, "--json")[-1]
    assert (log["actor"], log["action"], log["target"]) == (
        OPERATOR,
        "kick",
        f"{table_id}/nobody-here",
    )
    assert log["outcome"]["ok"] is False
    assert log["outcome"]["error"] == f"nobody-here is not seated at {table_id}"


def test_close_voids_the_running_hand_with_every_stake_returned(live, gm) -> None:
    store, host = live
    table_id = host.run_until(
        lambda: [
            t
            for t in _fresh_hands(host, lambda t: not t.startswith("lequ"))
            if _running(host)[t]["pot"] > 0
        ],
        what="a fresh hand with stakes",
    )[0]
    hand_id = _snapshots(host)[table_id]["hand"]
    outcome = host.command(OPERATOR, "close", table_id, None, "maintenance")
    assert {k: v for k, v in outcome.items() if k != "command"} == {
        "ok": True,
        "closed": table_id,
        "voided_hand": hand_id,
    }
    assert command_lines(outcome) == [
        f"closed {table_id}; hand {hand_id} voided, every stake returned"
    ]
    hand = _query(store, "SELECT * FROM hands WHERE id = ?", (hand_id,))[0]
    assert hand["outcome"] == "voided" and hand["seed"]
    assert _query(store, "SELECT COUNT(*) FROM ledger WHERE hand_id = ?", (hand_id,))[0][0] == 0
    voided = _query(
        store, "SELECT payload FROM events WHERE hand_id = ? AND type = 'hand_voided'", (hand_id,)
    )
    assert json.loads(voided[0][0])["stakes"] == "returned"
    for seat in json.loads(hand["seats"]):  # every stake back: coins as the hand found them
        coins = _query(store, "SELECT coins FROM players WHERE name = ?", (seat["player"],))[0][0]
        assert coins == seat["coins"], seat
    tables = {t["id"]: t for t in gm.json("tables", "list", "--db", store.db, "--json", "--closed")}
    assert tables[table_id]["status"] == "closed" and tables[table_id]["seated"] == []
    assert table_id not in {t["id"] for t in gm.json("tables", "list", "--db", store.db, "--json")}
    report = gm.json("hands", "show", hand_id, "--db", store.db, "--json")
    assert report["outcome"] == "voided" and report["seed_verifies"] is True
    log = gm.json("gm", "log", "--db", store.db, "--json")[-1]
    assert (log["actor"], log["action"], log["target"], log["reason"]) == (
        OPERATOR,
        "close",
        table_id,
        "maintenance",
    )
    host.advance(30)  # a closed table stays closed: no hand starts there again
    assert (
        _query(store, "SELECT MAX(id) FROM hands WHERE table_id = ?", (table_id,))[0][0] == hand_id
    )


def test_the_cli_kicks_a_player_of_a_real_host_during_a_hand(
    deployed_store: Located, gm, start_host
) -> None:
    """End to end: `gmtool tables kick` against a real `gmtool house run` process. The
    console and the host are separate processes on the real clock, so a hand may end (or
    the player fold or leave) between the look and the kick: then kick again."""
    store = deployed_store
    host = start_host(
        store.db,
        *store.host_args(),
        "--system",
        "qq-showhand",
        "--tables",
        "3",
        "--speed",
        "1",
        "--grace",
        "1",
        "--seed",
        "console-e2e",
    )

    def targets():
        return [(t, p) for t, p in gm.running_players(store.db) if _escape_ends_the_hand(t)]

    table_id, player = host.wait_until(targets, timeout=120)[0]
    refused = gm(
        "tables",
        "kick",
        table_id,
        player,
        "--reason",
        "x",
        "--db",
        store.db,
        "--as",
        SUPPORT,
        expect=1,
        env=store.env(),
    )
    assert (refused.stdout, refused.stderr.strip()) == (
        "",
        f"error: refused: '{SUPPORT}' is support; only operators may kick (logged)",
    )
    unseated = gm(
        "tables",
        "kick",
        table_id,
        "nobody-here",
        "--reason",
        "x",
        "--db",
        store.db,
        "--as",
        OPERATOR,
        "--timeout",
        "60",
        expect=2,
        env=store.env(),
    )
    assert (unseated.stdout, unseated.stderr.strip()) == (
        "",
        f"error: nobody-here is not seated at {table_id}",
    )

    for _ in range(20):
        table_id, player = host.wait_until(targets, timeout=120)[0]
        run = gm(
            "tables",
            "kick",
            table_id,
            player,
            "--reason",
            "collusion report",
            "--db",
            store.db,
            "--as",
            OPERATOR,
            "--timeout",
            "60",
            expect=None,
            env=store.env(),
        )
        if run.returncode == 0 and ": an escape (G2)" in run.stdout:
            break
        # Too late for this hand: they were kicked between hands, or while a hand they had
        # folded in ran (issue 23: not "between hands"), or had already left.
        if run.returncode == 2:
            assert (run.stdout, run.stderr.strip()) == (
                "",
                f"error: {player} is not seated at {table_id}",
            ), run
        else:
            assert (run.returncode, run.stderr) == (0, ""), run
            assert re.fullmatch(
                rf"kicked {re.escape(player)} (between hands: no escape \(G2\), nothing "
                r"was at stake|while hand \d+ ran, with nothing at stake in it \(folded or "
                r"not dealt in\): no escape \(G2\)),? (and )?the kick moved none of their "
                r"coins; the seat is free\n",
                run.stdout,
            ), run
    else:
        pytest.fail("no kick landed during a hand in 20 tries")

    command = _query(
        store,
        "SELECT * FROM gm_commands WHERE table_id = ? AND player = ? ORDER BY id DESC LIMIT 1",
        (table_id, player),
    )[0]
    assert command["status"] == "done"
    outcome = json.loads(command["outcome"])
    assert outcome["during_hand"] is True and outcome["kicked"] == player
    entries = outcome["settlement"]["entries"]
    assert sum(e["delta"] for e in entries) == 0
    assert any(e["player"] == player and e["delta"] < 0 for e in entries)
    charge = next(-e["delta"] for e in entries if e["reason"] == "escape")
    winner = next(e["player"] for e in entries if e["reason"] == "escape_win")
    assert run.stdout.splitlines() == [
        (
            f"kicked {player} during hand {outcome['hand']}: an escape (G2) under the "
            f"profile's escape_policy forfeit_to_banker: the hand ended at once; {player} is "
            f"charged {charge:,}, "
            + (
                f"all they held when the hand started, of the {outcome['pot']:,} on the "
                "table (S19, D-9)"
                if charge < outcome["pot"]
                else "the whole pot on the table (S19)"
            )
            + f", and {winner} wins it; every other stake is returned"
        ),
        "settlement: "
        + ", ".join(f"{e['player']} {e['delta']:+,} ({e['reason']})" for e in entries),
    ]
    host.wait_for_line(
        rf"^command {command['id']} \(kick {re.escape(table_id)} "
        rf"{re.escape(player)}\)"
    )
    kick = _query(
        store,
        "SELECT hand_id, payload FROM events WHERE type = 'kick' AND "
        "table_id = ? ORDER BY id DESC LIMIT 1",
        (table_id,),
    )[0]
    assert json.loads(kick["payload"])["player"] == player
    assert (
        _query(store, "SELECT outcome FROM hands WHERE id = ?", (kick["hand_id"],))[0][0]
        == "settled"
    )
    log = gm.json("gm", "log", "--db", store.db, "--json")[-1]
    assert (log["actor"], log["action"], log["target"], log["reason"]) == (
        OPERATOR,
        "kick",
        f"{table_id}/{player}",
        "collusion report",
    )
    assert host.stop() == 0
    assert re.search(r"^stopped: \d+ hand\(s\) settled$", host.output, re.MULTILINE), host.output


def test_kick_between_hands_at_an_owner_table_frees_the_seat(
    deployed_store: Located, gm, virtual_host
) -> None:
    """G2: a kick between hands frees the seat; the player is not dealt into the next hand."""
    store = deployed_store
    host = virtual_host(
        store,
        systems=["lequ-showhand"],
        tables=1,
        speed=1.0,
        grace=1.0,
        seed="owner-kick",
    )
    table_id = "lequ-showhand-table-1"

    def waiting_player():
        live = _snapshots(host).get(table_id, {})
        if (
            live.get("phase") in ("agreeing", "countdown")
            and len(live["seated"]) >= 2
            and _fresh(host, live)
        ):
            return [p for p in live["seated"] if p != live["owner"]]
        return None

    player = host.run_until(waiting_player, what="a player waiting for the next hand")[0]
    hands_before = _query(store, "SELECT COALESCE(MAX(id), 0) FROM hands")[0][0]
    outcome = host.command(OPERATOR, "kick", table_id, player, "between hands")
    assert {k: v for k, v in outcome.items() if k != "command"} == {
        "ok": True,
        "kicked": player,
        "during_hand": False,
    }
    assert command_lines(outcome) == [
        f"kicked {player} between hands: no escape (G2), nothing was at stake and the kick "
        "moved none of their coins; the seat is free"
    ]
    # the snapshot published with the kick, before its acknowledgement, shows the seat free
    shown = gm.json("tables", "show", table_id, "--db", store.db, "--json")
    assert player not in shown["seated"] and shown.get("players") is None
    assert gm.json("players", "show", player, "--db", store.db, "--json")["table"] is None

    def next_hand():
        return host.store.all(
            "SELECT seats FROM hands WHERE table_id = ? AND id > ? ORDER BY id LIMIT 1",
            (table_id, hands_before),
        )

    seats = json.loads(host.run_until(next_hand, what="the next hand")[0]["seats"])
    assert player not in {s["player"] for s in seats} and len(seats) >= 2
    host.advance(300)  # nor any later hand of this run (the kicked player sits out)
    assert not _query(
        store,
        "SELECT id FROM hands WHERE id > ? AND seats LIKE ?",
        (hands_before, f'%"player":"{player}"%'),
    )


def test_an_adjustment_reaches_the_host_before_the_next_hand(
    deployed_store: Located, gm, virtual_host
) -> None:
    """A hand started after `players adjust` seats the player with the adjusted coins."""
    store = deployed_store
    host = virtual_host(
        store,
        systems=["qq-showhand"],
        tables=3,
        speed=10.0,  # the game's seconds ten times as fast (fewer checkpoints and lease renewals)
        grace=1.0,
        seed="adjust",
    )
    host.run_until(host.running_players, what="a running hand")
    seated = {p for t in gm.json("tables", "list", "--db", store.db, "--json") for p in t["seated"]}
    idle = [
        r[0]
        for r in _query(store, "SELECT name FROM players WHERE kind = 'bot' ORDER BY name")
        if r[0] not in seated
    ]
    # Two of them: each adjustment waits for the still host's checkpoint (HOST_WAIT_S of
    # the real clock) before the console signs one with the host's key.
    idle = idle[:2]
    assert len(idle) == 2
    for name in idle:  # 1,200 coins: enough for the junior room, not for middle (Q1)
        coins = _query(store, "SELECT coins FROM players WHERE name = ?", (name,))[0][0]
        gm(
            "players",
            "adjust",
            "--db",
            store.db,
            "--as",
            OPERATOR,
            "--reason",
            "test",
            "--",
            name,
            str(1200 - coins),
            env=store.env(),
        )
    # The host stood still meanwhile: every hand after these started after the adjustments.
    # (The console wrote them on the real clock, the host writes on its virtual one: order
    # by ids, not by time.)
    hands_before = _query(store, "SELECT COALESCE(MAX(id), 0) FROM hands")[0][0]
    ledger_before = _query(store, "SELECT MAX(id) FROM ledger")[0][0]

    def hands_with_them():
        rows = host.store.all(
            "SELECT id, tier, seats, started_at FROM hands WHERE id > ? ORDER BY id",
            (hands_before,),
        )
        return [r for r in rows if {s["player"] for s in json.loads(r["seats"])} & set(idle)]

    first = host.run_until(hands_with_them, what="a hand with an adjusted player")[0]
    # their first hand since: they sit down with exactly the adjusted coins
    assert {s["coins"] for s in json.loads(first["seats"]) if s["player"] in idle} == {1200}
    host.advance(600)
    host.stop()
    hands = hands_with_them()
    assert {hand["tier"] for hand in hands} <= {"training", "junior"}  # not middle (Q1)
    for hand in hands:
        for seat in json.loads(hand["seats"]):
            balance = host.store.all(  # (the stopped host's store: still open, at rest)
                "SELECT COALESCE(SUM(delta), 0) FROM ledger WHERE player = ? "
                "AND (id <= ? OR created_at < ?)",
                (seat["player"], ledger_before, hand["started_at"]),
            )[0][0]
            assert seat["coins"] == balance, (hand["id"], hand["tier"], seat, balance)
    assert not _query(store, "SELECT name, coins FROM players WHERE coins < 0")


def test_the_host_stops_within_its_grace_while_a_player_is_away(
    deployed_store: Located, gm, virtual_host
) -> None:
    """A stop (SIGTERM): running hands get the grace period, then are voided; a bot waiting
    out its reconnect window (minutes of game time) must not hold the stop up."""
    store = deployed_store
    grace = 1.0
    host = virtual_host(
        store,
        systems=["qq-showhand"],
        tables=3,
        speed=1.0,
        chaos=0.6,
        grace=grace,
        seed="grace",
    )
    table_id, _ = host.run_until(lambda: _away_on_turn(host), what="a player away on their turn")[0]
    away_hand = _snapshots(host)[table_id]["hand"]
    running = {t: live["hand"] for t, live in _snapshots(host).items() if live.get("running")}

    asked = host.now()
    report = host.stop()
    took = host.now() - asked
    # the grace, then at most a step of the host's loop (0.1 s) on each side of it and a
    # poll of the command queue (the poller ends at its next look)
    assert grace <= took <= grace + 0.1 + 0.1 + COMMAND_POLL_S + 0.01, took
    assert "stopping: no new hands; running hands may finish" in host.messages
    assert away_hand in report.voided_on_stop  # their window runs for minutes
    # every hand running at the request either finished within the grace or was voided
    assert sorted(
        report.finished_on_stop + [t for t, h in running.items() if h in report.voided_on_stop]
    ) == sorted(running)
    for hand_id in report.voided_on_stop:
        hand = _query(store, "SELECT outcome FROM hands WHERE id = ?", (hand_id,))[0]
        assert hand["outcome"] == "voided"
        voided = _query(
            store,
            "SELECT payload FROM events WHERE hand_id = ? AND type = 'hand_voided'",
            (hand_id,),
        )
        assert json.loads(voided[0][0])["reason"] == "host_stopped"
    assert _query(store, "SELECT COUNT(*) FROM hands WHERE outcome = 'running'")[0][0] == 0
    assert gm.json("tables", "list", "--db", store.db, "--json") == []  # nothing is hosted now


# -- players show ---------------------------------------------------------------------------


def _ladder(store: Located) -> list[dict]:
    return _config(store, _active_config_id(store, "video-showhand"))["ladder"]["titles"]


@pytest.mark.parametrize(
    "coins, title",
    [(51_200, "经理"), (51_199, "副经理"), (100, "待业"), (99, None), (838_860_800, "财神")],
)
def test_players_show_title_by_the_s23_ladder(
    host_store_copy: Located, gm, coins: int, title: str | None
) -> None:
    """S23: titles by coin holdings, 24 steps each double the last; below 100 no title."""
    assert [s["at"] for s in _ladder(host_store_copy)] == [100 * 2**i for i in range(24)]
    player = "bot-003"
    held = _query(host_store_copy, "SELECT coins FROM players WHERE name = ?", (player,))[0][0]
    gm(
        "players",
        "adjust",
        "--db",
        host_store_copy.db,
        "--as",
        OPERATOR,
        "--reason",
        "ladder test",
        "--",
        player,
        str(coins - held),
        env=host_store_copy.env(),
    )
    shown = gm.json("players", "show", player, "--db", host_store_copy.db, "--json")
    assert shown["coins"] == coins and shown["titles"]["video-showhand"] == title
    text = gm("players", "show", player, "--db", host_store_copy.db).stdout
    assert f"title: {title or 'no title'} (video-showhand)" in text


def test_players_show_json(host_store: Located, gm) -> None:
    """Coins, score and tallies (S22), table, recent hands with their deltas, the ledger."""
    name = _query(
        host_store, "SELECT player FROM ledger WHERE gm_action_id IS NOT NULL ORDER BY id LIMIT 1"
    )[0][0]
    shown = gm.json("players", "show", name, "--db", host_store.db, "--json")
    row = dict(_query(host_store, "SELECT * FROM players WHERE name = ?", (name,))[0])
    for key in ("coins", "score", "wins", "losses", "draws", "escapes", "disconnects", "kind"):
        assert shown[key] == row[key], key
    assert shown["table"] is None  # the host has stopped: nobody is seated
    assert shown["recent_hands"] and [h["id"] for h in shown["recent_hands"]] == sorted(
        (h["id"] for h in shown["recent_hands"]), reverse=True
    )
    for hand in shown["recent_hands"]:
        seats = json.loads(
            _query(host_store, "SELECT seats FROM hands WHERE id = ?", (hand["id"],))[0][0]
        )
        assert name in {s["player"] for s in seats}
        assert (
            hand["delta"]
            == _query(
                host_store,
                "SELECT COALESCE(SUM(delta), 0) FROM ledger WHERE hand_id = ? AND player = ?",
                (hand["id"], name),
            )[0][0]
        )
    ledger = shown["ledger"]
    assert [r["id"] for r in ledger] == sorted((r["id"] for r in ledger), reverse=True)
    adjust = next(r for r in ledger if r["gm_action_id"] is not None)
    assert adjust["hand_id"] is None and adjust["reason"] == "gm_adjust"
    text = gm("players", "show", name, "--db", host_store.db).stdout
    assert text.startswith(f"{name} (bot): {row['coins']:,} coins, score {row['score']}")
    assert (
        f"tallies: {row['wins']} won, {row['losses']} lost, {row['draws']} drawn, "
        f"{row['escapes']} escaped, {row['disconnects']} disconnected"
    ) in text


def test_players_list_richest_first(host_store: Located, gm) -> None:
    """Every player with their coins and score, richest first, and nobody seated (the
    host has stopped); `--limit` keeps the richest."""
    listed = gm.json("players", "list", "--limit", "0", "--db", host_store.db, "--json")
    rows = _query(host_store, "SELECT name, kind, coins, score FROM players")
    assert listed["total"] == len(rows) == len(listed["players"])
    players = listed["players"]
    assert sorted((p["name"], p["kind"], p["coins"], p["score"]) for p in players) == sorted(
        tuple(row) for row in rows
    )
    assert [p["coins"] for p in players] == sorted((p["coins"] for p in players), reverse=True)
    assert all(p["table"] is None for p in players)
    top = gm.json("players", "list", "--limit", "3", "--db", host_store.db, "--json")
    assert top == {"players": players[:3], "total": len(rows)}
    text = gm("players", "list", "--limit", "3", "--db", host_store.db).stdout
    assert text.startswith(f"showing the richest 3 of {len(rows)} players"), text
    assert f"{players[0]['coins']:,}" in text and players[0]["name"] in text


# -- hands list / export -----------------------------------------------------------------


def _ids(gm, store: Located, *flags: str) -> list[int]:
    return [
        h["id"]
        for h in gm.json("hands", "list", "--db", store.db, "--json", "--limit", "100000", *flags)
    ]


def test_hands_list_filters(host_store: Located, gm) -> None:
    """--player, --table, --since and --until, alone and together, newest first."""
    everything = _ids(gm, host_store)
    assert everything == sorted(everything, reverse=True)
    assert len(everything) == _query(host_store, "SELECT COUNT(*) FROM hands")[0][0]
    table = _query(
        host_store, "SELECT table_id FROM hands GROUP BY table_id ORDER BY COUNT(*) DESC"
    )[0][0]
    by_table = _ids(gm, host_store, "--table", table)
    assert by_table and by_table == [
        r[0]
        for r in _query(
            host_store, "SELECT id FROM hands WHERE table_id = ? ORDER BY id DESC", (table,)
        )
    ]
    player = "bot-002"
    by_player = _ids(gm, host_store, "--player", player)
    assert by_player and by_player == [
        r[0]
        for r in _query(
            host_store,
            "SELECT id FROM hands WHERE seats LIKE ? ORDER BY id DESC",
            (f'%"player":"{player}"%',),
        )
    ]
    middle = _query(
        host_store,
        "SELECT started_at FROM hands ORDER BY started_at LIMIT 1 OFFSET ?",
        (len(everything) // 2,),
    )[0][0]
    since, until = _ids(gm, host_store, "--since", middle), _ids(gm, host_store, "--until", middle)
    assert since and until and sorted(since + until, reverse=True) == everything
    assert not set(since) & set(until)
    for hand in gm.json("hands", "list", "--db", host_store.db, "--json", "--since", middle):
        assert hand["started_at"] >= middle
    both = _ids(gm, host_store, "--table", table, "--player", player, "--since", middle)
    assert both == [h for h in since if h in by_table and h in by_player]
    assert len(gm.json("hands", "list", "--db", host_store.db, "--json", "--limit", "3")) == 3
    text = gm("hands", "list", "--db", host_store.db, "--table", table, "--limit", "5").stdout
    assert text.startswith("showing the newest 5 of ") and table in text


def _showdown_hand(store: Located) -> int:
    return _query(
        store,
        "SELECT h.id FROM hands h JOIN events e ON e.hand_id = h.id AND e.type = "
        "'showdown' JOIN ledger l ON l.hand_id = h.id WHERE h.outcome = 'settled' "
        "ORDER BY h.id LIMIT 1",
    )[0][0]


def test_hands_export_markdown_and_json(host_store: Located, gm) -> None:
    """A dispute report: settlement, commitment, seed, replay verdict and the timeline."""
    hand_id = _showdown_hand(host_store)
    row = _query(host_store, "SELECT * FROM hands WHERE id = ?", (hand_id,))[0]
    report = gm.json("hands", "export", hand_id, "--format", "json", *_evidence(host_store))
    assert (report["hand"], report["commitment"], report["seed"]) == (
        hand_id,
        row["commitment"],
        row["seed"],
    )
    assert report["seed_verifies"] is True and report["config_id"] == row["config_id"]
    assert report["replay"] == {
        "hand": hand_id,
        "ok": True,
        "problems": [],
        "events_checked": report["replay"]["events_checked"],
    }
    entries = report["settlement"]["entries"]
    ledger = _query(host_store, "SELECT player, delta FROM ledger WHERE hand_id = ?", (hand_id,))
    assert sorted((r[0], r[1]) for r in ledger) == sorted(
        (e["player"], e["delta"]) for e in entries if e["delta"]
    )
    markdown = gm("hands", "export", hand_id, "--format", "md", *_evidence(host_store)).stdout
    assert markdown.startswith(f"# Hand {hand_id} dispute report")
    for entry in entries:
        assert f"| {entry['player']} | {entry['delta']:+,} | {entry['reason']} |" in markdown
    assert row["commitment"] in markdown and f"seed: {row['seed']} verifies" in markdown
    assert "## Verification" in markdown
    assert "the engine reproduces every event and the settlement" in markdown
    assert "showdown:" in markdown and "settlement:" in markdown


def _delete_showdown(store: Located, hand_id: int) -> None:
    """Delete a hand's showdown event as an attacker does, past the append-only guard: on
    SQLite its trigger dropped; on PostgreSQL in a superuser's session that fires no
    trigger (`session_replication_role = replica`)."""
    delete = "DELETE FROM events WHERE hand_id = ? AND type = 'showdown'"
    if not store.postgres:
        conn = sqlite3.connect(store.db)
        with conn:
            conn.execute("DROP TRIGGER events_no_delete")
            conn.execute(delete, (hand_id,))
        conn.close()
        return
    with psycopg.connect(store.db, autocommit=True) as conn:
        conn.execute("SET session_replication_role = replica")
        deleted = conn.execute(delete.replace("?", "%s"), (hand_id,)).rowcount
    assert deleted == 1


def test_hands_export_of_a_tampered_hand_says_mismatch(host_store_copy: Located, gm) -> None:
    """Since issue 24 a hand whose evidence does not verify is not exported (exit 1,
    nothing written): the error names what does not verify; `hands replay` says MISMATCH."""
    hand_id = _showdown_hand(host_store_copy)
    _delete_showdown(host_store_copy, hand_id)
    for output_format in ("md", "json"):
        run = gm("hands", "export", hand_id, "--format", output_format, "--db", host_store_copy.db,
                 expect=1)  # fmt: skip
        assert run.stdout == "" and "evidence does not verify" in run.stderr
        assert "replay: " in run.stderr and "chain_gap: " in run.stderr
    assert "MISMATCH" in gm("hands", "replay", hand_id, "--db", host_store_copy.db, expect=1).stdout


# -- the whole store read back: tables, GM log, hands, audit --------------------------------


def _log_size(store: Located) -> int:
    return _query(store, "SELECT size FROM log_state")[0][0]


def test_tables_list_after_the_host_stopped(host_store: Located, gm) -> None:
    """No table is live once the host has stopped; `--closed` lists every table the store
    keeps, as it keeps it: the one a GM closed, the others stopped with the host."""
    assert gm.json("tables", "list", "--db", host_store.db, "--json") == []
    listed = gm.json("tables", "list", "--closed", "--db", host_store.db, "--json")
    rows = _query(host_store, "SELECT id, profile_id, tier, status FROM tables ORDER BY id")
    assert [(t["id"], t["system"], t["room"], t["status"]) for t in listed] == [
        tuple(row) for row in rows
    ]
    closed = _query(host_store, "SELECT target FROM gm_actions WHERE action = 'close'")
    assert [t["id"] for t in listed if t["status"] == "closed"] == [closed[0][0]]
    assert {t["status"] for t in listed if t["id"] != closed[0][0]} == {"stopped"}
    assert all(t["seated"] == [] and t["hand"] is None for t in listed)


def test_gm_log_lists_every_action_as_the_store_keeps_it(host_store: Located, gm) -> None:
    """Who, what, target, reason and outcome of every GM action, in order: the deploys, the
    kicks during hands, support's refused kick, the close and, last, the adjustment."""
    log = gm.json("gm", "log", "--db", host_store.db, "--json")
    rows = _query(
        host_store, "SELECT id, actor, action, target, reason, outcome FROM gm_actions ORDER BY id"
    )
    assert [
        (e["id"], e["actor"], e["action"], e["target"], e["reason"], e["outcome"]) for e in log
    ] == [(*row[:5], json.loads(row[5])) for row in rows]
    kicks = [e for e in log if e["action"] == "kick" and e["actor"] == OPERATOR]
    assert len(kicks) == KICKS_WANTED
    assert all(e["reason"] == "fixture: abusive chat" and e["outcome"]["ok"] for e in kicks)
    refused = next(e for e in log if e["actor"] == SUPPORT)
    assert (refused["action"], refused["outcome"]) == (
        "kick",
        {"ok": False, "refused": f"'{SUPPORT}' is support; only operators may kick"},
    )
    last = log[-1]
    assert (last["actor"], last["action"], last["target"], last["reason"]) == (
        OPERATOR,
        "adjust",
        "bot-002",
        "fixture: goodwill",
    )
    assert last["outcome"]["delta"] == 500 and last["outcome"]["ok"] is True
    assert gm.json("gm", "log", "--limit", "1", "--db", host_store.db, "--json") == [last]
    text = gm("gm", "log", "--db", host_store.db, env=gm.env(COLUMNS="400")).stdout
    assert f"REFUSED: '{SUPPORT}' is support; only operators may kick" in text, text
    coins = last["outcome"]
    assert f"ok: {coins['coins_before']:,} -> {coins['coins']:,} coins (+500)" in text, text


def test_hands_show_and_replay_verify_a_hand_against_the_signed_checkpoint(
    host_store: Located, gm
) -> None:
    """A settled hand's record, its seed and evidence verified, and its replay matching,
    checked against the newest checkpoint the host signed (with the hosts' key)."""
    hand_id = _showdown_hand(host_store)
    row = _query(host_store, "SELECT * FROM hands WHERE id = ?", (hand_id,))[0]
    events = _query(host_store, "SELECT COUNT(*) FROM events WHERE hand_id = ?", (hand_id,))[0][0]
    shown = gm.json("hands", "show", hand_id, *_evidence(host_store), "--json")
    assert (shown["hand"], shown["table"], shown["outcome"], shown["commitment"]) == (
        hand_id,
        row["table_id"],
        "settled",
        row["commitment"],
    )
    assert shown["seed"] == row["seed"] and shown["seed_verifies"] is True
    assert len(shown["events"]) == events
    size = _log_size(host_store)
    assert shown["evidence"] == {
        "verified": True,
        "problems": [],
        "notes": [],
        "checkpoint": {"file": f"{size:012d}.checkpoint", "size": size},
    }
    replay = gm.json("hands", "replay", hand_id, *_evidence(host_store), "--json")
    assert (replay["hand"], replay["ok"], replay["problems"]) == (hand_id, True, [])
    assert replay["events_checked"] == events
    text = gm("hands", "replay", hand_id, *_evidence(host_store)).stdout
    assert text.splitlines() == [
        f"hand {hand_id}: replay matches, {events} events and the settlement identical",
        "evidence: verified (events chain, settlement and ledger rows, evidence log records, "
        f"seed; its records are in the newest signed checkpoint, of {size:,} records)",
    ], text


def test_audit_with_the_hosts_key_finds_nothing(host_store: Located, gm) -> None:
    """Every hand checked, no problem, and the log extends the newest checkpoint the host
    signed (the adjustment after the host stopped was covered before it returned)."""
    hands = _query(host_store, "SELECT COUNT(*) FROM hands")[0][0]
    run = gm("audit", *_evidence(host_store), "--json")
    assert run.stderr == "", run.stderr  # (a witness it could not find would be a warning)
    report = json.loads(run.stdout)
    assert (report["hands_checked"], report["problems"]) == (hands, [])
    size = _log_size(host_store)
    checkpoint = report["checkpoint"]
    assert (checkpoint["size"], checkpoint["records"], checkpoint["extended"]) == (
        size,
        size,
        True,
    )
    witness = _evidence(host_store)[-1] if host_store.postgres else f"{host_store.db}.witness"
    assert Path(checkpoint["witness"]).resolve() == Path(witness).resolve()
    text = gm("audit", *_evidence(host_store)).stdout
    assert text.startswith(
        f"{hands} hand(s) checked: ok; the log ({size} records) extends the checkpoint "
        f"signed at {size} ({checkpoint['file']} in "
    ), text


# -- errors ---------------------------------------------------------------------------------

ERRORS = {
    "tables show": ["tables", "show", "no-such-table"],
    "tables watch": ["tables", "watch", "no-such-table", "--count", "1"],
    "tables kick": [
        "tables",
        "kick",
        "no-such-table",
        "bot-001",
        "--reason",
        "x",
        "--as",
        OPERATOR,
    ],
    "tables close": ["tables", "close", "no-such-table", "--as", OPERATOR],
    "players show": ["players", "show", "no-such-player"],
    "players adjust": [
        "players",
        "adjust",
        "no-such-player",
        "5",
        "--reason",
        "x",
        "--as",
        OPERATOR,
    ],
    "hands show": ["hands", "show", "999999"],
    "hands export": ["hands", "export", "999999"],
    "hands replay": ["hands", "replay", "999999"],
    "hands replay --json": ["hands", "replay", "999999", "--json"],
    "hands export --format": ["hands", "export", "1", "--format", "pdf"],
    "hands show not a number": ["hands", "show", "seven"],
}


# The GM commands among them write: a failed command is logged (on PostgreSQL covered with
# the hosts' key, found in their home). The others only read, the shared store.
LOGGED = ("tables kick", "tables close", "players adjust")


@pytest.mark.parametrize("case", [case for case in ERRORS if case not in LOGGED])
def test_unknown_table_player_or_hand_is_exit_2_with_one_message(
    host_store: Located, gm, case: str
) -> None:
    _exit_2_with_one_message(gm(*ERRORS[case], "--db", host_store.db, expect=None), case)


@pytest.mark.parametrize("case", LOGGED)
def test_unknown_table_or_player_in_a_gm_command_is_exit_2_with_one_message(
    host_store_copy: Located, gm, case: str
) -> None:
    store = host_store_copy
    _exit_2_with_one_message(
        gm(*ERRORS[case], "--db", store.db, expect=None, env=store.env()), case
    )


def _exit_2_with_one_message(run, case: str) -> None:
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
    missing = [
        " ".join(path) or "gmtool"
        for path, command in _commands()
        if not (command.help or command.short_help or "").strip()
    ]
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
    leaves = [
        path for path, command in _commands() if path and getattr(command, "commands", None) is None
    ]
    assert [" ".join(p) for p in leaves if p not in documented] == []
