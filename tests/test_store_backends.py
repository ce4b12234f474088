"""Every repository the console and the host call, on both backends with the same
assertions (issue 26, item 1): players and the ledger, tables and seats, hands and their
events, configs and deployments, GM users, actions and commands, the console's queries,
the evidence log's appends and reads, seed keys and witnesses; and the database itself
refusing to change evidence. `any_store` (tests/backends.py) is a fresh store of each
backend, SQLite and PostgreSQL (on the real server), opened as the commands open it.

Ids are compared as they rise, never as dense counts: PostgreSQL's may skip.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import psycopg
import pytest
from backends import (
    BACKENDS,
    StepClock,
    any_store_fixture,  # noqa: F401 (a fixture)
    location,
    pg_server_fixture,  # noqa: F401 (a fixture)
)
from conftest import OPERATOR, Gmtool
from postgres import Databases, url_of

from gmtool.errors import Refused
from gmtool.evidence import records
from gmtool.evidence.merkle import Frontier
from gmtool.evidence.witness import FOLDER, SERVED, Witness
from gmtool.store import (
    checkpoint_signers,
    configs,
    dialect,
    gm,
    hand_evidence,
    ledger,
    log_append,
    log_history,
    log_reads,
    queries,
    scan,
    seed_keys,
    witnesses,
)
from gmtool.store import hands as hand_store
from gmtool.store import tables as table_store
from gmtool.store.db import NoSuchRecord, StoreError, open_location
from gmtool.store.schema import APPEND_ONLY

ROOT = Path(__file__).resolve().parent.parent
QQ = ROOT / "rules" / "qq-showhand.toml"
PLAYERS = ("ann", "bob", "cat")


def _qq(path: Path = QQ) -> tuple[dict, str]:
    from gmtool.rules.compile import compile_file

    return compile_file(path), path.read_text(encoding="utf-8")


def _rising(ids: list[int]) -> bool:
    return all(a < b for a, b in zip(ids, ids[1:]))


def _log_kinds(store) -> list[str]:
    return [r[0] for r in store.all("SELECT kind FROM log ORDER BY idx")]


def _running_hand(store) -> tuple[hand_store.TableLog, int, dict]:
    compiled, text = _qq()
    configs.deploy(store, compiled, text, None, "tester")
    table_store.open_table(store, "qq-1", "qq-showhand", "junior", "stud5", 4242)
    for name in PLAYERS:
        ledger.grant(store, name, 10_000, "opening_balance")
    log = hand_store.TableLog(store, "qq-1")
    hand_id = hand_store.begin_hand(
        store,
        log,
        1,
        compiled["config_id"],
        "junior",
        "ann",
        100,
        [{"player": p, "coins": 1_000} for p in PLAYERS],
        "c" * 64,
        "hmac-sha256-fy-v1",
        [{"type": "hand_started", "config_id": compiled["config_id"], "training": False}],
    )
    log.append(hand_id, [{"type": "ante", "player": p, "amount": 100} for p in PLAYERS])
    return log, hand_id, compiled


def _settle(store, log, hand_id: int, events: list[dict], entries: list[tuple[str, int]]):
    """Settle the hand with `events` and the settlement of `entries` (player, delta)."""
    return hand_store.settle_hand(store, log, hand_id, events, _settlement(entries), "ab" * 32)


def _settlement(entries: list[tuple[str, int]]) -> dict:
    return {
        "entries": [
            {"player": p, "delta": d, "reason": "won" if d > 0 else "lost"} for p, d in entries
        ],
        "results": {p: "win" if d > 0 else "loss" for p, d in entries},
        "winners": [p for p, d in entries if d > 0],
        "score": {p: d // 100 for p, d in entries},
    }


def _snapshot(store) -> dict:
    return {
        table: [tuple(r) for r in store.all(f"SELECT * FROM {table} ORDER BY 1, 2")]
        for table in ("ledger", "players", "hands", "events", "log", "log_state")
    }


# -- the backends and their statements --------------------------------------------------------


def test_every_dialect_statement_is_written_for_both() -> None:
    for name, texts in dialect.STATEMENTS.items():
        assert set(texts) == set(dialect.DIALECTS), name
        assert all(text.strip() for text in texts.values()), name


def test_the_fixture_gives_a_migrated_store_of_each_backend(any_store) -> None:
    assert any_store.dialect in dialect.DIALECTS
    assert (any_store.dialect == dialect.POSTGRESQL) == str(any_store.path).startswith(
        "postgresql://"
    )
    assert log_append.state(any_store)[0] == 0 and len(log_append.store_id(any_store)) == 16
    assert gm.users(any_store) == [] and not gm.has_operator(any_store)


# -- players and the ledger -------------------------------------------------------------------


def test_players_are_made_once_and_coins_move_only_by_ledger_rows(any_store) -> None:
    store = any_store
    with store.write():
        ledger.ensure_player(store, "ann")
        ledger.ensure_player(store, "ann")  # a second time: nothing new
        ledger.ensure_player(store, "robo", kind="bot")
    assert _log_kinds(store) == ["player", "player"]
    assert ledger.exists(store, "ann") and not ledger.exists(store, "zed")
    assert ledger.coins(store, "ann") == 0 and ledger.coins_or_none(store, "zed") is None
    ledger.grant(store, "ann", 500, "opening_balance")
    ledger.grant(store, "robo", 70, "opening_balance", kind="bot")
    with store.write(durable=True):
        ids = ledger.post(store, [("ann", -120, "fee"), ("robo", 120, "fee")])
        assert ledger.coins_or_none(store, "ann", to_move=True) == 380
    assert _rising(ids)
    assert ledger.coins(store, "ann") == 380 and ledger.bot_balances(store) == {"robo": 190}
    rows = store.all("SELECT player, delta, reason FROM ledger ORDER BY id")
    assert [tuple(r) for r in rows] == [
        ("ann", 500, "opening_balance"),
        ("robo", 70, "opening_balance"),
        ("ann", -120, "fee"),
        ("robo", 120, "fee"),
    ]
    assert [
        json.loads(r[0])["id"]
        for r in store.all("SELECT body FROM log WHERE kind = 'ledger' ORDER BY idx")
    ][-2:] == ids
    with pytest.raises(NoSuchRecord, match="zed"):
        ledger.coins(store, "zed")


def test_a_post_to_an_unknown_player_rolls_back_the_whole_transaction(any_store) -> None:
    store = any_store
    ledger.grant(store, "ann", 100, "opening_balance")
    before = _snapshot(store)
    with pytest.raises(NoSuchRecord, match="ghost"):
        with store.write(durable=True):
            ledger.post(store, [("ann", 50, "x"), ("ghost", -50, "x")])
    assert _snapshot(store) == before and not store.conn.in_transaction
    # PostgreSQL's identity used an id up in the rolled-back insert: ids skip there, and
    # the ledger row and its record still name the same one
    with store.write(durable=True):
        (row_id,) = ledger.post(store, [("ann", 7, "x")])
    last = store.one("SELECT id FROM ledger ORDER BY id DESC LIMIT 1")[0]
    logged = store.one("SELECT body FROM log WHERE kind = 'ledger' ORDER BY idx DESC LIMIT 1")
    assert row_id == last == json.loads(logged[0])["id"]
    assert row_id > before["ledger"][-1][0]


def test_a_balance_read_to_move_coins_holds_the_row_on_postgresql(
    pg_server: Databases,
) -> None:
    """`coins_or_none(..., to_move=True)` takes the player's row FOR UPDATE: until the
    transaction ends, no other connection may lock it (SQLite's BEGIN IMMEDIATE holds the
    whole store instead)."""
    url = url_of(pg_server.new())
    with open_location(url, create=True, clock=StepClock(), postgres=True) as store:
        ledger.grant(store, "ann", 100, "opening_balance")
        with psycopg.connect(url, autocommit=True) as other:
            with store.write(durable=True):
                assert ledger.coins_or_none(store, "ann", to_move=True) == 100
                with pytest.raises(psycopg.errors.LockNotAvailable):
                    other.execute("SELECT coins FROM players WHERE name = 'ann' FOR UPDATE NOWAIT")
            row = other.execute("SELECT coins FROM players WHERE name = 'ann' FOR UPDATE NOWAIT")
            assert row.fetchone() == (100,)


def test_opening_balances_are_vouched_for_in_the_same_transaction(any_store) -> None:
    store = any_store
    ledger.grant(store, "old", 300, "opening_balance")  # from before openings were signed
    signed = []

    def vouch(ledger_id: int, player: str, amount: int) -> str:
        signed.append((ledger_id, player, amount))
        return f"sig-{ledger_id}"

    assert ledger.vouch_for_older_openings(store, vouch) == 1
    assert ledger.vouch_for_older_openings(store, vouch) == 0  # once only
    ledger.open_account(store, "robo", 900, "bot", vouch)
    new_id = store.one("SELECT id FROM ledger WHERE player = 'robo'")[0]
    assert signed[-1] == (new_id, "robo", 900) and len(signed) == 2
    openings = [json.loads(r[0]) for r in store.all("SELECT body FROM log WHERE kind = 'opening'")]
    assert [(o["player"], o["delta"]) for o in openings] == [("old", 300), ("robo", 900)]
    assert ledger.coins(store, "robo") == 900


def test_results_add_to_tallies_and_score(any_store) -> None:
    store = any_store
    with store.write():
        for name in PLAYERS:
            ledger.ensure_player(store, name)
        ledger.record_results(store, {"ann": "win", "bob": "loss", "cat": "escape"}, {"ann": 3})
        ledger.record_results(store, {"ann": "draw"}, {"bob": -2})
    row = store.one("SELECT wins, losses, draws, escapes, score FROM players WHERE name = 'ann'")
    assert tuple(row) == (1, 0, 1, 0, 3)
    assert tuple(store.one("SELECT score, losses FROM players WHERE name = 'bob'")) == (-2, 1)


# -- tables and seats -------------------------------------------------------------------------


def test_tables_open_publish_beat_stop_close_and_reopen(any_store) -> None:
    store = any_store
    table_store.open_table(store, "t2", "qq-showhand", "junior", "stud5", 11)
    table_store.open_table(store, "t1", "qq-showhand", "junior", "stud5", 12)
    assert table_store.exists(store, "t1") and not table_store.exists(store, "t9")
    with store.write():
        for name in ("ann", "bob"):
            ledger.ensure_player(store, name)
    table_store.publish(store, "t1", {"pot": 5, "street": 2}, ["ann", "bob"])
    assert [t["id"] for t in table_store.list_tables(store)] == ["t1", "t2"]
    listed = table_store.list_tables(store)[0]
    assert listed["live"] == {"pot": 5, "street": 2} and listed["host_pid"] == 12
    seats = store.all("SELECT seat, player FROM seats WHERE table_id = 't1' ORDER BY seat")
    assert [tuple(r) for r in seats] == [(0, "ann"), (1, "bob")]
    before = table_store.status(store, "t1")["updated_at"]
    table_store.heartbeat(store, ["t1", "t2"])
    assert table_store.status(store, "t1")["updated_at"] > before
    table_store.stop_table(store, "t2")
    assert table_store.status(store, "t2")["status"] == "stopped"
    table_store.close_table(store, "t1")
    assert table_store.status(store, "t1")["status"] == "closed"
    assert table_store.closed_ids(store) == {"t1"}
    assert store.all("SELECT * FROM seats") == []
    table_store.open_table(store, "t1", "qq-showhand", "junior", "stud5", 13)  # stays closed
    assert table_store.status(store, "t1")["status"] == "closed"
    assert [t["id"] for t in table_store.list_tables(store, include_closed=True)] == ["t1", "t2"]
    with store.write():
        assert table_store.reopen_table(store, "t1")
        assert not table_store.reopen_table(store, "t2")
    table_store.open_table(store, "t1", "qq-showhand", "junior", "stud5", 14)
    assert table_store.status(store, "t1")["status"] == "open"
    assert table_store.status(store, "t9") is None


def test_a_heartbeat_of_more_tables_than_one_statement_names(any_store) -> None:
    store = any_store
    table_store.open_table(store, "t1", "qq-showhand", "junior", "stud5", 11)
    table_store.open_table(store, "t2", "qq-showhand", "junior", "stud5", 11)
    table_store.heartbeat(store, ["t1", "t2"])
    before = [table_store.status(store, t)["updated_at"] for t in ("t1", "t2")]
    many = [f"gone-{i}" for i in range(2 * table_store.HEARTBEAT_BATCH)] + ["t1", "t2"]
    table_store.heartbeat(store, many)
    after = [table_store.status(store, t)["updated_at"] for t in ("t1", "t2")]
    assert after[0] > before[0] and after[1] > before[1]


def test_many_rows_inserted_at_once_arrive_whole_and_in_order(any_store) -> None:
    """`conn.executemany` of a one-row INSERT: on PostgreSQL, multi-row INSERTs of at most
    65,535 parameters each (not psycopg's pipeline), rows kept in order."""
    store = any_store
    serial = "SERIAL" if store.dialect == "postgresql" else "INTEGER PRIMARY KEY AUTOINCREMENT"
    with store.write():
        store.conn.execute(f"CREATE TEMP TABLE scratch (n {serial}, a INTEGER, b TEXT)")
        rows = [(i, f"row {i}") for i in range(70_000)]  # three statements of 2 parameters a row
        store.conn.executemany("INSERT INTO scratch (a, b) VALUES (?, ?)", rows)
    stored = [tuple(r) for r in store.all("SELECT a, b FROM scratch ORDER BY n")]
    assert stored == rows


# -- hands and events -------------------------------------------------------------------------


def test_a_hand_begins_settles_and_its_events_chain(any_store) -> None:
    store = any_store
    log, hand_id, compiled = _running_hand(store)
    assert hand_store.unfinished_hands(store) == [
        {"id": hand_id, "table_id": "qq-1", "number": 1, "commitment": "c" * 64, "host": None}
    ]
    assert hand_store.at_stake(store, "bob") == (hand_id, 1_000)
    assert hand_store.at_stake(store, "zed") is None
    assert hand_store.last_number(store, "qq-1") == 1 and hand_store.last_number(store, "x") == 0
    _settle(
        store,
        log,
        hand_id,
        [{"type": "showdown", "winners": ["ann"]}, {"type": "hand_ended"}],
        [("ann", 200), ("bob", -100), ("cat", -100)],
    )
    assert hand_store.unfinished_hands(store) == [] and hand_store.at_stake(store, "bob") is None
    assert [ledger.coins(store, p) for p in PLAYERS] == [10_200, 9_900, 9_900]
    ended = store.one("SELECT outcome, seed, winners FROM hands WHERE id = ?", (hand_id,))
    assert tuple(ended) == ("settled", "ab" * 32, '["ann"]')
    events = store.all("SELECT seq, type, prev_hash, hash, hand_id FROM events ORDER BY seq")
    assert [e["seq"] for e in events] == [1, 2, 3, 4, 5, 6]
    for before, after in zip(events, events[1:]):
        assert after["prev_hash"] == before["hash"]
    assert (log.seq, log.head) == (6, events[-1]["hash"])
    assert hand_store.TableLog(store, "qq-1").head == log.head  # read back from the store
    head = store.one("SELECT seq, hash FROM chain_heads WHERE name = 'events:qq-1'")
    assert tuple(head) == (6, log.head)
    assert [r["delta"] for r in hand_evidence.ledger_rows(store, hand_id)] == [200, -100, -100]
    assert [e[1] for e in hand_evidence.events_from(store, "qq-1", 2, 4)] == [2, 3, 4]
    score = store.one("SELECT score, wins FROM players WHERE name = 'ann'")
    assert tuple(score) == (2, 1)


def test_a_failed_settlement_writes_nothing_and_the_log_resumes(any_store) -> None:
    store = any_store
    log, hand_id, _ = _running_hand(store)
    before, head = _snapshot(store), (log.seq, log.head)
    with pytest.raises(StoreError, match="nobody"):
        _settle(
            store,
            log,
            hand_id,
            [{"type": "hand_ended"}],
            [("ann", 200), ("bob", -100), ("nobody", -100)],
        )
    assert _snapshot(store) == before and (log.seq, log.head) == head
    _settle(
        store, log, hand_id, [{"type": "hand_ended"}], [("ann", 200), ("bob", -100), ("cat", -100)]
    )
    assert [ledger.coins(store, p) for p in PLAYERS] == [10_200, 9_900, 9_900]


def test_a_voided_hand_moves_no_coins(any_store) -> None:
    store = any_store
    log, hand_id, _ = _running_hand(store)
    hand_store.void_hand(store, log, hand_id, "crash_recovery", "ab" * 32, "test")
    row = store.one("SELECT outcome, seed FROM hands WHERE id = ?", (hand_id,))
    assert tuple(row) == ("voided", "ab" * 32)
    last = store.one("SELECT type, payload FROM events ORDER BY seq DESC LIMIT 1")
    assert last["type"] == "hand_voided" and json.loads(last["payload"])["stakes"] == "returned"
    assert [ledger.coins(store, p) for p in PLAYERS] == [10_000] * 3
    assert hand_store.unfinished_hands(store) == []


def test_a_seat_list_that_is_not_json_is_skipped_never_a_stop(any_store) -> None:
    """docs/evidence.md: queries reading inside a hand's seat list skip text that is not
    JSON (only an edit makes it), on PostgreSQL as on SQLite."""
    store = any_store
    _, hand_id, _ = _running_hand(store)
    assert scan.count_hands(store, player="bob") == 1
    for edited in ("not json", "[1, null]"):
        with store.write():
            store.conn.execute("UPDATE hands SET seats = ? WHERE id = ?", (edited, hand_id))
        assert hand_store.at_stake(store, "bob") is None
        assert scan.count_hands(store, player="bob") == 0
        assert queries.player(store, "bob")["recent_hands"] == []


# -- configs and deployments ------------------------------------------------------------------


def test_configs_deploy_roll_back_and_read(any_store) -> None:
    store = any_store
    compiled, text = _qq()
    with store.write():
        configs.save_config(store, compiled, text)
        configs.save_config(store, compiled, text)  # idempotent: one row, one record
    assert _log_kinds(store) == ["config"]
    logged: list[object] = []
    first = configs.deploy(store, compiled, text, None, "tester", logged=logged.append)
    second = configs.deploy(store, compiled, text, ["junior"], "tester", note="rooms")
    assert logged == [first] and first < second
    assert configs.active_config_id(store, "qq-showhand", "junior") == compiled["config_id"]
    assert configs.latest_config_id(store, "qq-showhand") == compiled["config_id"]
    assert configs.latest_deployment(store, "qq-showhand")["id"] == second
    assert configs.latest_deployment(store, "qq-showhand", before=second)["id"] == first
    version = compiled["profile"]["version"]
    assert configs.config_of_version(store, "qq-showhand", version) == compiled["config_id"]
    assert configs.load_config(store, compiled["config_id"]) == compiled
    assert [r[0] for r in configs.stored_configs(store)] == [compiled["config_id"]]
    assert configs.deployed_profiles(store) == ["qq-showhand"]
    history = configs.history(store, "qq-showhand")
    assert [(h["id"], h["rooms"], h["in_effect"]) for h in history] == [
        (first, None, True),
        (second, ["junior"], True),
    ]
    result = configs.rollback(store, "qq-showhand", "tester")
    assert result["deployment"] > second and result["active"] == compiled["config_id"]
    assert [r["id"] for r in configs.deployment_rows(store)] == [
        first,
        second,
        result["deployment"],
    ]
    with pytest.raises(StoreError, match="nothing to roll back"):
        configs.rollback(store, "qq-showhand", "tester")
    with pytest.raises(NoSuchRecord):
        configs.load_config(store, "0" * 64)
    with pytest.raises(NoSuchRecord, match="no room"):
        configs.deploy(store, compiled, text, ["attic"], "tester")


# -- GM users, the GM action chain and the command queue --------------------------------------


def test_gm_users_and_the_action_chain(any_store) -> None:
    store = any_store
    with store.write():
        assert gm.add_user(store, "boss", "operator", "key-b")
        assert not gm.add_user(store, "boss", "operator")  # nothing changes
        assert gm.add_user(store, "sue", "support")
        first = gm.log_action(store, "boss", "adjust", "ann", "why", {"ok": True})
        second = gm.log_action(store, "boss", "token_key", None, "k", {"ok": True, "key": "ed"})
    assert second == first + 1  # gmtool numbers GM actions itself: dense on both
    assert gm.has_operator(store) and gm.has_keys(store)
    assert gm.registered_key(store, "boss") == "key-b" and gm.registered_key(store, None) is None
    assert [(u["name"], u["role"]) for u in gm.users(store)] == [
        ("boss", "operator"),
        ("sue", "support"),
    ]
    assert gm.role_of(store, "sue") == "support" and gm.role_of(store, "zed") is None
    with pytest.raises(Refused, match="last operator"):
        with store.write():
            gm.add_user(store, "boss", "support")
    actions = gm.actions_by_id(store)
    assert actions[second]["prev_hash"] == actions[first]["hash"]
    head = store.one("SELECT seq, hash FROM chain_heads WHERE name = 'gm_actions'")
    assert tuple(head) == (second, actions[second]["hash"])
    assert gm.token_keys(store) == ["ed"]
    assert [a["id"] for a in queries.gm_log(store)] == [first, second]
    assert [a["id"] for a in queries.gm_log(store, limit=1)] == [second]


def test_commands_are_queued_claimed_and_given_one_fate(any_store) -> None:
    store = any_store
    ids = [
        gm.enqueue(store, "kick", "t1", "ann", f"r{n}", "boss", f"request-{n}") for n in range(5)
    ]
    assert _rising(ids)
    assert [c["id"] for c in gm.pending_commands(store)] == ids
    assert gm.claim(store, ids[0], lambda c: None)
    assert not gm.claim(store, ids[0], lambda c: None)  # taken already
    assert gm.acknowledge(store, ids[0], True, {"ok": True})
    assert not gm.acknowledge(store, ids[0], True, {"ok": True})  # one fate only
    assert gm.fate_logged(store, ids[0]) and not gm.fate_logged(store, ids[1])
    assert not gm.claim(store, ids[1], lambda c: {"ok": False, "error": "bad signature"})
    assert gm.expire(store, ids[2], {"ok": False, "error": "nobody waited"})
    assert gm.withdraw(store, ids[3], {"ok": False, "error": "interrupted"})
    assert gm.claim(store, ids[4], lambda c: None)
    assert gm.interrupt_taken(store, {"ok": False, "error": "host died"}) == [ids[4]]
    states = {c["id"]: c["status"] for c in gm.command_states(store)}
    assert [states[i] for i in ids] == ["done", "failed", "expired", "withdrawn", "interrupted"]
    done = gm.command(store, ids[0])
    assert done["outcome"] == {"ok": True} and done["gm_action_id"] is not None
    assert gm.pending_commands(store) == []
    with pytest.raises(NoSuchRecord):
        gm.command(store, max(ids) + 1000)
    requests = [
        json.loads(r[0])
        for r in store.all("SELECT body FROM log WHERE kind = 'gm_request' ORDER BY idx")
    ]
    assert len(requests) == 5


# -- the console's queries --------------------------------------------------------------------


def test_console_queries_of_hands_players_and_ladders(any_store) -> None:
    store = any_store
    log, hand_id, compiled = _running_hand(store)
    _settle(
        store,
        log,
        hand_id,
        [{"type": "showdown"}, {"type": "hand_ended"}],
        [("ann", 200), ("bob", -100), ("cat", -100)],
    )
    second = hand_store.begin_hand(
        store, log, 2, compiled["config_id"], "junior", "bob", 100,
        [{"player": "bob", "coins": 500}], "d" * 64, "hmac-sha256-fy-v1",
        [{"type": "hand_started"}],
    )  # fmt: skip
    assert [h["id"] for h in queries.list_hands(store)] == [second, hand_id]
    assert [h["id"] for h in queries.list_hands(store, player="ann")] == [hand_id]
    assert [h["id"] for h in queries.list_hands(store, player="bob", limit=1)] == [second]
    assert [h["id"] for h in queries.list_hands(store, table="qq-1", limit=0)] == [second, hand_id]
    assert queries.list_hands(store, since="2999") == []
    with pytest.raises(NoSuchRecord, match="no table"):
        queries.list_hands(store, table="nowhere")
    with pytest.raises(NoSuchRecord, match="no player"):
        queries.list_hands(store, player="nobody")
    found = queries.hand(store, hand_id)
    assert found["winners"] == ["ann"] and found["profile_id"] == "qq-showhand"
    assert [e["type"] for e in queries.hand_events(store, hand_id)][-2:] == [
        "showdown",
        "hand_ended",
    ]
    configs.deploy(store, *_qq(ROOT / "rules" / "video-showhand.toml"), None, "tester")
    ann = queries.player_with_titles(store, "ann")
    assert ann["coins"] == 10_200 and ann["table"] is None
    assert [(h["id"], h["delta"]) for h in ann["recent_hands"]] == [(hand_id, 200)]
    assert [r["delta"] for r in ann["ledger"]] == [200, 10_000]
    assert set(ann["titles"]) == set(queries.ladders(store)) == {"video-showhand"}
    listed = queries.players_with_titles(store, limit=0)
    assert [p["name"] for p in listed["players"]] == ["ann", "bob", "cat"]
    assert listed["total"] == 3 and len(queries.players_with_titles(store, 1)["players"]) == 1
    assert queries.summary(store) == {
        "hands": 2,
        "settled": 1,
        "voided": 0,
        "coins": 30_000,
        "players": 3,
    }
    assert queries.showcase_hand(store) == hand_id
    with pytest.raises(NoSuchRecord):
        queries.hand(store, second + 1000)


# -- the evidence log, seed keys, checkpoint signers, witnesses -------------------------------


def test_the_log_appends_and_reads_back_its_roots(any_store) -> None:
    store = any_store
    with store.write():
        for n in range(7):
            log_append.append(store, records.config_body(
                {"config_id": f"c{n}", "profile_text": "x", "created_at": "t"}
            ))  # fmt: skip
    size, root = log_history.now(store)
    assert size == 7 and log_append.state(store) == (size, root)
    leaves = [bytes(r[0]) for r in store.all("SELECT leaf FROM log ORDER BY idx")]
    for n in range(1, 8):
        frontier = Frontier()
        for leaf in leaves[:n]:
            frontier.append(leaf)
        assert log_history.root_at(store, n) == frontier.root()
        assert all(node is not None for node in log_reads.frontier_at(store, n))
    assert log_append.origin_of(store) == f"gmtool/{log_append.store_id(store)}"


def test_seed_keys_and_gm_keys_are_read_from_the_log(any_store) -> None:
    store = any_store
    assert seed_keys.next_hand_id(store) == 1
    body = seed_keys.register(store, "rsa", "KEY", lambda *fields: "sig")
    assert body["kind"] == "seed_key"
    assert [r["idx"] for r in seed_keys.registrations(store)] == [0]
    with store.write():
        gm.add_user(store, "boss", "operator", "not-a-key")
    assert checkpoint_signers.gm_key_at(store, "boss", 1) is None  # not registered yet
    assert checkpoint_signers.gm_key_at(store, "boss", 2) is None  # not a verifier key
    assert checkpoint_signers.gm_key_at(store, "zed", 2) is None


def test_witness_changes_are_recorded_in_order(any_store) -> None:
    store = any_store
    with store.write():
        first = witnesses.record(store, "add", Witness(FOLDER, "/srv/w1"))
        served = Witness(SERVED, "https://w.example/", "key")
        witnesses.record(store, "add", served)
        witnesses.record(store, "quorum", witnesses.quorum_change(1))
        last = witnesses.record(store, "remove", Witness(FOLDER, "/srv/w1"))
    assert (first, last) == (1, 4)  # gmtool numbers them itself
    assert witnesses.recorded(store) == [served] and witnesses.served(store) == [served]
    assert witnesses.quorum(store) == 1 and witnesses.quorum_set(store)
    assert [c["change"] for c in witnesses.changes(store)] == ["add", "add", "quorum", "remove"]
    assert _log_kinds(store) == ["witness"] * 4


# -- append-only, by the database itself ------------------------------------------------------


def _one_row_each(store) -> None:
    table_store.open_table(store, "t1", "qq-showhand", "junior", "stud5", 1)
    hand_store.TableLog(store, "t1").append(None, [{"type": "join", "player": "ann"}])
    ledger.grant(store, "ann", 100, "opening_balance")
    with store.write():
        gm.log_action(store, "gm", "adjust", "ann", "test", {"ok": True})


@pytest.mark.parametrize("table", APPEND_ONLY)
@pytest.mark.parametrize("change", ["UPDATE {t} SET id = id", "DELETE FROM {t}"])
def test_append_only_tables_refuse_update_and_delete(any_store, table: str, change: str) -> None:
    store = any_store
    _one_row_each(store)
    before = [tuple(r) for r in store.all(f"SELECT * FROM {table} ORDER BY id")]
    assert before
    with pytest.raises((StoreError, sqlite3.DatabaseError), match="append-only"):
        with store.write():
            store.conn.execute(change.format(t=table))
    assert [tuple(r) for r in store.all(f"SELECT * FROM {table} ORDER BY id")] == before


# -- the reading console commands that run on PostgreSQL ---------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_reading_commands_list_the_same_on_both_backends(
    backend: str, gm: Gmtool, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """`players list|show`, `tables list|show`, `hands list`, `gm users list`, `gm log` and
    `deploy history` read a PostgreSQL store as they read a SQLite one; commands that need
    files beside the store still refuse it."""
    where = location(backend, tmp_path, request)
    gm("db", "init", "--db", where, "--as", OPERATOR)
    with open_location(where, clock=StepClock(), postgres=True) as store:
        log, hand_id, _ = _running_hand(store)
        table_store.publish(store, "qq-1", {"pot": 300}, list(PLAYERS))
        _settle(
            store,
            log,
            hand_id,
            [{"type": "hand_ended"}],
            [("ann", 200), ("bob", -100), ("cat", -100)],
        )
    players = gm.json("players", "list", "--db", where, "--json")
    assert [(p["name"], p["coins"], p["table"]) for p in players["players"]] == [
        ("ann", 10_200, "qq-1"),
        ("bob", 9_900, "qq-1"),
        ("cat", 9_900, "qq-1"),
    ]
    ann = gm.json("players", "show", "ann", "--db", where, "--json")
    assert ann["recent_hands"][0]["delta"] == 200 and ann["table"]["table_id"] == "qq-1"
    tables = gm.json("tables", "list", "--db", where, "--json")
    assert [(t["id"], t["system"], t["status"]) for t in tables] == [
        ("qq-1", "qq-showhand", "open")
    ]
    assert gm.json("tables", "show", "qq-1", "--db", where, "--json")["id"] == "qq-1"
    hands = gm.json("hands", "list", "--player", "bob", "--db", where, "--json")
    assert [(h["id"], h["outcome"], h["winners"]) for h in hands] == [(hand_id, "settled", ["ann"])]
    users = gm.json("gm", "users", "list", "--db", where, "--json")
    assert [(u["name"], u["role"]) for u in users] == [(OPERATOR, "operator")]
    actions = gm.json("gm", "log", "--db", where, "--json")
    assert [(a["id"], a["actor"], a["action"]) for a in actions] == [(1, OPERATOR, "users_add")]
    history = gm.json("deploy", "history", "--db", where, "--json")
    assert [(d["profile_id"], d["deployed_by"], d["active"]) for d in history] == [
        ("qq-showhand", "tester", 1)
    ]
    run = gm("hands", "list", "--player", "nobody", "--db", where, expect=2)
    assert "no player 'nobody'" in run.stderr
    if backend == "postgresql":
        run = gm("checkpoint", "export", "--db", where, expect=2)
        assert "does not run on PostgreSQL yet" in run.stderr


def test_support_reads_a_postgresql_store_with_the_console(
    pg_server: Databases, gm: Gmtool
) -> None:
    """The reading commands need no privilege beyond what `db grant` gives support (their
    JSON reads make a function in the connection's own temporary schema only), and a
    support login still cannot write through them."""
    database = pg_server.new()
    owner = url_of(database)
    gm("db", "init", "--db", owner, "--as", OPERATOR)
    gm("db", "grant", "--db", owner, "--support", f"{database}_sue")
    with open_location(owner, clock=StepClock(), postgres=True) as store:
        _running_hand(store)
    support = url_of(database, user=f"{database}_sue")
    bob = gm.json("players", "show", "bob", "--db", support, "--json")
    assert bob["coins"] == 10_000 and bob["recent_hands"][0]["outcome"] == "running"
    assert len(gm.json("hands", "list", "--player", "bob", "--db", support, "--json")) == 1
    with open_location(support, postgres=True) as store, pytest.raises(StoreError):
        ledger.grant(store, "bob", 1, "x")
