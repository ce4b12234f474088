"""Operator actions on the store that are not play: deploying and rolling back profiles."""

from __future__ import annotations

from pathlib import Path

from gmtool.store import configs
from gmtool.store.db import Store


def deploy_profile(store: Store, path: Path, rooms: list[str] | None, by: str) -> dict:
    """Validate and compile the profile file, store it and make it active."""
    from gmtool.rules.compile import compile_file

    compiled = compile_file(path)
    text = path.read_text(encoding="utf-8")
    deployment = configs.deploy(store, compiled, text, rooms, by)
    return {"deployment": deployment, "profile": compiled["profile"]["id"],
            "version": compiled["profile"]["version"], "config_id": compiled["config_id"],
            "rooms": rooms}


def rollback_profile(store: Store, profile_id: str, by: str) -> dict:
    return configs.rollback(store, profile_id, by)
