"""The support console's hand commands on a PostgreSQL store (issue 26): `hands show`,
`hands replay` and `hands export` print for a store copied to PostgreSQL (`gmtool db
copy`) exactly what they print for the SQLite store it was copied from, and find the
same problems when the same rows are edited on both (issue 24 point 6: each checks the
hand's whole evidence).

A PostgreSQL store has no files beside it: the host's checkpoint verifier key and the
witness folder, found beside the SQLite file there, are given to the PostgreSQL commands
(`--key`, `--witness`), and plainly asked for when they are not. The store is the
session's host-made one (tests/conftest.py's `host_db`), copied; edits on PostgreSQL are
made by the tables' owner with the append-only triggers disabled, then enabled again.
Real databases, real `gmtool` processes (the many comparisons in-process, through
typer's runner), no mocks.
"""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import psycopg
import pytest
from backends import any_store_fixture, pg_server_fixture  # noqa: F401
from conftest import copy_db
from helpers import recorded_witness
from postgres import Databases, url_of
from typer.testing import CliRunner

from gmtool.cli import app
from gmtool.store import log_reads
from gmtool.store.hands import event_hash

runner = CliRunner()


class Store:
    """One store on both backends: the SQLite file, its PostgreSQL copy's URL, and the
    files that lie beside the SQLite file (given to the PostgreSQL commands)."""

    def __init__(self, db: Path, url: str) -> None:
        self.db, self.url = db, url
        self.key = Path(str(db) + ".checkpoint.pub")
        self.witness = recorded_witness(db)

    def files(self) -> tuple[str, ...]:
        return ("--key", str(self.key), "--witness", str(self.witness))


def _copied(gm, db: Path, server: Databases) -> Store:
    url = url_of(server.new())
    gm("db", "copy", "--from", db, "--to", url)
    return Store(db, url)


def run(*args: str | Path) -> tuple[int, str, str]:
    """The command in-process: (exit code, stdout, stderr), never a traceback."""
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    assert "Traceback" not in result.stdout + result.stderr
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def untouched(host_db: Path, tmp_path_factory, gm, pg_server: Databases) -> Store:
    """One copy of the host's store on both backends, shared by the tests that only read."""
    return _copied(gm, copy_db(host_db, tmp_path_factory.mktemp("untouched")), pg_server)


def _hands(db: Path) -> list[int]:
    """A hand of every outcome and every table (ten tables, five systems)."""
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute(
            "SELECT MIN(id) FROM hands GROUP BY outcome UNION SELECT MAX(id) FROM hands "
            "GROUP BY table_id UNION SELECT MIN(h.id) FROM hands h JOIN ledger l ON "
            "l.hand_id = h.id WHERE l.delta > 0"
        ).fetchall()
    finally:
        conn.close()
    return sorted(row[0] for row in rows)


COMMANDS = {
    "show --json": ("hands", "show", "{hand}", "--json"),
    "show": ("hands", "show", "{hand}"),
    "replay --json": ("hands", "replay", "{hand}", "--json"),
    "export json": ("hands", "export", "{hand}", "--format", "json"),
    "export md": ("hands", "export", "{hand}", "--format", "md"),
}


def _command(name: str, hand: int) -> list[str]:
    return [part.format(hand=hand) for part in COMMANDS[name]]


@pytest.mark.parametrize("name", list(COMMANDS))
def test_each_hand_reads_as_on_the_sqlite_store(untouched: Store, name: str) -> None:
    hands = _hands(untouched.db)
    assert len(hands) >= 10
    outcomes = set()
    for hand in hands:
        command = _command(name, hand)
        on_sqlite = run(*command, "--db", untouched.db)
        assert on_sqlite[0] == 0, (hand, on_sqlite)
        assert run(*command, "--db", untouched.url, *untouched.files()) == on_sqlite, hand
        # (the files a SQLite store finds beside it, given: the same)
        assert run(*command, "--db", untouched.db, *untouched.files()) == on_sqlite, hand
        if name == "show --json":
            report = json.loads(on_sqlite[1])
            outcomes.add(report["outcome"])
            assert report["evidence"]["verified"] and report["evidence"]["problems"] == []
            if report["outcome"] != "running":
                assert report["evidence"]["checkpoint"]["size"] > 0  # checked against one
        if name == "export json":  # an ended hand's report carries its proof
            report = json.loads(on_sqlite[1])
            assert ("proof" in report) == (report["outcome"] != "running"), hand
    if name == "show --json":
        assert {"settled", "voided"} <= outcomes, outcomes


