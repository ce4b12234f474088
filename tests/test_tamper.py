"""Tampering with a host-produced store: `gmtool audit` exits 1 and pinpoints every change.

Acceptance (issue 6): on a copy of a database produced by the host, each of: editing one
event's amount, deleting an event, swapping two events, editing a ledger row, editing a
player's coins, changing a revealed seed, deleting a GM log row makes `gmtool audit`
exit 1 naming the right hand (or player, or GM action) and kind of problem; the untouched
copy audits clean. The attacker works as one would: straight into SQLite, dropping the
append-only triggers first, and where it helps, recomputing the hash chain after an edit.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from backends import Audited, audited_fixture, pg_server_fixture  # noqa: F401
from postgres import url_of

from gmtool.canonical import canonical_json, chain_hash
from gmtool.store.hands import event_record


@dataclass
class Expect:
    """What audit must report: `required` problems (as subsets) and the only things named."""

    required: list[dict]
    scope: list[dict] = field(default_factory=list)  # every problem matches one of these


def _target(conn: sqlite3.Connection) -> sqlite3.Row:
    """A betting event in the middle of a settled hand that is not its table's last hand."""
    return conn.execute(
        "SELECT e.id, e.table_id, e.hand_id, e.seq, e.type, e.payload FROM events e "
        "JOIN hands h ON h.id = e.hand_id WHERE h.outcome = 'settled' AND h.seed IS NOT NULL "
        "AND e.type IN ('bet', 'raise', 'follow') AND EXISTS (SELECT 1 FROM hands later WHERE "
        "later.table_id = h.table_id AND later.id > h.id) AND EXISTS (SELECT 1 FROM ledger l "
        "WHERE l.hand_id = h.id) ORDER BY e.id LIMIT 1"
    ).fetchone()


def _ledger_row(conn: sqlite3.Connection, hand_id: int) -> sqlite3.Row:
    return conn.execute(
        "SELECT id, player, delta FROM ledger WHERE hand_id = ? ORDER BY id LIMIT 1", (hand_id,)
    ).fetchone()


def _with_amount(payload: str, change: int) -> str:
    fields = json.loads(payload)
    fields["amount"] += change
    return canonical_json(fields)


def _rechain(conn: sqlite3.Connection, table_id: str, from_seq: int) -> None:
    """Recompute every hash of the table's chain from `from_seq` on, and its recorded head
    if the store keeps one (a careful attacker)."""
    rows = conn.execute(
        "SELECT id, table_id, hand_id, seq, type, payload, created_at, "
        "prev_hash FROM events WHERE table_id = ? AND seq >= ? ORDER BY seq",
        (table_id, from_seq),
    ).fetchall()
    head = rows[0]["prev_hash"]
    for row in rows:
        digest = chain_hash(
            head,
            event_record(
                row["table_id"],
                row["hand_id"],
                row["seq"],
                row["type"],
                row["payload"],
                row["created_at"],
            ),
        )
        conn.execute(
            "UPDATE events SET prev_hash = ?, hash = ? WHERE id = ?", (head, digest, row["id"])
        )
        head = digest
    if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'chain_heads'").fetchone():
        conn.execute(
            "UPDATE chain_heads SET hash = ? WHERE name = ?", (head, f"events:{table_id}")
        )  # any recorded head follows the new chain


def _rewrite_payload(
    conn: sqlite3.Connection,
    payload_of: Callable[[sqlite3.Row], object],
    rechain: Callable = _rechain,
) -> Expect:
    """The target bet's payload replaced by `payload_of(event)`, the chain made whole
    again with `rechain`: audit must name the hand's replay."""
    event = _target(conn)
    conn.execute("DROP TRIGGER events_no_update")
    conn.execute("UPDATE events SET payload = ? WHERE id = ?", (payload_of(event), event["id"]))
    rechain(conn, event["table_id"], event["seq"])
    return Expect([{"hand": event["hand_id"], "kind": "replay"}], [{"hand": event["hand_id"]}])


# -- the tamper kinds -----------------------------------------------------------------------


def edit_event_amount(conn: sqlite3.Connection) -> Expect:
    event = _target(conn)
    conn.execute("DROP TRIGGER events_no_update")
    conn.execute(
        "UPDATE events SET payload = ? WHERE id = ?",
        (_with_amount(event["payload"], 1), event["id"]),
    )
    hand = event["hand_id"]
    return Expect(
        [{"hand": hand, "kind": "event_hash"}, {"hand": hand, "kind": "replay"}], [{"hand": hand}]
    )


