"""Compiled configurations and their deployments (RULES G4, G5).

Every compiled config is stored by `config_id` with the profile text it came from; a
deployment makes one active for a profile's rooms. Tables read the active config at the
start of each hand, so a deployment reaches a table at its next hand, never mid-hand.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from gmtool.canonical import canonical_json
from gmtool.evidence import records
from gmtool.store import dialect, log_append
from gmtool.store.db import NoSuchRecord, Store, StoreError


def save_config(store: Store, compiled: dict, profile_text: str) -> None:
    """Store a compiled config (idempotent: the id is the content)."""
    at = store.now()
    cursor = store.conn.execute(
        "INSERT INTO configs (config_id, profile_id, version, title, game, compiled,"
        " profile_text, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (config_id) DO NOTHING",
        (
            compiled["config_id"],
            compiled["profile"]["id"],
            compiled["profile"]["version"],
            compiled["profile"]["title"],
            compiled["game"],
            canonical_json(compiled),
            profile_text,
            at,
        ),
    )
    if cursor.rowcount == 1:
        log_append.append(
            store,
            records.config_body(
                {"config_id": compiled["config_id"], "profile_text": profile_text, "created_at": at}
            ),
        )


Logged = Callable[[int], object]  # logs the GM action that made a deployment, given its id


def deploy(
    store: Store,
    compiled: dict,
    profile_text: str,
    rooms: list[str] | None,
    by: str,
    note: str = "",
    logged: Logged | None = None,
) -> int:
    """Store and activate `compiled` for `rooms` (None = every room of the profile);
    `logged(deployment id)` logs the GM action that asked for it in the same transaction,
    so no deployment is ever made without one (audit checks it)."""
    unknown = sorted(set(rooms or ()) - {t["id"] for t in compiled["tiers"]})
    if unknown:
        raise NoSuchRecord(
            f"no room {', '.join(unknown)} in {compiled['profile']['id']} "
            f"(rooms: {', '.join(t['id'] for t in compiled['tiers'])})"
        )
    with store.write(durable=True):
        save_config(store, compiled, profile_text)
        deployment = dialect.insert_id(
            store,
            "INSERT INTO deployments (profile_id, rooms, config_id, deployed_by, deployed_at,"
            " active, note) VALUES (?, ?, ?, ?, ?, 1, ?)",
            (
                compiled["profile"]["id"],
                json.dumps(sorted(rooms)) if rooms else None,
                compiled["config_id"],
                by,
                store.now(),
                note,
            ),
        )
        log_append.append_row(store, records.deployment_body, "deployments", "id", deployment)
        if logged is not None:
            logged(deployment)
        return deployment


def _covers(row, tier: str) -> bool:
    return row["rooms"] is None or tier in json.loads(row["rooms"])


def active_config_id(store: Store, profile_id: str, tier: str) -> str | None:
    """The config a room of `profile_id` plays now: the newest active deployment covering it."""
    for row in store.all(
        "SELECT rooms, config_id FROM deployments WHERE profile_id = ? AND "
        "active = 1 ORDER BY id DESC",
        (profile_id,),
    ):
        if _covers(row, tier):
            return row["config_id"]
    return None


def config_of_version(store: Store, profile_id: str, version: int) -> str | None:
    """The config id a profile's `version` was deployed with (None if never deployed)."""
    row = store.one(
        "SELECT c.config_id FROM configs c JOIN deployments d USING (config_id) "
        "WHERE c.profile_id = ? AND c.version = ? ORDER BY d.id DESC LIMIT 1",
        (profile_id, version),
    )
    return row["config_id"] if row else None


def latest_deployment(store: Store, profile_id: str, before: int | None = None) -> dict | None:
    """The newest deployment row of a profile (id, config_id, deployed_by), active or not,
    below id `before` when given; None when there is none. Deployments and rollbacks
    each add a row, so its id says whether a profile's deployments moved."""
    row = store.one(
        "SELECT id, config_id, deployed_by FROM deployments WHERE profile_id = ? AND id < ? "
        "ORDER BY id DESC LIMIT 1",
        (profile_id, before if before is not None else 2**63 - 1),
    )
    return dict(row) if row else None


def latest_config_id(store: Store, profile_id: str) -> str | None:
    """The config of a profile's newest active deployment (whatever rooms it covers)."""
    row = store.one(
        "SELECT config_id FROM deployments WHERE profile_id = ? AND active = 1 "
        "ORDER BY id DESC LIMIT 1",
        (profile_id,),
    )
    return row["config_id"] if row else None