def test_an_exported_report_verifies_offline(untouched: Store, gm, tmp_path: Path) -> None:
    """`gmtool verify` of a report exported from PostgreSQL (real processes)."""
    hand = _settled_hand(untouched.db)["id"]
    report = tmp_path / "report.json"
    exported = gm("hands", "export", hand, "--format", "json", "--db", untouched.url,
                  *untouched.files())  # fmt: skip
    assert exported.stderr == ""
    report.write_text(exported.stdout, encoding="utf-8")
    assert "proof" in json.loads(exported.stdout)
    checked = gm("verify", report, "--key", untouched.key)
    assert checked.returncode == 0 and checked.stderr == ""
    edited = exported.stdout.replace('"banker": "', '"banker": "x', 1)
    assert edited != exported.stdout
    report.write_text(edited, encoding="utf-8")
    assert gm("verify", report, "--key", untouched.key, expect=1).returncode == 1


def test_without_the_key_a_postgresql_store_says_what_was_not_checked(untouched: Store) -> None:
    hand = _hands(untouched.db)[-1]
    code, out, err = run("hands", "show", hand, "--db", untouched.url, "--json")
    evidence = json.loads(out)["evidence"]
    assert code == 0 and evidence["verified"] and "checkpoint" not in evidence
    assert any("pass --key with the host's verifier key" in n for n in evidence["notes"])
    code, out, err = run("hands", "show", hand, "--db", untouched.url)
    assert code == 0 and "note: its records were not checked against a signed checkpoint" in out
    code, out, err = run("hands", "export", hand, "--format", "json", "--db", untouched.url)
    assert code == 0 and "proof" not in json.loads(out)
    assert "a PostgreSQL store has no checkpoint key beside it: pass --key" in err
    # the key without the witness: its folder was recorded beside the SQLite file
    code, out, err = run("hands", "show", hand, "--db", untouched.url, "--json",
                         "--key", untouched.key)  # fmt: skip
    notes = json.loads(out)["evidence"]["notes"]
    assert code == 0 and any("pass --witness FOLDER" in note for note in notes), notes


def test_support_reads_hands_with_the_role_db_grant_gives_it(untouched: Store, gm) -> None:
    """Support may only read: the hand commands need nothing more (their JSON reads make
    a function in the connection's own temporary schema only)."""
    database = untouched.url.rsplit("/", 1)[1]
    gm("db", "grant", "--db", untouched.url, "--support", f"{database}_sue")
    support = url_of(database, user=f"{database}_sue")
    hand = _settled_hand(untouched.db)["id"]
    for name in ("show --json", "replay --json", "export json"):
        command = _command(name, hand)
        as_owner = run(*command, "--db", untouched.url, *untouched.files())
        assert as_owner[0] == 0
        assert run(*command, "--db", support, *untouched.files()) == as_owner, name


def test_a_hand_after_the_newest_checkpoint_is_exported_without_a_proof(
    untouched: Store, tmp_path: Path
) -> None:
    """A witness holding only an older checkpoint: a PostgreSQL console signs none (the
    host's notary does), so the report says it carries no proof, and `hands show` that the
    hand's records came after the checkpoint."""
    older = tmp_path / "older.witness"
    older.mkdir()
    first = sorted(untouched.witness.glob("*.checkpoint"))[0]
    shutil.copyfile(first, older / first.name)
    hand = _hands(untouched.db)[-1]
    given = ("--db", untouched.url, "--key", untouched.key, "--witness", older)
    code, out, err = run("hands", "export", hand, "--format", "json", *given)
    assert code == 0 and "proof" not in json.loads(out)
    assert "no checkpoint in the witness covers this hand yet" in err, err
    code, out, _ = run("hands", "show", hand, "--json", *given)
    evidence = json.loads(out)["evidence"]
    assert code == 0 and evidence["checkpoint"]["file"] == first.name
    assert any("came after the newest checkpoint" in note for note in evidence["notes"])


