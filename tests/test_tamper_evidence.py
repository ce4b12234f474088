"""Tampering that the hash chains alone could not see, found through the evidence log
(issue 14): an attacker with write access to a copy of a host-produced store mints coins,
rewrites a GM adjustment, forges a hand, moves winnings, deletes history with its chain
heads rewound, rewrites and rechains the GM log, makes themself an operator, drops the
append-only triggers. Every one of these passed `gmtool audit` before the log existed.

Each tamper works straight in SQLite, as an attacker would: triggers dropped, hashes and
heads recomputed wherever the store's own rows allow it. What the log itself records
(its bodies and leaves) is left alone here; rewriting it too is caught by a signed
checkpoint kept elsewhere (test_checkpoint.py).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from backends import Audited, audited_fixture, pg_server_fixture  # noqa: F401
from test_tamper import _rechain

from gmtool.canonical import ZERO_HASH, chain_hash
from gmtool.store.gm import gm_record


def _drop_triggers(conn: sqlite3.Connection) -> None:
    for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
        conn.execute(f"DROP TRIGGER {name}")


def _settled_hand(conn: sqlite3.Connection) -> sqlite3.Row:
    """A settled hand with ledger rows that is not its table's last."""
    return conn.execute(
        "SELECT h.* FROM hands h WHERE h.outcome = 'settled' AND EXISTS (SELECT 1 FROM ledger "
        "l WHERE l.hand_id = h.id AND l.delta > 0) AND EXISTS (SELECT 1 FROM hands later "
        "WHERE later.table_id = h.table_id AND later.id > h.id) ORDER BY h.id LIMIT 1"
    ).fetchone()


def mint_opening_balance(conn: sqlite3.Connection) -> dict:
    conn.execute(
        "INSERT INTO ledger (player, delta, reason, created_at) VALUES ('bot-001', "
        "5000000, 'opening_balance', '2026-01-01T00:00:00.000000+00:00')"
    )
    conn.execute("UPDATE players SET coins = coins + 5000000 WHERE name = 'bot-001'")
    return {"kind": "not_logged", "player": "bot-001"}


def rewrite_gm_adjustment(conn: sqlite3.Connection) -> dict:
    row = conn.execute(
        "SELECT id, player, delta FROM ledger WHERE reason = 'gm_adjust' ORDER BY id DESC LIMIT 1"
    ).fetchone()
    conn.execute("UPDATE ledger SET delta = 1000000 WHERE id = ?", (row["id"],))
    conn.execute(
        "UPDATE players SET coins = coins + ? WHERE name = ?",
        (1000000 - row["delta"], row["player"]),
    )
    return {"kind": "differs_from_log", "player": row["player"]}


def move_winnings(conn: sqlite3.Connection) -> dict:
    """A settled hand's winnings go to a player who was not seated; balances follow."""
    hand = _settled_hand(conn)
    row = conn.execute(
        "SELECT id, player, delta FROM ledger WHERE hand_id = ? AND delta > 0 LIMIT 1",
        (hand["id"],),
    ).fetchone()
    seated = {s["player"] for s in json.loads(hand["seats"])}
    outsider = conn.execute(
        f"SELECT name FROM players WHERE name NOT IN ({','.join('?' * len(seated))}) LIMIT 1",
        sorted(seated),
    ).fetchone()[0]
    conn.execute("UPDATE ledger SET player = ? WHERE id = ?", (outsider, row["id"]))
    conn.execute(
        "UPDATE players SET coins = coins - ? WHERE name = ?", (row["delta"], row["player"])
    )
    conn.execute("UPDATE players SET coins = coins + ? WHERE name = ?", (row["delta"], outsider))
    return {"kind": "differs_from_log", "hand": hand["id"]}