def edit_event_amount_and_rechain(conn: sqlite3.Connection) -> Expect:
    """The chain is made whole again: only the replay through the engine can tell."""
    return _rewrite_payload(conn, lambda event: _with_amount(event["payload"], 1))


def delete_event(conn: sqlite3.Connection) -> Expect:
    event = _target(conn)
    conn.execute("DROP TRIGGER events_no_delete")
    conn.execute("DELETE FROM events WHERE id = ?", (event["id"],))
    hand = event["hand_id"]
    return Expect(
        [{"hand": hand, "kind": "chain_gap"}, {"hand": hand, "kind": "replay"}],
        [{"hand": hand}, {"kind": "event_row_id"}],
    )  # the ids now miss one: store-wide


def swap_events(conn: sqlite3.Connection) -> Expect:
    """The betting event and the one after it trade places (their seq)."""
    event = _target(conn)
    after = conn.execute(
        "SELECT id FROM events WHERE table_id = ? AND seq = ?",
        (event["table_id"], event["seq"] + 1),
    ).fetchone()
    conn.execute("DROP TRIGGER events_no_update")
    conn.execute("UPDATE events SET seq = -1 WHERE id = ?", (event["id"],))
    conn.execute("UPDATE events SET seq = ? WHERE id = ?", (event["seq"], after["id"]))
    conn.execute("UPDATE events SET seq = ? WHERE id = ?", (event["seq"] + 1, event["id"]))
    hand = event["hand_id"]
    return Expect(
        [{"hand": hand, "kind": "chain_link"}, {"hand": hand, "kind": "replay"}], [{"hand": hand}]
    )


def edit_ledger_row(conn: sqlite3.Connection) -> Expect:
    hand = _target(conn)["hand_id"]
    row = _ledger_row(conn, hand)
    conn.execute("DROP TRIGGER ledger_no_update")
    conn.execute("UPDATE ledger SET delta = delta + 100 WHERE id = ?", (row["id"],))
    return Expect(
        [{"hand": hand, "kind": "ledger"}, {"player": row["player"], "kind": "balance"}],
        [{"hand": hand}, {"player": row["player"]}],
    )


def edit_ledger_row_and_coins(conn: sqlite3.Connection) -> Expect:
    """Ledger and balance kept consistent: the settlement event still tells."""
    hand = _target(conn)["hand_id"]
    row = _ledger_row(conn, hand)
    conn.execute("DROP TRIGGER ledger_no_update")
    conn.execute("UPDATE ledger SET delta = delta + 100 WHERE id = ?", (row["id"],))
    conn.execute("UPDATE players SET coins = coins + 100 WHERE name = ?", (row["player"],))
    return Expect([{"hand": hand, "kind": "ledger"}], [{"hand": hand}])


def edit_player_coins(conn: sqlite3.Connection) -> Expect:
    player = conn.execute(
        "SELECT name FROM players WHERE coins > 0 ORDER BY name LIMIT 1"
    ).fetchone()[0]
    conn.execute("UPDATE players SET coins = coins + 1000 WHERE name = ?", (player,))
    return Expect([{"player": player, "kind": "balance"}], [{"player": player}])


def change_revealed_seed(conn: sqlite3.Connection) -> Expect:
    hand = _target(conn)["hand_id"]
    conn.execute("UPDATE hands SET seed = ? WHERE id = ?", ("5e" * 32, hand))
    return Expect([{"hand": hand, "kind": "commitment"}], [{"hand": hand}])


def _gm_action(conn: sqlite3.Connection, action: str, refused: bool = False) -> int:
    rows = [
        r
        for r in conn.execute(
            "SELECT id, outcome FROM gm_actions WHERE action = ? ORDER BY id", (action,)
        )
        if ("refused" in json.loads(r["outcome"])) == refused
    ]
    last = conn.execute("SELECT MAX(id) FROM gm_actions").fetchone()[0]
    chosen = rows[0]["id"]
    assert chosen < last, "pick a GM action in the middle of the log"
    return chosen


def delete_gm_log_row(conn: sqlite3.Connection) -> Expect:
    """A kick disappears from the log."""
    gm_id = _gm_action(conn, "kick")
    conn.execute("DROP TRIGGER gm_actions_no_delete")
    conn.execute("DELETE FROM gm_actions WHERE id = ?", (gm_id,))
    return Expect(
        [{"gm_action": gm_id, "kind": "gm_log_gap"}],
        [{"gm_action": gm_id}, {"gm_action": gm_id + 1}],
    )


