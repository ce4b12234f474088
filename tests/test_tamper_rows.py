"""Single-row edits an outside store-edit check found audit did not report (issue 14): the
live-state copies a GM command keeps of its logged fate, an event's stored prev_hash and
row id, a deployment that no GM action made, a log record's index columns (or a body
that is not JSON, which stopped audit with an internal error); and then a player minted
after the newest checkpoint with log records that keep the log consistent, players'
tallies and score, the log's stored tree nodes, a config's profile text and time, and a
chain head that names no chain."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from datetime import datetime
from pathlib import Path

import pytest
from backends import Audited, audited_fixture, pg_server_fixture  # noqa: F401
from test_audit_incremental import _sql

from gmtool.evidence import opening, records
from gmtool.evidence.note import Signer
from gmtool.store import ledger, log_append
from gmtool.store.clock import iso
from gmtool.store.db import connect
from gmtool.store.log_append import origin_of


def _carried_out(conn: sqlite3.Connection) -> sqlite3.Row:
    """The first kick or close the host carried out: done, its fate logged as a GM action."""
    return conn.execute(
        "SELECT * FROM gm_commands WHERE kind IN ('kick', 'close') AND status "
        "= 'done' AND gm_action_id IS NOT NULL ORDER BY id LIMIT 1"
    ).fetchone()


def _update_one(conn: sqlite3.Connection, sql: str, params: tuple = ()) -> None:
    """An UPDATE that must change exactly one row (else the case tests nothing)."""
    assert conn.execute(sql, params).rowcount == 1, sql


def _set_command(conn: sqlite3.Connection, column: str, value) -> None:
    _update_one(
        conn, f"UPDATE gm_commands SET {column} = ? WHERE id = ?", (value, _carried_out(conn)["id"])
    )


def command_status_unknown(conn: sqlite3.Connection) -> None:
    _set_command(conn, "status", "dony")


def command_done_said_failed(conn: sqlite3.Connection) -> None:
    _set_command(conn, "status", "failed")


def command_outcome_edited(conn: sqlite3.Connection) -> None:
    """Only `ok` flipped, the JSON written as the store writes it."""
    outcome = json.loads(_carried_out(conn)["outcome"])
    _set_command(
        conn,
        "outcome",
        json.dumps({**outcome, "ok": not outcome["ok"]}, separators=(",", ":"), sort_keys=True),
    )


def command_acked_later(conn: sqlite3.Connection) -> None:
    acked = datetime.fromisoformat(_carried_out(conn)["acked_at"]).timestamp()
    _set_command(conn, "acked_at", iso(acked + 1))


def command_fate_moved(conn: sqlite3.Connection) -> None:
    """Pointed at another GM action that exists (the log's last: the coin adjustment)."""
    fate = _carried_out(conn)["gm_action_id"]
    _set_command(
        conn,
        "gm_action_id",
        conn.execute("SELECT MAX(id) FROM gm_actions WHERE id != ?", (fate,)).fetchone()[0],
    )


def command_fate_cleared(conn: sqlite3.Connection) -> None:
    _set_command(conn, "gm_action_id", None)


def event_prev_hash_replaced(conn: sqlite3.Connection) -> None:
    """A middle event of a table keeps its hash; its prev_hash is another 64-hex string."""
    table, seq = conn.execute(
        "SELECT table_id, MAX(seq) / 2 FROM events GROUP BY table_id ORDER BY table_id LIMIT 1"
    ).fetchone()
    _update_one(
        conn,
        "UPDATE events SET prev_hash = ? WHERE table_id = ? AND seq = ?",
        (hashlib.sha256(b"edited").hexdigest(), table, seq),
    )


def last_event_id_raised(conn: sqlite3.Connection) -> None:
    _update_one(conn, "UPDATE events SET id = id + 1000 WHERE id = (SELECT MAX(id) FROM events)")


def first_event_id_zero(conn: sqlite3.Connection) -> None:
    _update_one(conn, "UPDATE events SET id = 0 WHERE id = 1")


def log_name_key_edited(conn: sqlite3.Connection) -> None:
    """The index column naming the player a record logs (what lookups go by), its body
    and leaf left as they are."""
    _update_one(
        conn,
        "UPDATE log SET tkey = tkey || 'x' WHERE idx = (SELECT MIN(idx) FROM "
        "log WHERE kind = 'player')",
    )


def log_number_key_edited(conn: sqlite3.Connection) -> None:
    """The index column naming the hand a record logs (what `hands export` looks its
    records up by)."""
    _update_one(
        conn,
        "UPDATE log SET nkey = nkey + 1 WHERE idx = (SELECT MIN(idx) FROM log WHERE kind = 'hand')",
    )


def log_body_not_json(conn: sqlite3.Connection) -> None:
    """A batch's body made not JSON (it stopped audit with "internal error: malformed
    JSON" in the SQL that joins batches to events)."""
    idx, body = conn.execute(
        "SELECT idx, body FROM log WHERE kind = 'events' ORDER BY idx "
        "LIMIT 1 OFFSET (SELECT COUNT(*) / 2 FROM log WHERE kind = "
        "'events')"
    ).fetchone()
    _update_one(conn, "UPDATE log SET body = ? WHERE idx = ?", (body[:-1] + "x", idx))


def log_body_of_a_player_not_json(conn: sqlite3.Connection) -> None:
    """A player's record made not JSON (it stopped audit with "malformed JSON" in the SQL
    that sees whether a record's index agrees with its body: SQLite evaluated the
    json_extract beside a failed json_valid)."""
    idx, body = conn.execute(
        "SELECT idx, body FROM log WHERE kind = 'player' ORDER BY idx LIMIT 1"
    ).fetchone()
    _update_one(conn, "UPDATE log SET body = ? WHERE idx = ?", (body[:-1] + "x", idx))


def in_sqlite(change):
    """The edit made in plain sqlite3, the append-only triggers dropped and put back."""
    return lambda db: _sql(db, change)


def deployment_no_gm_action_made(db: Path) -> None:
    """As an attacker with the code would: a copy of the newest deployment, logged as
    evidence through gmtool's own store functions, with no GM action for it."""
    with connect(db) as store, store.write():
        row = store.one("SELECT * FROM deployments ORDER BY id DESC LIMIT 1")
        new_id = store.conn.execute(
            "INSERT INTO deployments (profile_id, rooms, config_id, deployed_by, deployed_at, "
            "active, note) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                row["profile_id"],
                row["rooms"],
                row["config_id"],
                row["deployed_by"],
                store.now(),
                row["active"],
                row["note"],
            ),
        ).lastrowid
        log_append.append_row(store, records.deployment_body, "deployments", "id", new_id)


