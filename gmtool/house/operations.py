"""Operator actions on the store that are not play: deploying and rolling back profiles.

Both need an operator once GM users exist (see gm_ops) and both are written to the
GM log with their outcome.
"""

from __future__ import annotations

from pathlib import Path

from gmtool.errors import Refused, UsageError
from gmtool.evidence.request import Gm
from gmtool.house import gm_ops
from gmtool.store import configs, gm
from gmtool.store.db import Store


def plan_deployment(store: Store, path: Path, rooms: list[str] | None) -> dict:
    """What deploying `path` would change, as `terraform plan` tells it, writing nothing:
    per room, the config live now and what changes for players; the validation warnings.

    Refused: a scenario instead of a profile; rooms the profile does not have; content
    that differs from a deployed config of the same profile version (bump the version).
    """
    from gmtool.rules.compile import compile_file
    from gmtool.rules.diff import diff_configs
    from gmtool.rules.validate import read_profile_bytes, validate_bytes

    refuse_scenario(path)
    compiled = compile_file(path)
    profile_id, version = compiled["profile"]["id"], compiled["profile"]["version"]
    tiers = [t["id"] for t in compiled["tiers"]]
    unknown = sorted(set(rooms or ()) - set(tiers))
    if unknown:
        raise UsageError(f"no room {', '.join(unknown)} in {profile_id} (rooms: "
                         f"{', '.join(tiers)})")
    same_version = configs.config_of_version(store, profile_id, version)
    if same_version is not None and same_version != compiled["config_id"]:
        older = configs.load_config(store, same_version).get("schema_version", 1) \
            < compiled["schema_version"]
        why = " by an earlier gmtool, whose compiled rules read differently (docs/decisions.md" \
              ", 'Rule fixes and recorded history')" if older else " with other content"
        raise Refused(f"{profile_id} version {version} is already deployed{why} (config "
                      f"{same_version[:12]}); bump [profile] version to deploy this")
    by_live: dict[str | None, list[str]] = {}  # the config live now -> its rooms
    for room in rooms or tiers:
        live = configs.active_config_id(store, profile_id, room)
        if live != compiled["config_id"]:
            by_live.setdefault(live, []).append(room)
    changes = []
    for live, live_rooms in by_live.items():
        before = configs.load_config(store, live) if live else None
        changes.append({"rooms": live_rooms, "live": live, "changes": [
            c.message for c in diff_configs(before, compiled)] if before else
            ["new: nothing of this profile is live in these rooms yet"]})
    warnings = [str(f) for f in validate_bytes(read_profile_bytes(path), str(path))
                if f.severity == "warning"]
    return {"profile": profile_id, "version": version, "config_id": compiled["config_id"],
            "rooms": rooms, "changes": changes, "warnings": warnings, "compiled": compiled}


def deploy_profile(store: Store, path: Path, rooms: list[str] | None, by: Gm) -> dict:
    """Validate and compile the profile file, store it and make it active (tables switch
    at their next hand, G5). Deploying what is already live in every room changes nothing
    (no new deployment row). The result carries the plan's changes and warnings."""
    plan = plan_deployment(store, path, rooms)
    compiled = plan.pop("compiled")
    profile_id = plan["profile"]
    request = gm_ops.authorize(store, by, "deploy", profile_id, None,
                               {"config": plan["config_id"], "rooms": rooms})
    if not plan["changes"]:
        return {**plan, "deployment": None, "unchanged": True}
    text = path.read_text(encoding="utf-8")
    outcome = {"ok": True, **{k: v for k, v in plan.items() if k != "warnings"},
               "unchanged": False}
    deployment = configs.deploy(store, compiled, text, rooms, by.name, logged=lambda made: (
        gm.log_action(store, by.name, "deploy", profile_id, None,
                      {**outcome, "deployment": made}, request)))
    return {**plan, "deployment": deployment, "unchanged": False}


def profile_id_of(profile: str) -> str:
    """A profile id, or the id of the profile file at `profile`."""
    path = Path(profile)
    if not path.is_file():
        return profile
    from gmtool.rules.compile import compile_file

    refuse_scenario(path)
    return compile_file(path)["profile"]["id"]


def refuse_scenario(path: Path) -> None:
    """UsageError when `path` is a scenario (it names a profile) rather than a profile."""
    import tomllib

    from gmtool.rules.validate import is_scenario_data, read_profile_bytes

    try:
        data = tomllib.loads(read_profile_bytes(path).decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
        return  # compiling reports it, with its line and column
    if is_scenario_data(data):
        raise UsageError(f"{path} is a scenario (an executable rule test), not a profile: "
                         f"deploy the profile it names ({data['profile']}), or run it with "
                         "`gmtool rules test`")


def rollback_profile(store: Store, profile: str, by: Gm) -> dict:
    """Undo the newest deployment of a profile, given by its id or by its file."""
    profile_id = profile_id_of(profile)
    request = gm_ops.authorize(store, by, "rollback", profile_id)
    return configs.rollback(store, profile_id, by.name, logged=lambda result: (
        gm.log_action(store, by.name, "rollback", profile_id, None, {"ok": True, **result},
                      request)))