def test_tables_watch_reads_as_on_the_sqlite_store(
    host_copy: Path, gm, pg_server: Databases
) -> None:
    """The host's tables shown as while it played them (their status set back to open on
    both: the host stopped them when it stopped)."""
    store = _copied(gm, host_copy, pg_server)
    reopen = "UPDATE tables SET status = 'open' WHERE status = 'stopped'"
    _edit_sqlite(host_copy, lambda query: query(reopen))
    _edit_postgres(store.url, lambda query: query(reopen))
    table = _first_table(host_copy)
    for one in ((), (table,)):
        shown = [
            run("tables", "watch", *one, "--count", "1", "--db", where)
            for where in (store.db, store.url)
        ]
        (code, out, err), (pg_code, pg_out, pg_err) = shown
        assert code == pg_code == 0 and err == pg_err == ""
        assert re.sub(r"\d\d:\d\d:\d\d", "T", out) == re.sub(r"\d\d:\d\d:\d\d", "T", pg_out)
        assert table in out and (one or "9 table(s)" in out), out
    missing = [
        run("tables", "watch", "nowhere", "--count", "1", "--db", where)
        for where in (store.db, store.url)
    ]
    assert missing[0] == missing[1] and "no table 'nowhere'" in missing[0][2]


def _first_table(db: Path) -> str:
    conn = sqlite3.connect(db)
    try:
        return str(conn.execute("SELECT MIN(id) FROM tables WHERE status = 'open'").fetchone()[0])
    finally:
        conn.close()


def test_gm_witness_list_names_what_a_postgresql_store_cannot_place(untouched: Store) -> None:
    """The same witnesses and changes; the folder the store records beside its old SQLite
    file is no folder on PostgreSQL, and the listing says where to give it instead."""
    code, out, _ = run("gm", "witness", "list", "--db", untouched.db, "--json")
    on_sqlite = json.loads(out)
    code, out, _ = run("gm", "witness", "list", "--db", untouched.url, "--json")
    on_postgres = json.loads(out)
    assert code == 0 and on_sqlite["witnesses"] and on_sqlite["changes"]
    assert [w["folder"] for w in on_sqlite["witnesses"]] == [str(untouched.witness)]
    assert [w["folder"] for w in on_postgres["witnesses"]] == [None]
    for listing in (on_sqlite, on_postgres):
        for entry in listing["witnesses"]:
            del entry["folder"]
    assert on_postgres == on_sqlite
    code, out, _ = run("gm", "witness", "list", "--db", untouched.url)
    assert code == 0 and "has no file; give --witness FOLDER" in out, out


# ---- a hand's records, as SQLite's json_extract picks them --------------------------

# (kind, tkey, nkey, body, of hand 5, of hand 1): hand 5 has events 10 to 12 at table t
RECORDS = [
    ("hand", None, 5, "{}", True, False),
    ("hand_end", None, 5, "{}", True, False),
    ("hand", None, 6, "{}", False, False),
    ("ledger", None, 1, '{"hand":5}', True, False),
    ("ledger", None, 2, '{"hand":5.0}', True, False),  # a real equal to the id
    ("ledger", None, 3, '{"hand":4.9999999999999999}', True, False),  # (read as 5.0)
    ("ledger", None, 4, '{"hand":"5"}', False, False),  # text never equals a number
    ("ledger", None, 5, '{"hand":true}', False, True),  # true is 1
    ("ledger", None, 6, '{"hand":{"id":5}}', False, False),
    ("ledger", None, 7, '{"hand":null}', False, False),
    ("ledger", None, 8, "[5]", False, False),
    ("ledger", None, 9, '{"hand":5', False, False),  # not JSON
    ("ledger", None, None, '{"hand":5}', False, False),  # no key
    ("events", "t", 10, '{"last":12}', True, False),
    ("events", "t", 5, '{"last":9}', False, False),
    ("events", "t", 6, '{"last":11.5}', True, False),
    ("events", "t", 7, '{"last":"x"}', True, False),  # text sorts above every number
    ("events", "t", 8, '{"last":[1]}', True, False),  # (read as its JSON: text)
    ("events", "t", 9, '{"last":true}', False, False),  # 1
    ("events", "t", 4, '{"last":null}', False, False),
    ("events", "t", 3, "not json", False, False),
    ("events", "t", 13, '{"last":14}', False, False),  # after the hand's last event
    ("events", "u", 10, '{"last":12}', False, False),  # another table
]