def log_record_duplicated(db: Path) -> None:
    """The log's last record appended again through gmtool's own store functions (a
    consistent tree, after every signed checkpoint): the same row logged twice."""
    with connect(db) as store, store.write():
        body = store.one("SELECT body FROM log ORDER BY idx DESC LIMIT 1")[0]
        log_append.append(store, json.loads(body))


def minted_player(db: Path) -> None:
    """The outside check's mint: a new bot with 100,000,000 coins, its player row, ledger
    row and their log records appended through gmtool's own store functions after the
    newest signed checkpoint (so the log is a consistent extension of it)."""
    with connect(db) as store:
        ledger.grant(store, "bot-999", 100_000_000, "opening_balance", kind="bot")


def minted_with_a_key_of_its_own(db: Path) -> None:
    """As above, with an `opening` record signed by a new key named for this store."""
    with connect(db) as store:
        forger = Signer.generate(origin_of(store))
        ledger.open_account(
            store, "bot-999", 100_000_000, "bot", lambda *grant: opening.sign(forger, *grant)
        )


def minted_with_a_copied_signature(db: Path) -> None:
    """As above, with the signature of a real opening of the same amount copied over."""
    with connect(db) as store:
        first = json.loads(
            store.one("SELECT body FROM log WHERE kind = 'opening' ORDER BY idx LIMIT 1")[0]
        )
        ledger.open_account(
            store, "bot-999", first["delta"], "bot", lambda *grant: first["signature"]
        )


def _a_player_who_played(conn: sqlite3.Connection) -> str:
    return conn.execute(
        "SELECT name FROM players WHERE wins > 0 AND losses > 0 ORDER BY name LIMIT 1"
    ).fetchone()[0]


def tally_raised(conn: sqlite3.Connection) -> None:
    _update_one(
        conn, "UPDATE players SET wins = wins + 1 WHERE name = ?", (_a_player_who_played(conn),)
    )


def tally_cleared(conn: sqlite3.Connection) -> None:
    _update_one(
        conn, "UPDATE players SET losses = NULL WHERE name = ?", (_a_player_who_played(conn),)
    )


def score_raised(conn: sqlite3.Connection) -> None:
    _update_one(
        conn, "UPDATE players SET score = score + 1 WHERE name = ?", (_a_player_who_played(conn),)
    )


def log_node_edited(conn: sqlite3.Connection) -> None:
    _update_one(
        conn,
        "UPDATE log_nodes SET hash = ? WHERE level = 3 AND idx = 1",
        (hashlib.sha256(b"edited").digest(),),
    )


def log_node_deleted(conn: sqlite3.Connection) -> None:
    _update_one(conn, "DELETE FROM log_nodes WHERE level = 1 AND idx = 7")


