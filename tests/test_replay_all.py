"""`gmtool hands replay`: every hand the host recorded replays through the one engine.

Acceptance (issue 6): replay succeeds for every hand the host recorded across all five
systems, including hands with timeouts, reconnects, escapes and kicks; a tampered hand
fails with exit 1 and names the first divergence. Every hand is replayed in-process
(`replay_hand`, the function the command calls); a sample goes through the CLI.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from gmtool.audit.replay import replay_hand
from gmtool.ops.demo import SHIPPED as PROFILES
from gmtool.store.db import connect

# Event types that prove the hard paths were recorded (RULES S17-S19, G2).
HARD_PATHS = {
    "timeout": {"timeout"},
    "reconnect": {"reconnect"},
    "escape": {"escape", "window_expired"},
    "kick": {"kick"},
}


def _rows(db: Path, sql: str, params: tuple = ()) -> list[sqlite3.Row]:
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def _hands_with(db: Path, types: set[str]) -> list[int]:
    marks = ",".join("?" * len(types))
    return [
        r[0]
        for r in _rows(
            db,
            f"SELECT DISTINCT hand_id FROM events WHERE type IN "
            f"({marks}) AND hand_id IS NOT NULL ORDER BY hand_id",
            tuple(types),
        )
    ]


def test_the_host_database_has_every_system_and_every_hard_path(host_db: Path) -> None:
    """The sample is worth replaying: all five systems, and each hard path at least once."""
    systems = {
        r[0]
        for r in _rows(
            db=host_db,
            sql="SELECT DISTINCT c.profile_id FROM hands h JOIN configs c USING (config_id)",
        )
    }
    assert systems == set(PROFILES)
    for path, types in HARD_PATHS.items():
        assert _hands_with(host_db, types), f"no hand with a {path} event ({types})"
    outcomes = {r[0] for r in _rows(host_db, "SELECT DISTINCT outcome FROM hands")}
    assert "running" not in outcomes and "settled" in outcomes


def test_every_recorded_hand_replays_in_process(host_db: Path) -> None:
    """Each hand, under its recorded config (G4): same events byte for byte, same settlement."""
    configs: dict = {}  # shared across hands, as audit shares it
    failures, replayed = [], 0
    with connect(host_db) as store:
        hand_ids = [r[0] for r in store.all("SELECT id FROM hands ORDER BY id")]
        for hand_id in hand_ids:
            result = replay_hand(store, hand_id, configs)
            replayed += 1
            if not result.ok:
                failures.append(result.as_json())
            else:
                assert result.events_checked > 0
    assert replayed == len(hand_ids) >= 50
    assert not failures, json.dumps(failures[:5], indent=1)


def _cli_sample(db: Path) -> list[int]:
    """One hand of each system, each hard path, a voided hand (if any) and the last hand."""
    sample = []
    for profile in PROFILES:
        sample.append(
            _rows(
                db,
                "SELECT h.id FROM hands h JOIN configs c USING (config_id) "
                "WHERE c.profile_id = ? ORDER BY h.id DESC LIMIT 1",
                (profile,),
            )[0][0]
        )
    for types in HARD_PATHS.values():
        sample.append(_hands_with(db, types)[0])
    voided = _rows(db, "SELECT id FROM hands WHERE outcome = 'voided' LIMIT 1")
    sample += [voided[0][0]] if voided else []
    sample.append(_rows(db, "SELECT MAX(id) FROM hands")[0][0])
    return sorted(set(sample))


def test_a_sample_replays_through_the_cli(host_db: Path, gm) -> None:
    for hand_id in _cli_sample(host_db):
        result = gm.json("hands", "replay", hand_id, "--db", host_db, "--json")
        assert result.pop("evidence")["verified"] is True  # the rest of its evidence (issue 24)
        assert result | {"events_checked": 0} == {
            "hand": hand_id,
            "ok": True,
            "replay_ok": True,
            "problems": [],
            "events_checked": 0,
        }
        text = gm("hands", "replay", hand_id, "--db", host_db).stdout
        assert f"hand {hand_id}: replay matches" in text


def _amount_event(db: Path) -> sqlite3.Row:
    """A betting event with an amount, in the middle of a settled hand."""
    return _rows(
        db,
        "SELECT e.id, e.hand_id, e.seq, e.type, e.payload FROM events e JOIN hands "
        "h ON h.id = e.hand_id WHERE h.outcome = 'settled' AND e.type IN ('bet', "
        "'raise', 'follow') ORDER BY e.id LIMIT 1",
    )[0]


def test_a_tampered_hand_fails_replay_at_the_first_divergence(host_copy: Path, gm) -> None:
    """An edited bet amount: exit 1, and the first problem names the edited event."""
    target = _amount_event(host_copy)
    payload = json.loads(target["payload"])
    payload["amount"] += 1
    conn = sqlite3.connect(host_copy)
    with conn:
        conn.execute("DROP TRIGGER events_no_update")
        conn.execute(
            "UPDATE events SET payload = ? WHERE id = ?",
            (json.dumps(payload, sort_keys=True, separators=(",", ":")), target["id"]),
        )
    conn.close()
    report = gm.json("hands", "replay", target["hand_id"], "--db", host_copy, "--json", expect=1)
    assert report["hand"] == target["hand_id"] and report["ok"] is False
    first = report["problems"][0]
    assert first["kind"] == "replay" and first["seq"] == target["seq"], first
    assert f"event {target['seq']}" in first["detail"]
    text = gm("hands", "replay", target["hand_id"], "--db", host_copy, expect=1).stdout
    assert "MISMATCH" in text and f"event {target['seq']}" in text
    # the hands before it are untouched
    earlier = _rows(host_copy, "SELECT MAX(id) FROM hands WHERE id < ?", (target["hand_id"],))
    if earlier[0][0]:
        assert gm.json("hands", "replay", earlier[0][0], "--db", host_copy, "--json")["ok"]


@pytest.mark.parametrize("field", ["seed", "seats"])
def test_a_hand_row_edited_outside_the_chain_fails_replay(host_copy: Path, gm, field: str) -> None:
    """The hand row is not chained, so replay must catch edits of its seed or its seats."""
    hand_id = _amount_event(host_copy)["hand_id"]
    conn = sqlite3.connect(host_copy)
    with conn:
        if field == "seed":  # another hand's seed and commitment, both consistent
            other = conn.execute(
                "SELECT seed, commitment FROM hands WHERE id <> ? AND seed IS NOT NULL LIMIT 1",
                (hand_id,),
            ).fetchone()
            conn.execute(
                "UPDATE hands SET seed = ?, commitment = ? WHERE id = ?", (*other, hand_id)
            )
        else:  # the first seat starts with 1000 coins more
            seats = json.loads(
                conn.execute("SELECT seats FROM hands WHERE id = ?", (hand_id,)).fetchone()[0]
            )
            seats[0]["coins"] += 1000
            conn.execute("UPDATE hands SET seats = ? WHERE id = ?", (json.dumps(seats), hand_id))
    conn.close()
    report = gm.json("hands", "replay", hand_id, "--db", host_copy, "--json", expect=1)
    assert report["ok"] is False and report["problems"][0]["kind"] == "replay"