def test_a_hands_records_are_the_ones_sqlite_picks(any_store) -> None:
    """Bodies only an edit makes, read by PostgreSQL's jsonb and then Python, picked as
    SQLite's json_extract picks them (the same list on both backends)."""
    with any_store.write() as conn:
        for seq in (10, 11, 12):
            conn.execute(
                "INSERT INTO events (table_id, hand_id, seq, type, payload, created_at, "
                "prev_hash, hash) VALUES ('t', 5, ?, 'x', '{}', 'now', 'p', 'h')",
                (seq,),
            )
        for idx, (kind, tkey, nkey, body, *_) in enumerate(RECORDS):
            conn.execute(
                "INSERT INTO log (idx, kind, tkey, nkey, body, leaf) VALUES (?, ?, ?, ?, ?, ?)",
                (idx, kind, tkey, nkey, body, bytes(32)),
            )
    for hand, column in ((5, 4), (1, 5)):
        found = [r["index"] for r in log_reads.records_of_hand(any_store, hand, "t")]
        assert found == [i for i, record in enumerate(RECORDS) if record[column]], hand


# ---- the same edits on both backends ------------------------------------------------


def _settled_hand(db: Path) -> dict:
    """A settled hand that moved coins, whose records the host's last checkpoint signed."""
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    try:
        return dict(
            conn.execute(
                "SELECT h.id, h.table_id FROM hands h WHERE h.outcome = 'settled' AND EXISTS "
                "(SELECT 1 FROM ledger l WHERE l.hand_id = h.id AND l.delta > 0) AND (SELECT "
                "COUNT(*) FROM events e WHERE e.hand_id = h.id) >= 6 ORDER BY h.id LIMIT 1"
            ).fetchone()
        )
    finally:
        conn.close()


Query = Callable[..., list[tuple]]  # query(sql with ?, *params): the rows it returns


def _edit_sqlite(db: Path, change: Callable[[Query], None]) -> None:
    """`change` with the append-only triggers dropped, then put back as they were."""
    conn = sqlite3.connect(db)
    with conn:
        triggers = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'")
        triggers = triggers.fetchall()
        for name, _ in triggers:
            conn.execute(f"DROP TRIGGER {name}")
        change(lambda sql, *params: conn.execute(sql, params).fetchall())
        for _, sql in triggers:
            conn.execute(sql)
    conn.close()


def _edit_postgres(url: str, change: Callable[[Query], None]) -> None:
    """`change` by the tables' owner, their append-only triggers disabled, then enabled."""
    guarded = ("events", "ledger", "log")
    with psycopg.connect(url) as conn:
        for table in guarded:
            conn.execute(f"ALTER TABLE {table} DISABLE TRIGGER USER")

        def query(sql: str, *params: object) -> list[tuple]:
            cursor = conn.execute(sql.replace("?", "%s"), params)  # type: ignore[arg-type]
            return cursor.fetchall() if cursor.description else []

        change(query)
        for table in guarded:
            conn.execute(f"ALTER TABLE {table} ENABLE TRIGGER USER")