def edit_gm_log_row(conn: sqlite3.Connection) -> Expect:
    """A refused kick by support is rewritten as a success."""
    gm_id = _gm_action(conn, "kick", refused=True)
    conn.execute("DROP TRIGGER gm_actions_no_update")
    conn.execute(
        "UPDATE gm_actions SET outcome = ? WHERE id = ?", (canonical_json({"ok": True}), gm_id)
    )
    return Expect([{"gm_action": gm_id, "kind": "gm_log_hash"}], [{"gm_action": gm_id}])


def delete_last_gm_log_row(conn: sqlite3.Connection) -> Expect:
    """The newest GM action, a coin adjustment, is deleted; its ledger row still points at it.

    A hash chain cannot see its own tail cut off, but this action left a trace: a ledger
    row whose gm_action_id names an action that no longer exists.
    """
    row = conn.execute("SELECT id, action FROM gm_actions ORDER BY id DESC LIMIT 1").fetchone()
    assert row["action"] == "adjust"
    assert (
        conn.execute("SELECT COUNT(*) FROM ledger WHERE gm_action_id = ?", (row["id"],)).fetchone()[
            0
        ]
        == 1
    )
    conn.execute("DROP TRIGGER gm_actions_no_delete")
    conn.execute("DELETE FROM gm_actions WHERE id = ?", (row["id"],))
    return Expect([{"gm_action": row["id"]}], [{"gm_action": row["id"]}])


def delete_last_gm_log_row_and_rewind_head(conn: sqlite3.Connection) -> Expect:
    """As above, and the attacker also rewinds any recorded head of the log to the row
    before: the ledger row tied to the deleted action is the trace left."""
    expect = delete_last_gm_log_row(conn)
    if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'chain_heads'").fetchone():
        last = conn.execute("SELECT id, hash FROM gm_actions ORDER BY id DESC LIMIT 1").fetchone()
        conn.execute(
            "UPDATE chain_heads SET seq = ?, hash = ? WHERE name = 'gm_actions'",
            (last["id"], last["hash"]),
        )
    return expect


def delete_last_event_of_a_table(conn: sqlite3.Connection) -> Expect:
    """The tail of a table's chain (its last hand's settlement) is cut off."""
    last = conn.execute(
        "SELECT e.id, e.hand_id, e.table_id FROM events e WHERE e.seq = (SELECT MAX(seq) FROM "
        "events WHERE table_id = e.table_id) AND e.type = 'settlement' ORDER BY "
        "e.table_id LIKE 'qq-%' DESC, e.id LIMIT 1"
    ).fetchone()
    conn.execute("DROP TRIGGER events_no_delete")
    conn.execute("DELETE FROM events WHERE id = ?", (last["id"],))
    return Expect(
        [{"hand": last["hand_id"]}],
        [{"hand": last["hand_id"]}, {"table": last["table_id"]}, {"kind": "event_row_id"}],
    )


def garble_settlement_and_rechain(conn: sqlite3.Connection) -> Expect:
    """A settlement entry's delta becomes text and the chain is made whole again: audit
    must report the hand, not stumble over the payload."""
    hand = _target(conn)["hand_id"]
    event = conn.execute(
        "SELECT id, table_id, seq, payload FROM events WHERE hand_id = ? AND type = 'settlement'",
        (hand,),
    ).fetchone()
    fields = json.loads(event["payload"])
    fields["entries"][0]["delta"] = str(fields["entries"][0]["delta"])
    conn.execute("DROP TRIGGER events_no_update")
    conn.execute(
        "UPDATE events SET payload = ? WHERE id = ?", (canonical_json(fields), event["id"])
    )
    _rechain(conn, event["table_id"], event["seq"])
    return Expect(
        [{"hand": hand, "kind": "replay"}, {"hand": hand, "kind": "settlement"}], [{"hand": hand}]
    )


def garble_amount_and_rechain(conn: sqlite3.Connection) -> Expect:
    """A bet's amount becomes text and the chain is made whole again: the engine refuses
    the recorded input, and audit says so instead of stumbling over it."""

    def amount_as_text(event: sqlite3.Row) -> str:
        fields = json.loads(event["payload"])
        fields["amount"] = str(fields["amount"])
        return canonical_json(fields)

    return _rewrite_payload(conn, amount_as_text)