def forge_a_hand(conn: sqlite3.Connection) -> dict:
    """A new hand copying another's seed and events, appended to its table's chain."""
    hand = _settled_hand(conn)
    table = hand["table_id"]
    number = (
        conn.execute("SELECT MAX(number) FROM hands WHERE table_id = ?", (table,)).fetchone()[0] + 1
    )
    cursor = conn.execute(
        "INSERT INTO hands (table_id, number, config_id, tier, banker, ante, seats, commitment,"
        " algorithm, seed, started_at, ended_at, outcome, winners) SELECT table_id, ?, "
        "config_id, tier, banker, ante, seats, commitment, algorithm, seed, started_at, "
        "ended_at, outcome, winners FROM hands WHERE id = ?",
        (number, hand["id"]),
    )
    forged = cursor.lastrowid
    last = conn.execute("SELECT MAX(seq) FROM events WHERE table_id = ?", (table,)).fetchone()[0]
    events = conn.execute(
        "SELECT seq, type, payload, created_at FROM events WHERE hand_id = ? ORDER BY seq",
        (hand["id"],),
    ).fetchall()
    for offset, event in enumerate(events, start=1):
        conn.execute(
            "INSERT INTO events (table_id, hand_id, seq, type, payload, created_at, "
            "prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, '', '')",
            (table, forged, last + offset, event["type"], event["payload"], event["created_at"]),
        )
    _rechain(conn, table, last + 1)
    return {"kind": "not_logged", "hand": forged}


def delete_a_tables_history(conn: sqlite3.Connection) -> dict:
    table = _settled_hand(conn)["table_id"]
    conn.execute(
        "DELETE FROM ledger WHERE hand_id IN (SELECT id FROM hands WHERE table_id = ?)", (table,)
    )
    conn.execute("DELETE FROM events WHERE table_id = ?", (table,))
    conn.execute("DELETE FROM hands WHERE table_id = ?", (table,))
    conn.execute("DELETE FROM chain_heads WHERE name = ?", (f"events:{table}",))
    _rebalance(conn)
    return {"kind": "events_deleted", "table": table}


def delete_a_tables_last_hand(conn: sqlite3.Connection) -> dict:
    """The last hand of a table goes, events, ledger rows and all; the head is rewound."""
    table = _settled_hand(conn)["table_id"]
    last = conn.execute(
        "SELECT id FROM hands WHERE table_id = ? ORDER BY number DESC LIMIT 1", (table,)
    ).fetchone()["id"]
    conn.execute("DELETE FROM ledger WHERE hand_id = ?", (last,))
    conn.execute("DELETE FROM events WHERE hand_id = ?", (last,))
    conn.execute(
        "DELETE FROM events WHERE table_id = ? AND seq > (SELECT MAX(seq) FROM events "
        "WHERE table_id = ? AND hand_id IS NOT NULL)",
        (table, table),
    )
    conn.execute("DELETE FROM hands WHERE id = ?", (last,))
    head = conn.execute(
        "SELECT seq, hash FROM events WHERE table_id = ? ORDER BY seq DESC LIMIT 1", (table,)
    ).fetchone()
    conn.execute(
        "UPDATE chain_heads SET seq = ?, hash = ? WHERE name = ?",
        (head["seq"], head["hash"], f"events:{table}"),
    )
    _rebalance(conn)
    return {"kind": "deleted", "hand": last}


def _rebalance(conn: sqlite3.Connection) -> None:
    """Every balance made equal to its (changed) ledger, as a careful attacker would."""
    conn.execute(
        "UPDATE players SET coins = (SELECT COALESCE(SUM(delta), 0) FROM ledger WHERE "
        "ledger.player = players.name)"
    )


def _rechain_gm_log(conn: sqlite3.Connection) -> None:
    head = ZERO_HASH
    for row in conn.execute("SELECT * FROM gm_actions ORDER BY id").fetchall():
        digest = chain_hash(head, gm_record(dict(row)))
        conn.execute(
            "UPDATE gm_actions SET prev_hash = ?, hash = ? WHERE id = ?", (head, digest, row["id"])
        )
        head = digest
    last = conn.execute("SELECT MAX(id) FROM gm_actions").fetchone()[0]
    conn.execute("UPDATE chain_heads SET seq = ?, hash = ? WHERE name = 'gm_actions'", (last, head))


def rewrite_the_gm_log(conn: sqlite3.Connection) -> dict:
    action = conn.execute("SELECT id FROM gm_actions ORDER BY id LIMIT 1").fetchone()["id"]
    conn.execute("UPDATE gm_actions SET reason = 'nothing happened' WHERE id = ?", (action,))
    _rechain_gm_log(conn)
    return {"kind": "differs_from_log", "gm_action": action}


