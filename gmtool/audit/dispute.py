"""Everything support needs about one recorded hand, for `hands show` and `hands export`.

While a hand runs, its seed stays secret and every face-down card is hidden (RULES G3);
once it has ended, the report shows every card, the revealed seed and whether it
matches the commitment made when the hand started. `report_from` builds the report from
a hand's row and events alone, so `gmtool verify` can rebuild it from the proven records
of an exported report (audit/proof.py) and compare.
"""

from __future__ import annotations

import json

from gmtool.engine.deck import commitment
from gmtool.engine.view import redact_events
from gmtool.store import queries
from gmtool.store.db import Store


def hand_report(store: Store, hand_id: int, with_replay: bool = False) -> dict:
    row = queries.hand(store, hand_id)
    replay = None
    if with_replay and row["outcome"] != "running":
        from gmtool.audit.replay import replay_hand

        replay = replay_hand(store, hand_id).as_json()
    return report_from(row, queries.hand_events(store, hand_id), replay)


def report_from(row: dict, events: list[dict], replay: dict | None = None) -> dict:
    """The report of a hand: `row` is its row with the profile's id, version and title
    (seats and winners parsed), `events` its events as `{"seq", "type", **payload}`."""
    running = row["outcome"] == "running"
    events = redact_events(events, running)
    seed = None if running else row["seed"]
    verifies = None
    if seed:
        verifies = commitment(bytes.fromhex(seed)) == row["commitment"]
    settlement = next((e for e in events if e["type"] == "settlement"), None)
    report = {
        "hand": row["id"],
        "table": row["table_id"],
        "number": row["number"],
        "profile": {"id": row["profile_id"], "version": row["version"], "title": row["title"]},
        "config_id": row["config_id"],
        "tier": row["tier"],
        "banker": row["banker"],
        "ante": row["ante"],
        "seats": row["seats"],
        "started_at": row["started_at"],
        "ended_at": row["ended_at"],
        "outcome": row["outcome"],
        "winners": row["winners"],
        "commitment": row["commitment"],
        "algorithm": row["algorithm"],
        "seed": seed,
        "seed_verifies": verifies,
        "events": events,
        "settlement": {k: v for k, v in settlement.items() if k not in ("type", "seq")}
        if settlement
        else None,
    }
    if replay is not None:
        report["replay"] = replay
    return report


def parsed_row(hand_row: dict, profile: dict) -> dict:
    """A stored hand row as `report_from` takes it."""
    return {
        **hand_row,
        "seats": json.loads(hand_row["seats"]),
        "winners": json.loads(hand_row["winners"]) if hand_row["winners"] else [],
        "profile_id": profile["id"],
        "version": profile["version"],
        "title": profile["title"],
    }
