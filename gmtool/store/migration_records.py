"""Frozen copies of the evidence records the store's migrations append (format 1).

Migrations m003 (the evidence log) and m004 (GM keys) log the rows a store already held
when they run, as records of the format of their time. They must append the same bytes
however the live format (`gmtool.evidence.records`) grows later, so they use these
copies, which never change. tests/test_record_format.py holds them to the live format on
the rows of their time: the two must agree, or the audit of a migrated store would fail.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Body = dict[str, Any]


def events_v1(table_id: str, first: int, last: int, head: str) -> Body:
    return {"kind": "events", "table": table_id, "first": first, "last": last, "head": head}


def hand_v1(row: Mapping) -> Body:
    return {"kind": "hand", "id": row["id"], "table": row["table_id"], "number": row["number"],
            "config": row["config_id"], "tier": row["tier"], "banker": row["banker"],
            "ante": row["ante"], "seats": row["seats"], "commitment": row["commitment"],
            "algorithm": row["algorithm"], "at": row["started_at"]}


def hand_end_v1(row: Mapping) -> Body:
    return {"kind": "hand_end", "id": row["id"], "outcome": row["outcome"],
            "winners": row["winners"], "seed": row["seed"], "at": row["ended_at"]}


def ledger_v1(row: Mapping) -> Body:
    return {"kind": "ledger", "id": row["id"], "hand": row["hand_id"],
            "gm_action": row["gm_action_id"], "player": row["player"], "delta": row["delta"],
            "reason": row["reason"], "at": row["created_at"]}


def gm_action_v1(row: Mapping) -> Body:
    return {"kind": "gm_action", "id": row["id"], "hash": row["hash"]}


def config_v1(row: Mapping) -> Body:
    """m003 logs a stored config by its id alone (text and time came later)."""
    return {"kind": "config", "id": row["config_id"]}


def deployment_v1(row: Mapping) -> Body:
    return {"kind": "deployment", "id": row["id"], "profile": row["profile_id"],
            "rooms": row["rooms"], "config": row["config_id"], "by": row["deployed_by"],
            "at": row["deployed_at"], "note": row["note"]}


def gm_user_v1(row: Mapping) -> Body:
    """m003 runs before GM users had keys."""
    return {"kind": "gm_user", "name": row["name"], "role": row["role"],
            "at": row["created_at"]}


def gm_request_v1(row: Mapping) -> Body:
    return {"kind": "gm_request", "id": row["id"], "command": row["kind"],
            "table": row["table_id"], "player": row["player"], "reason": row["reason"],
            "by": row["issued_by"], "at": row["issued_at"], "request": row["request"]}


def player_v1(row: Mapping) -> Body:
    return {"kind": "player", "name": row["name"], "type": row["kind"],
            "at": row["created_at"]}
