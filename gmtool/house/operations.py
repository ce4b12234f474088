"""Operator actions on the store that are not play: deploying and rolling back profiles.

Both need an operator once GM users exist (see gm_ops) and both are written to the
GM log with their outcome.
"""

from __future__ import annotations

from pathlib import Path

from gmtool.house import gm_ops
from gmtool.store import configs
from gmtool.store.db import Store


def deploy_profile(store: Store, path: Path, rooms: list[str] | None, by: str) -> dict:
    """Validate and compile the profile file, store it and make it active."""
    from gmtool.rules.compile import compile_file

    compiled = compile_file(path)
    profile_id = compiled["profile"]["id"]
    gm_ops.authorize(store, by, "deploy", profile_id)
    text = path.read_text(encoding="utf-8")
    deployment = configs.deploy(store, compiled, text, rooms, by)
    result = {"deployment": deployment, "profile": profile_id,
              "version": compiled["profile"]["version"], "config_id": compiled["config_id"],
              "rooms": rooms}
    gm_ops.log(store, by, "deploy", profile_id, None, {"ok": True, **result})
    return result


def rollback_profile(store: Store, profile_id: str, by: str) -> dict:
    gm_ops.authorize(store, by, "rollback", profile_id)
    result = configs.rollback(store, profile_id, by)
    gm_ops.log(store, by, "rollback", profile_id, None, {"ok": True, **result})
    return result