def payload_not_json_and_rechain(conn: sqlite3.Connection) -> Expect:
    """A bet's payload is overwritten with text that is not JSON, the chain made whole:
    replay reports the hand (the engine's own event differs from it) and goes on."""
    return _rewrite_payload(conn, lambda event: "{not json", _rechain_raw)


def input_payload_a_list_and_rechain(conn: sqlite3.Connection) -> Expect:
    """A bet's payload becomes a JSON list (not the object an input is), chain made whole."""
    return _rewrite_payload(conn, lambda event: "[1,2]")


def null_event_time(conn: sqlite3.Connection) -> Expect:
    """An event's time is set to NULL: its hash no longer matches (and audit does not
    stumble over the missing text)."""
    event = _target(conn)
    conn.execute("DROP TRIGGER events_no_update")
    conn.execute("UPDATE events SET created_at = NULL WHERE id = ?", (event["id"],))
    return Expect([{"hand": event["hand_id"], "kind": "event_hash"}], [{"hand": event["hand_id"]}])


def event_type_a_number(conn: sqlite3.Connection) -> Expect:
    """An event's type becomes a number (SQLite keeps any type in any column)."""
    event = _target(conn)
    conn.execute("DROP TRIGGER events_no_update")
    conn.execute("UPDATE events SET type = 5 WHERE id = ?", (event["id"],))
    return Expect(
        [
            {"hand": event["hand_id"], "kind": "event_hash"},
            {"hand": event["hand_id"], "kind": "replay"},
        ],
        [{"hand": event["hand_id"]}],
    )


def garbage_seed(conn: sqlite3.Connection) -> Expect:
    """The revealed seed is overwritten with text that is not hexadecimal."""
    hand = _target(conn)["hand_id"]
    conn.execute("DROP TRIGGER IF EXISTS hands_no_update")
    conn.execute("UPDATE hands SET seed = 'not a seed' WHERE id = ?", (hand,))
    return Expect([{"hand": hand, "kind": "commitment"}], [{"hand": hand}])


def garbage_seats(conn: sqlite3.Connection) -> Expect:
    """The hand's seats are overwritten: once with text that is not JSON, the coins of
    another hand with a wrong type (the hand must still be reported, not crash audit)."""
    hand = _target(conn)["hand_id"]
    other = conn.execute(
        "SELECT id, seats FROM hands WHERE outcome = 'settled' AND id != ? ORDER BY id LIMIT 1",
        (hand,),
    ).fetchone()
    seats = json.loads(other["seats"])
    seats[0]["coins"] = "many"
    conn.execute("DROP TRIGGER IF EXISTS hands_no_update")
    conn.execute("UPDATE hands SET seats = '{not json' WHERE id = ?", (hand,))
    conn.execute("UPDATE hands SET seats = ? WHERE id = ?", (json.dumps(seats), other["id"]))
    return Expect(
        [{"hand": hand, "kind": "replay"}, {"hand": other["id"], "kind": "replay"}],
        [{"hand": hand}, {"hand": other["id"]}],
    )


def payload_a_number_and_rechain(conn: sqlite3.Connection) -> Expect:
    """A bet's payload becomes an SQLite integer (not text at all), the chain made whole."""
    return _rewrite_payload(conn, lambda event: 7, _rechain_raw)


def _rechain_raw(conn: sqlite3.Connection, table_id: str, from_seq: int) -> None:
    """`_rechain` for payloads that are not JSON: the record's text put together around
    the payload as stored, as the store's own hasher does."""
    from gmtool.store.hands import event_hasher

    hash_of = event_hasher(table_id)
    rows = conn.execute(
        "SELECT id, hand_id, seq, type, payload, created_at, prev_hash FROM "
        "events WHERE table_id = ? AND seq >= ? ORDER BY seq",
        (table_id, from_seq),
    ).fetchall()
    head = rows[0]["prev_hash"]
    for row in rows:
        digest = hash_of(
            head, row["hand_id"], row["seq"], row["type"], row["payload"], row["created_at"]
        )
        conn.execute(
            "UPDATE events SET prev_hash = ?, hash = ? WHERE id = ?", (head, digest, row["id"])
        )
        head = digest
    conn.execute("UPDATE chain_heads SET hash = ? WHERE name = ?", (head, f"events:{table_id}"))