def log_node_inserted(conn: sqlite3.Connection) -> None:
    """A node past the tree's end: its level's count is then one too many."""
    conn.execute(
        "INSERT INTO log_nodes (level, idx, hash) SELECT 2, MAX(idx) + 1, hash FROM "
        "log_nodes WHERE level = 2"
    )


def log_state_size_raised(conn: sqlite3.Connection) -> None:
    """A size whose count of complete subtrees is not the nodes' (it stopped audit with
    "internal error: a frontier of N leaves has 8 nodes, not 7")."""
    size = conn.execute("SELECT size FROM log_state").fetchone()[0]
    bump = next(n for n in range(1, 64) if bin(size + n).count("1") != bin(size).count("1"))
    _update_one(conn, "UPDATE log_state SET size = size + ?", (bump,))


def config_text_edited(conn: sqlite3.Connection) -> None:
    _update_one(
        conn,
        "UPDATE configs SET profile_text = profile_text || '# edited' WHERE "
        "rowid = (SELECT MIN(rowid) FROM configs)",
    )


def config_time_edited(conn: sqlite3.Connection) -> None:
    _update_one(
        conn,
        "UPDATE configs SET created_at = '2020-01-01T00:00:00.000000+00:00' "
        "WHERE rowid = (SELECT MIN(rowid) FROM configs)",
    )


def chain_head_of_no_chain(conn: sqlite3.Connection) -> None:
    conn.execute(
        "INSERT INTO chain_heads (name, seq, hash) SELECT name || '-copy', seq, hash "
        "FROM chain_heads WHERE name = 'gm_actions'"
    )


CASES = [  # (edit of the store at a path, the problem kind audit must report)
    *(
        pytest.param(in_sqlite(change), "gm_command", id=change.__name__)
        for change in (
            command_status_unknown,
            command_done_said_failed,
            command_outcome_edited,
            command_acked_later,
            command_fate_moved,
            command_fate_cleared,
        )
    ),
    pytest.param(in_sqlite(event_prev_hash_replaced), "chain_link", id="event_prev_hash_replaced"),
    pytest.param(in_sqlite(last_event_id_raised), "event_row_id", id="last_event_id_raised"),
    pytest.param(in_sqlite(first_event_id_zero), "event_row_id", id="first_event_id_zero"),
    pytest.param(deployment_no_gm_action_made, "deployment", id="deployment_no_gm_action"),
    *(
        pytest.param(in_sqlite(change), "log_record", id=change.__name__)
        for change in (
            log_name_key_edited,
            log_number_key_edited,
            log_body_not_json,
            log_body_of_a_player_not_json,
        )
    ),
    pytest.param(log_record_duplicated, "log_record", id="log_record_duplicated"),
    pytest.param(minted_player, "unjustified_coins", id="minted_player"),  # (no key needed)
    *(
        pytest.param(in_sqlite(change), "tallies", id=change.__name__)
        for change in (tally_raised, tally_cleared, score_raised)
    ),
    *(
        pytest.param(in_sqlite(change), "log_nodes", id=change.__name__)
        for change in (log_node_edited, log_node_deleted, log_node_inserted)
    ),
    pytest.param(in_sqlite(log_state_size_raised), "log_state", id="log_state_size_raised"),
    *(
        pytest.param(in_sqlite(change), "differs_from_log", id=change.__name__)
        for change in (config_text_edited, config_time_edited)
    ),
    pytest.param(in_sqlite(chain_head_of_no_chain), "chain_head", id="chain_head_of_no_chain"),
]


SKIPPING_IDS = ("last_event_id_raised",)  # what an id that skips looks like (below)


@pytest.mark.parametrize(("edit", "kind"), CASES)
def test_audit_reports_the_edited_row(
    host_copy: Path, gm, edit, kind: str, audited: Audited, request: pytest.FixtureRequest
) -> None:
    """On both backends (the PostgreSQL store: a copy of the edited rows)."""
    gm("audit", "--db", host_copy, "--json")  # clean before the edit
    edit(host_copy)
    where = audited.args(host_copy)
    assert where is not None
    run = gm("audit", *where, "--json", expect=None)
    problems = json.loads(run.stdout)["problems"]
    if audited.backend == "postgresql" and request.node.callspec.id.endswith(SKIPPING_IDS):
        # PostgreSQL hands out ids that may skip (a rolled-back insert spends one): a
        # raised last id is such a skip there, and nothing else about the row changed
        assert run.returncode == 0 and kind not in {p["kind"] for p in problems}, problems
        return
    assert run.returncode == 1, f"audit did not notice the edit (exit {run.returncode})"
    assert kind in {p["kind"] for p in problems}, problems