def load_config(store: Store, config_id: str) -> dict:
    row = store.one("SELECT compiled FROM configs WHERE config_id = ?", (config_id,))
    if row is None:
        raise NoSuchRecord(f"no config {config_id} in the store")
    try:
        compiled = json.loads(row["compiled"])
    except (TypeError, ValueError):
        raise StoreError(
            f"config {config_id[:12]} is damaged: its compiled rules are not JSON (edited)"
        ) from None
    if not isinstance(compiled, dict):  # a number or a list in the column (edited)
        raise StoreError(
            f"config {config_id[:12]} is damaged: its compiled rules are not a JSON object (edited)"
        )
    return compiled


def stored_configs(store: Store):
    """Every stored config row (config_id, profile_id, version, title, game, compiled)."""
    return store.conn.execute(dialect.statement(store, "configs.stored"))


def deployed_profiles(store: Store) -> list[str]:
    return [
        r["profile_id"]
        for r in store.all(
            "SELECT DISTINCT profile_id FROM deployments WHERE active = 1 ORDER BY profile_id"
        )
    ]


def history(store: Store, profile_id: str | None = None) -> list[dict]:
    sql = (
        "SELECT d.id, d.profile_id, d.rooms, d.config_id, d.deployed_by, d.deployed_at, "
        "d.active, d.note, c.version FROM deployments d JOIN configs c USING (config_id)"
    )
    rows = store.all(
        sql + (" WHERE d.profile_id = ?" if profile_id else "") + " ORDER BY d.id",
        (profile_id,) if profile_id else (),
    )
    out = [
        dict(row) | {"rooms": json.loads(row["rooms"]) if row["rooms"] else None} for row in rows
    ]
    _mark_in_effect(out)
    return out


def _mark_in_effect(rows: list[dict]) -> None:
    """`in_effect`: the row is, for at least one room, the newest active deployment.

    Older active rows are the undo stack that `rollback` walks back through."""
    covered: dict[str, set[str] | None] = {}  # profile -> rooms taken (None = all)
    for row in sorted(rows, key=lambda r: r["id"], reverse=True):
        taken = covered.setdefault(row["profile_id"], set())
        if not row["active"] or taken is None:
            row["in_effect"] = False
            continue
        rooms = row["rooms"]
        row["in_effect"] = rooms is None or bool(set(rooms) - taken)
        covered[row["profile_id"]] = None if rooms is None else taken | set(rooms)


def rollback(
    store: Store, profile_id: str, by: str, logged: Callable[[dict], object] | None = None
) -> dict:
    """Undo the newest deployment of a profile: the one before it applies again.

    Deployments are history, never edited except for their `active` flag: the newest
    active row is retired, the one before it is superseded by a new row that re-deploys
    its config (noting the rollback), so exactly one row per (profile, rooms) stays
    active and a second rollback goes one step further back. `logged(result)` logs the GM
    action that asked for it in the same transaction.
    """
    with store.write(durable=True):
        rows = store.all(
            "SELECT * FROM deployments WHERE profile_id = ? AND active = 1 ORDER BY id DESC",
            (profile_id,),
        )
        if len(rows) < 2:
            raise StoreError(
                f"{profile_id}: nothing to roll back to (active deployments: "
                f"{len(rows)}); see `gmtool deploy history`"
            )
        latest, previous = rows[0], rows[1]
        store.conn.execute(
            "UPDATE deployments SET active = 0 WHERE id IN (?, ?)", (latest["id"], previous["id"])
        )
        log_append.append(store, records.retire_body([latest["id"], previous["id"]], store.now()))
        deployment = dialect.insert_id(
            store,
            "INSERT INTO deployments (profile_id, rooms, config_id, deployed_by, deployed_at, "
            "active, note) VALUES (?, ?, ?, ?, ?, 1, ?)",
            (
                profile_id,
                previous["rooms"],
                previous["config_id"],
                by,
                store.now(),
                f"rollback of deployment {latest['id']} to {previous['id']}",
            ),
        )
        log_append.append_row(store, records.deployment_body, "deployments", "id", deployment)
        result = {
            "rolled_back": latest["config_id"],
            "active": previous["config_id"],
            "deployment": deployment,
        }
        if logged is not None:
            logged(result)
    return result


def deployment_rows(store: Store) -> list[dict]:
    """Every deployment row as stored, in id order (what audit matches to GM actions)."""
    return [
        dict(row)
        for row in store.all(
            "SELECT id, profile_id, config_id, deployed_by, note FROM deployments ORDER BY id"
        )
    ]