def delete_the_whole_gm_log(conn: sqlite3.Connection) -> dict:
    conn.execute(
        "UPDATE ledger SET gm_action_id = NULL, hand_id = NULL WHERE gm_action_id IS NOT NULL"
    )
    conn.execute("DELETE FROM ledger WHERE hand_id IS NULL AND reason = 'gm_adjust'")
    conn.execute("DELETE FROM gm_actions")
    conn.execute("DELETE FROM chain_heads WHERE name = 'gm_actions'")
    _rebalance(conn)
    return {"kind": "deleted", "gm_action": 1}


def make_yourself_operator(conn: sqlite3.Connection) -> dict:
    conn.execute(
        "INSERT INTO gm_users (name, role, created_at) VALUES ('mallory', 'operator', "
        "'2026-01-01T00:00:00.000000+00:00')"
    )
    return {"kind": "not_logged"}


def promote_support(conn: sqlite3.Connection) -> dict:
    conn.execute("UPDATE gm_users SET role = 'operator' WHERE role = 'support'")
    return {"kind": "differs_from_log"}


def edit_a_ledger_time(conn: sqlite3.Connection) -> dict:
    row = conn.execute("SELECT id, player FROM ledger ORDER BY id LIMIT 1").fetchone()
    conn.execute(
        "UPDATE ledger SET created_at = '2020-01-01T00:00:00.000000+00:00' WHERE id = ?",
        (row["id"],),
    )
    return {"kind": "differs_from_log", "player": row["player"]}


def switch_a_deployments_config(conn: sqlite3.Connection) -> dict:
    other = conn.execute("SELECT config_id FROM configs ORDER BY rowid DESC LIMIT 1").fetchone()[0]
    first = conn.execute(
        "SELECT id FROM deployments WHERE config_id != ? ORDER BY id LIMIT 1", (other,)
    ).fetchone()["id"]
    conn.execute("UPDATE deployments SET config_id = ? WHERE id = ?", (other, first))
    return {"kind": "differs_from_log"}


def reactivate_a_deployment(conn: sqlite3.Connection) -> dict:
    conn.execute(
        "UPDATE deployments SET active = 1 - active WHERE id = (SELECT MIN(id) FROM deployments)"
    )
    return {"kind": "differs_from_log"}


def rewrite_a_commitment(conn: sqlite3.Connection) -> dict:
    hand = _settled_hand(conn)
    conn.execute("UPDATE hands SET commitment = ? WHERE id = ?", ("0" * 64, hand["id"]))
    return {"kind": "differs_from_log", "hand": hand["id"]}


def add_a_player(conn: sqlite3.Connection) -> dict:
    conn.execute(
        "INSERT INTO players (name, coins, score, kind, created_at) VALUES ('ghost', "
        "0, 0, 'human', '2026-01-01T00:00:00.000000+00:00')"
    )
    return {"kind": "not_logged", "player": "ghost"}


def drop_the_triggers_only(conn: sqlite3.Connection) -> dict:
    """Nothing edited yet: but a store whose append-only guard is gone is a finding."""
    return {"kind": "triggers"}


TAMPERS: dict[str, Callable[[sqlite3.Connection], dict]] = {
    "mint_opening_balance": mint_opening_balance,
    "rewrite_gm_adjustment": rewrite_gm_adjustment,
    "move_winnings": move_winnings,
    "forge_a_hand": forge_a_hand,
    "delete_a_tables_history": delete_a_tables_history,
    "delete_a_tables_last_hand": delete_a_tables_last_hand,
    "rewrite_the_gm_log": rewrite_the_gm_log,
    "delete_the_whole_gm_log": delete_the_whole_gm_log,
    "make_yourself_operator": make_yourself_operator,
    "promote_support": promote_support,
    "edit_a_ledger_time": edit_a_ledger_time,
    "switch_a_deployments_config": switch_a_deployments_config,
    "reactivate_a_deployment": reactivate_a_deployment,
    "rewrite_a_commitment": rewrite_a_commitment,
    "add_a_player": add_a_player,
    "drop_the_triggers_only": drop_the_triggers_only,
}


