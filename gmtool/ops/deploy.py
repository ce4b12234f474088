"""Deploying and rolling back profiles: what an operator changes that is not play.

Both need an operator once GM users exist (ops/gm.py) and both are written to the GM log
with their outcome. A profile is read once (ops/profile.py): the plan, the compiled
config and the stored text all come from the same bytes.
"""

from __future__ import annotations

from pathlib import Path

from gmtool.errors import Refused, UsageError
from gmtool.evidence.request import Gm
from gmtool.ops import gm as gm_ops
from gmtool.ops.profile import Profile, read_profile
from gmtool.store import configs, gm
from gmtool.store.db import Store


def plan_deployment(store: Store, profile: Profile | Path, rooms: list[str] | None) -> dict:
    """What deploying `profile` would change, as `terraform plan` tells it, writing
    nothing: per room, the config live now and what changes for players; the validation
    warnings.

    Refused: a scenario instead of a profile; rooms the profile does not have; content
    that differs from a deployed config of the same profile version (bump the version).
    """
    from gmtool.rules.diff import diff_configs

    if not isinstance(profile, Profile):
        profile = read_profile(profile)
    compiled = profile.compiled
    profile_id, version, tiers = profile.id, profile.version, profile.tiers
    unknown = sorted(set(rooms or ()) - set(tiers))
    if unknown:
        raise UsageError(
            f"no room {', '.join(unknown)} in {profile_id} (rooms: {', '.join(tiers)})"
        )
    same_version = configs.config_of_version(store, profile_id, version)
    if same_version is not None and same_version != profile.config_id:
        older = (
            configs.load_config(store, same_version).get("schema_version", 1)
            < compiled["schema_version"]
        )
        why = (
            " by an earlier gmtool, whose compiled rules read differently (docs/decisions.md"
            ", 'Rule fixes and recorded history')"
            if older
            else " with other content"
        )
        raise Refused(
            f"{profile_id} version {version} is already deployed{why} (config "
            f"{same_version[:12]}); bump [profile] version to deploy this"
        )
    by_live: dict[str | None, list[str]] = {}  # the config live now -> its rooms
    for room in rooms or tiers:
        live = configs.active_config_id(store, profile_id, room)
        if live != profile.config_id:
            by_live.setdefault(live, []).append(room)
    changes = []
    for live, live_rooms in by_live.items():
        before = configs.load_config(store, live) if live else None
        changes.append(
            {
                "rooms": live_rooms,
                "live": live,
                "changes": [c.message for c in diff_configs(before, compiled)]
                if before
                else ["new: nothing of this profile is live in these rooms yet"],
            }
        )
    return {
        "profile": profile_id,
        "version": version,
        "config_id": profile.config_id,
        "rooms": rooms,
        "changes": changes,
        "warnings": [str(f) for f in profile.warnings],
    }


def deploy_profile(store: Store, path: Path, rooms: list[str] | None, by: Gm) -> dict:
    """Validate and compile the profile file, store it and make it active (tables switch
    at their next hand, G5). Deploying what is already live in every room changes nothing
    (no new deployment row). The result carries the plan's changes and warnings."""
    profile = read_profile(path)
    plan = plan_deployment(store, profile, rooms)
    compiled = profile.compiled
    profile_id = plan["profile"]
    request = gm_ops.authorize(
        store, by, "deploy", profile_id, None, {"config": plan["config_id"], "rooms": rooms}
    )
    if not plan["changes"]:
        return {**plan, "deployment": None, "unchanged": True}
    text = profile.text  # the bytes compiled, not another read
    outcome = {"ok": True, **{k: v for k, v in plan.items() if k != "warnings"}, "unchanged": False}
    deployment = configs.deploy(
        store,
        compiled,
        text,
        rooms,
        by.name,
        logged=lambda made: gm.log_action(
            store, by.name, "deploy", profile_id, None, {**outcome, "deployment": made}, request
        ),
    )
    return {**plan, "deployment": deployment, "unchanged": False}


def profile_id_of(profile: str) -> str:
    """A profile id, or the id of the profile file at `profile`."""
    path = Path(profile)
    return read_profile(path).id if path.is_file() else profile


def rollback_profile(store: Store, profile: str, by: Gm) -> dict:
    """Undo the newest deployment of a profile, given by its id or by its file."""
    profile_id = profile_id_of(profile)
    request = gm_ops.authorize(store, by, "rollback", profile_id)
    return configs.rollback(
        store,
        profile_id,
        by.name,
        logged=lambda result: gm.log_action(
            store, by.name, "rollback", profile_id, None, {"ok": True, **result}, request
        ),
    )