TAMPERS: dict[str, Callable[[sqlite3.Connection], Expect]] = {
    "event_amount": edit_event_amount,
    "event_amount_rechained": edit_event_amount_and_rechain,
    "event_deleted": delete_event,
    "events_swapped": swap_events,
    "ledger_row": edit_ledger_row,
    "ledger_row_and_coins": edit_ledger_row_and_coins,
    "player_coins": edit_player_coins,
    "revealed_seed": change_revealed_seed,
    "gm_log_row_deleted": delete_gm_log_row,
    "gm_log_row_edited": edit_gm_log_row,
    "gm_log_last_row_deleted": delete_last_gm_log_row,
    "gm_log_last_row_deleted_head_rewound": delete_last_gm_log_row_and_rewind_head,
    "event_chain_tail_deleted": delete_last_event_of_a_table,
    "settlement_garbled_rechained": garble_settlement_and_rechain,
    "amount_garbled_rechained": garble_amount_and_rechain,
    "payload_not_json_rechained": payload_not_json_and_rechain,
    "input_payload_a_list_rechained": input_payload_a_list_and_rechain,
    "event_time_nulled": null_event_time,
    "event_type_a_number": event_type_a_number,
    "seed_garbage": garbage_seed,
    "seats_garbage": garbage_seats,
    "payload_a_number_rechained": payload_a_number_and_rechain,
}


# Tampered states PostgreSQL's own constraints refuse to hold (so `db copy` refuses them,
# and a role of `db grant` cannot make them): a ledger row naming a GM action that is gone.
REFUSED_BY_POSTGRESQL = {
    "gm_log_last_row_deleted": "foreign key",
    "gm_log_last_row_deleted_head_rewound": "foreign key",
}


def _tamper(db: Path, how: Callable[[sqlite3.Connection], Expect]) -> Expect:
    conn = sqlite3.connect(db)  # foreign keys off, as in any sqlite3 shell
    conn.row_factory = sqlite3.Row
    try:
        with conn:
            return how(conn)
    finally:
        conn.close()


def _matches(problem: dict, subset: dict) -> bool:
    return all(problem.get(key) == value for key, value in subset.items())


def test_the_untouched_copy_audits_clean(host_copy: Path, gm) -> None:
    report = gm.json("audit", "--db", host_copy, "--json")
    hands = sqlite3.connect(host_copy).execute("SELECT COUNT(*) FROM hands").fetchone()[0]
    checkpoint = report.pop("checkpoint")  # the copy carries its witness: checked against it
    assert checkpoint["extended"] is True and checkpoint["witness"].endswith("host.db.witness")
    assert report == {"hands_checked": hands, "problems": []}
    summary = gm("audit", "--db", host_copy).stdout.strip()
    assert summary.startswith(f"{hands} hand(s) checked: ok; the log"), summary


@pytest.mark.parametrize("kind", list(TAMPERS))
def test_audit_names_the_tampered_hand_player_or_gm_action(
    host_copy: Path, gm, kind: str, audited: Audited
) -> None:
    """On both backends: the PostgreSQL store is a copy of the tampered rows (where its
    own constraints let it hold them: below)."""
    expect = _tamper(host_copy, TAMPERS[kind])
    if audited.backend == "postgresql" and kind in REFUSED_BY_POSTGRESQL:
        url = url_of(audited.request.getfixturevalue("pg_server").new())
        copy = gm("db", "copy", "--from", host_copy, "--to", url, expect=2)
        assert REFUSED_BY_POSTGRESQL[kind] in copy.stderr, copy.stderr
        assert "wrote nothing" in copy.stderr
        return
    where = audited.args(host_copy)
    run = gm("audit", *where, "--json", expect=None)
    problems = json.loads(run.stdout)["problems"]
    assert run.returncode == 1, f"audit did not notice {kind}: exit {run.returncode}, {problems}"
    for wanted in expect.required:
        assert any(_matches(p, wanted) for p in problems), (wanted, problems)
    stray = [
        p
        for p in problems
        if not any(_matches(p, scope) for scope in expect.scope) and p["kind"] != "triggers"
    ]  # the tamper dropped them: a finding of its own
    assert not stray, f"problems naming something untouched: {stray}"
    for problem in problems:
        assert {"kind", "detail"} <= problem.keys() and problem["detail"]
    if audited.backend == "postgresql":
        return  # (the text is made from the same report on both backends)
    # the text report names the same things
    text = gm("audit", *where, expect=1).stdout
    for wanted in expect.required:
        named = " ".join(
            f"{key.replace('_', ' ')} {value}" for key, value in wanted.items() if key != "kind"
        )
        assert named in text.replace("gm_action", "gm action"), (named, text)
        if "kind" in wanted:
            assert f": {wanted['kind']}: " in text, text