def _tamper(db: Path, how: Callable[[sqlite3.Connection], dict]) -> dict:
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    try:
        with conn:
            _drop_triggers(conn)
            return how(conn)
    finally:
        conn.close()


@pytest.mark.parametrize("kind", list(TAMPERS))
def test_audit_finds_a_consistent_rewrite_through_the_evidence_log(
    host_copy: Path, gm, kind: str, audited: Audited
) -> None:
    """On both backends (the PostgreSQL store: a copy of the rewritten rows)."""
    wanted = _tamper(host_copy, TAMPERS[kind])
    where = audited.args(host_copy)
    assert where is not None
    run = gm("audit", *where, "--json", expect=None)
    problems = json.loads(run.stdout)["problems"]
    if audited.backend == "postgresql" and kind == "drop_the_triggers_only":
        # only rows are copied: the PostgreSQL store has its own guards in place (their
        # removal there: tests/test_audit_postgres.py)
        assert run.returncode == 0 and problems == [], problems
        return
    assert run.returncode == 1, f"audit did not notice {kind}: {problems}"
    assert any(all(p.get(k) == v for k, v in wanted.items()) for p in problems), (wanted, problems)


# -- coins and seeds that the log records faithfully but that no cause justifies ---------


def test_a_second_opening_balance_is_minted_coins(host_copy: Path, gm) -> None:
    """Even written through gmtool's own store functions (so the log records it), an
    opening balance that is not the player's first ledger row is found."""
    from gmtool.store.db import connect
    from gmtool.store.ledger import grant

    with connect(host_copy) as store:
        grant(store, "bot-001", 5_000_000, "opening_balance")
    run = gm("audit", "--db", host_copy, "--json", expect=1)
    problems = json.loads(run.stdout)["problems"]
    # (a second opening, and one the host did not sign: both are said)
    assert {(p["kind"], p["player"]) for p in problems} == {("unjustified_coins", "bot-001")}


def test_an_adjustment_unlike_its_gm_log_row_is_found(host_copy: Path, gm) -> None:
    """The ledger row says 1,000,000 where the GM log says 500 (both logged)."""
    conn = sqlite3.connect(host_copy)
    conn.row_factory = sqlite3.Row
    action = conn.execute(
        "SELECT id, target FROM gm_actions WHERE action = 'adjust' ORDER BY id DESC LIMIT 1"
    ).fetchone()
    conn.close()
    from gmtool.store.db import connect
    from gmtool.store.ledger import post

    with connect(host_copy) as store, store.write():
        post(store, [(action["target"], 1_000_000, "gm_adjust")], gm_action_id=action["id"])
    run = gm("audit", "--db", host_copy, "--json", expect=1)
    problems = json.loads(run.stdout)["problems"]
    assert any(
        p["kind"] == "unjustified_coins" and p.get("gm_action") == action["id"] for p in problems
    ), problems


def test_a_seed_not_derived_from_the_host_key_is_found(tmp_path: Path, gm) -> None:
    from gmtool.engine.deck import commitment
    from gmtool.house.seeds import hand_seed, load_key
    from gmtool.store import hands as hand_store
    from gmtool.store.db import connect
    from gmtool.store.tables import open_table

    db = tmp_path / "seeds.db"
    gm.deploy_all(db)
    with connect(db) as store:
        key = load_key(db)
        config = store.one("SELECT config_id FROM configs LIMIT 1")[0]
        open_table(store, "t-1", "qq-showhand", "junior", "stud5", 1)
        log = hand_store.TableLog(store, "t-1")
        for number, seed in (
            (1, hand_seed(key, "t-1", 1)),
            (2, b"\x07" * 32),
            (3, hand_seed(key, "t-1", 1)),
        ):
            hand = hand_store.begin_hand(
                store,
                log,
                number,
                config,
                "junior",
                "a",
                None,
                [],
                commitment(seed),
                "hmac-sha256-fy-v1",
                [],
            )
            hand_store.void_hand(store, log, hand, "test", seed.hex())
    run = gm("audit", "--db", db, "--json", expect=1)
    problems = [(p["kind"], p.get("hand")) for p in json.loads(run.stdout)["problems"]]
    assert ("seed", 2) in problems and ("seed", 3) in problems, problems
    assert ("seed", 1) not in problems