def _middle_event(query: Query, hand_id: int) -> tuple:
    rows = query("SELECT id, seq, payload FROM events WHERE hand_id = ? ORDER BY seq", hand_id)
    return rows[len(rows) // 2]


def _payload_changed(hand: dict) -> Callable[[Query], None]:
    def change(query: Query) -> None:
        event_id, _, payload = _middle_event(query, hand["id"])
        query("UPDATE events SET payload = ? WHERE id = ?", payload.replace("}", ',"x":1}', 1),
              event_id)  # fmt: skip

    return change


def _payload_changed_and_rechained(hand: dict) -> Callable[[Query], None]:
    """Every hash from the edited event to the table's head recomputed, and the head."""

    def change(query: Query) -> None:
        _, seq, _ = _middle_event(query, hand["id"])
        _payload_changed(hand)(query)
        rows = query(
            "SELECT id, hand_id, seq, type, payload, created_at, prev_hash FROM events "
            "WHERE table_id = ? AND seq >= ? ORDER BY seq",
            hand["table_id"],
            seq,
        )
        head = rows[0][6]
        for row_id, hand_id, seq_, type_, payload, created_at, _ in rows:
            digest = event_hash(head, hand["table_id"], hand_id, seq_, type_, payload, created_at)
            query("UPDATE events SET prev_hash = ?, hash = ? WHERE id = ?", head, digest, row_id)
            head = digest
        query("UPDATE chain_heads SET hash = ? WHERE name = ?", head, f"events:{hand['table_id']}")

    return change


def _settlement_moved(hand: dict) -> Callable[[Query], None]:
    """Ledger only: the winner's row names another player, and the balances follow."""

    def change(query: Query) -> None:
        row_id, player, delta = query(
            "SELECT id, player, delta FROM ledger WHERE hand_id = ? AND delta > 0 ORDER BY id "
            "LIMIT 1",
            hand["id"],
        )[0]
        other = "bot-001" if player != "bot-001" else "bot-002"
        query("UPDATE ledger SET player = ? WHERE id = ?", other, row_id)
        query("UPDATE players SET coins = coins - ? WHERE name = ?", delta, player)
        query("UPDATE players SET coins = coins + ? WHERE name = ?", delta, other)

    return change


def _prev_hash_edited(hand: dict) -> Callable[[Query], None]:
    def change(query: Query) -> None:
        event_id, _, _ = _middle_event(query, hand["id"])
        query("UPDATE events SET prev_hash = ? WHERE id = ?", "ab" * 32, event_id)

    return change


def _ledger_record_edited(hand: dict) -> Callable[[Query], None]:
    """A ledger record of the hand says another delta (its leaf, its row and the signed
    checkpoint all disagree with it)."""

    def change(query: Query) -> None:
        idx, body = _ledger_record(query, hand)
        query("UPDATE log SET body = ? WHERE idx = ?", body.replace('"delta":', '"delta":1', 1),
              idx)  # fmt: skip

    return change


def _ledger_record_names_the_hand_as_a_real(hand: dict) -> Callable[[Query], None]:
    """`"hand":N.0` in a ledger record: SQLite's json_extract reads 5.0 = 5, and so must
    the PostgreSQL reading (its jsonb only narrows, Python decides)."""

    def change(query: Query) -> None:
        idx, body = _ledger_record(query, hand)
        marker = f'"hand":{hand["id"]},'
        assert marker in body
        query("UPDATE log SET body = ? WHERE idx = ?",
              body.replace(marker, f'"hand":{hand["id"]}.0,'), idx)  # fmt: skip

    return change


def _ledger_record(query: Query, hand: dict) -> tuple[int, str]:
    (row_id,) = query(
        "SELECT id FROM ledger WHERE hand_id = ? AND delta > 0 ORDER BY id LIMIT 1", hand["id"]
    )[0]
    return query("SELECT idx, body FROM log WHERE kind = 'ledger' AND nkey = ?", row_id)[0]


EDITS = {
    "payload_changed": (_payload_changed, "event_hash"),
    "payload_changed_and_rechained": (_payload_changed_and_rechained, "events_rewritten"),
    "settlement_moved_to_another_player": (_settlement_moved, "differs_from_log"),
    "prev_hash_edited": (_prev_hash_edited, "chain_link"),
    "ledger_record_edited": (_ledger_record_edited, "checkpoint_rewrite"),
    "ledger_record_names_the_hand_as_a_real": (
        _ledger_record_names_the_hand_as_a_real,
        "log_record",
    ),
}


@pytest.mark.parametrize("name", list(EDITS))
def test_an_edited_hand_is_reported_as_on_sqlite(
    name: str, host_copy: Path, gm, pg_server: Databases
) -> None:
    store = _copied(gm, host_copy, pg_server)
    hand = _settled_hand(host_copy)
    make, kind = EDITS[name]
    _edit_sqlite(host_copy, make(hand))
    _edit_postgres(store.url, make(hand))
    for command_name in COMMANDS:
        command = _command(command_name, hand["id"])
        on_sqlite = run(*command, "--db", store.db)
        assert on_sqlite[0] == 1, (command_name, on_sqlite)
        assert run(*command, "--db", store.url, *store.files()) == on_sqlite, command_name
    report = json.loads(run(*_command("show --json", hand["id"]), "--db", store.url,
                            *store.files())[1])  # fmt: skip
    assert report["evidence"]["verified"] is False
    assert kind in {p["kind"] for p in report["evidence"]["problems"]}, report["evidence"]
    refused = run(*_command("export json", hand["id"]), "--db", store.url, *store.files())
    assert refused[1] == "" and "evidence does not verify, so no report was exported" in refused[2]