def test_a_guard_that_no_longer_refuses_is_reported(host_copy: Path, gm) -> None:
    """An append-only trigger replaced by one of the same name that does nothing: the
    table's rows can then be changed, and audit must say the guard is gone."""
    conn = sqlite3.connect(host_copy)
    with conn:
        conn.execute("DROP TRIGGER ledger_no_update")
        conn.execute("CREATE TRIGGER ledger_no_update BEFORE UPDATE ON ledger BEGIN SELECT 1; END")
    conn.close()
    run = gm("audit", "--db", host_copy, "--json", expect=None)
    problems = json.loads(run.stdout)["problems"]
    assert run.returncode == 1
    assert [p["kind"] for p in problems] == ["triggers"], problems
    assert "ledger_no_update" in problems[0]["detail"]


def test_a_table_row_without_an_id_is_no_internal_error(host_copy: Path, gm) -> None:
    """`tables` is the host's live state, not evidence: a row whose id is NULL (it stopped
    audit with "internal error: TypeError") changes nothing the audit checks."""
    _sql(
        host_copy,
        lambda conn: _update_one(
            conn, "UPDATE tables SET id = NULL WHERE rowid = (SELECT MIN(rowid) FROM tables)"
        ),
    )
    report = json.loads(gm("audit", "--db", host_copy, "--json").stdout)
    assert report["problems"] == []


def _copy_with_witness(host_db: Path, folder: Path) -> Path:
    """A copy of the host's store with everything beside it: its keys and witness folder."""
    for path in host_db.parent.iterdir():
        if path.name.startswith(host_db.name) and not path.name.endswith(".lock"):
            (shutil.copytree if path.is_dir() else shutil.copyfile)(path, folder / path.name)
    return folder / host_db.name


def _latest_checkpoint(db: Path) -> str:
    return sorted(p.name for p in Path(f"{db}.witness").iterdir())[-1]


@pytest.mark.parametrize(
    "edit", [minted_player, minted_with_a_key_of_its_own, minted_with_a_copied_signature]
)
def test_a_mint_after_the_newest_checkpoint_is_reported(
    host_db: Path, tmp_path: Path, gm, edit
) -> None:
    """With the host's verifier key and witness beside the copy, in a full audit and in
    one from the newest checkpoint: the new player's opening balance has no signature of
    the host's, or one over another grant, or one made by another key."""
    db = _copy_with_witness(host_db, tmp_path)
    gm("audit", "--db", db, "--json")  # clean, against the witness, before the edit
    edit(db)
    for mode in ([], ["--from-checkpoint", _latest_checkpoint(db)]):
        run = gm("audit", "--db", db, "--json", *mode, expect=1)
        problems = json.loads(run.stdout)["problems"]
        assert [(p["kind"], p.get("player")) for p in problems] == [
            ("unjustified_coins", "bot-999")
        ], (mode, problems)


def test_an_audit_of_some_hands_does_not_hold_tallies_to_them(host_copy: Path, gm) -> None:
    """Tallies are the sums over every settled hand: an audit of one table's hands (or
    from a checkpoint) sees only some, and says nothing about them."""
    table = sqlite3.connect(host_copy).execute("SELECT MIN(table_id) FROM hands").fetchone()[0]
    report = json.loads(gm("audit", "--db", host_copy, "--table", table, "--json").stdout)
    assert report["problems"] == [] and report["hands_checked"] > 0


@pytest.mark.parametrize(
    "edit",
    [
        "UPDATE log_nodes SET hash = zeroblob(32) WHERE level = 1 AND idx = (SELECT MAX(idx) FROM "
        "log_nodes WHERE level = 1)",
        "INSERT INTO log_nodes (level, idx, hash) VALUES (70, 0, zeroblob(32))",
        "INSERT INTO log_nodes (level, idx, hash) VALUES ('x', 0, zeroblob(32))",
    ],
)
def test_a_node_made_after_the_checkpoint_is_checked_from_it(
    host_db: Path, tmp_path: Path, gm, edit: str
) -> None:
    """An audit from the newest checkpoint checks the stored nodes made after it (a seek a
    level), and nodes of a level no tree has."""
    db = _copy_with_witness(host_db, tmp_path)
    checkpoint = _latest_checkpoint(db)
    with connect(db) as store, store.write():  # records after it: a player with no coins
        for name in ("zoe", "zed"):
            ledger.ensure_player(store, name)
    _sql(db, lambda conn: conn.execute(edit))
    run = gm("audit", "--db", db, "--json", "--from-checkpoint", checkpoint, expect=1)
    assert [p["kind"] for p in json.loads(run.stdout)["problems"]] == ["log_nodes"]
