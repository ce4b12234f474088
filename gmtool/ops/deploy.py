"""Deploying and rolling back profiles: what an operator changes that is not play.

Both need an operator once GM users exist (ops/gm.py) and both are written to the GM log
with their outcome. A profile is read once (ops/profile.py): the plan, the compiled
config and the stored text all come from the same bytes. A plan lists what would refuse
the deployment instead of stopping at the first; a saved plan is ops/deploy_plan.py.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from gmtool.errors import GmtoolError, NotFound, Refused, UsageError
from gmtool.evidence.request import Gm
from gmtool.ops import gm as gm_ops
from gmtool.ops.profile import Profile, read_profile
from gmtool.store import configs, gm
from gmtool.store.db import Store


def plan_deployment(
    store: Store, profile: Profile | Path, rooms: list[str] | None, by: Gm | None = None
) -> dict:
    """What deploying `profile` would change, as `terraform plan` tells it, writing
    nothing: per room, the config live now and what changes for players; the validation
    warnings; and `blockers`, what would refuse the deployment, each with its exit code
    (rooms the profile does not have; content that differs from a deployed config of the
    same profile version; with `by`, a GM who may not deploy here). The plan of the
    rooms it can plan is made all the same, so a dry run shows it before the blockers.

    `base` is the profile's newest deployment row (None: never deployed): a saved plan
    applies only while it is still the newest (ops/deploy_plan.py).
    """
    from gmtool.rules.diff import diff_configs

    if not isinstance(profile, Profile):
        profile = read_profile(profile)
    compiled = profile.compiled
    profile_id, version, tiers = profile.id, profile.version, profile.tiers
    blockers = []
    unknown = sorted(set(rooms or ()) - set(tiers))
    if unknown:
        blockers.append(
            _blocker(
                UsageError(
                    f"no room {', '.join(unknown)} in {profile_id} (rooms: {', '.join(tiers)})"
                )
            )
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
        blockers.append(
            _blocker(
                Refused(
                    f"{profile_id} version {version} is already deployed{why} (config "
                    f"{same_version[:12]}); bump [profile] version to deploy this"
                )
            )
        )
    if by is not None and (refusal := _may_not_deploy(store, by, profile, rooms)):
        blockers.append(refusal)
    planned = [room for room in rooms or tiers if room in tiers]
    by_live: dict[str | None, list[str]] = {}  # the config live now -> its rooms
    for room in planned:
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
    base = configs.latest_deployment(store, profile_id)
    return {
        "profile": profile_id,
        "version": version,
        "config_id": profile.config_id,
        "rooms": rooms,
        "planned_rooms": planned,
        "changes": changes,
        "warnings": [str(f) for f in profile.warnings],
        "blockers": blockers,
        "base": base["id"] if base else None,
    }


def _blocker(error: GmtoolError) -> dict:
    return {"message": str(error), "exit_code": error.exit_code}


def _may_not_deploy(store: Store, by: Gm, profile: Profile, rooms: list[str] | None) -> dict | None:
    """Why `by` could not deploy here, as a blocker (nothing signed is kept, nothing is
    logged: a plan only asks); None when they could."""
    if not gm.has_operator(store):
        return None  # a fresh store being set up: deploying needs no role yet
    args = {"config": profile.config_id, "rooms": rooms}
    request = None  # the role and the registered key first: they need no key here
    if gm.role_of(store, by.name) == "operator" and gm.registered_key(store, by.name):
        try:
            request = gm_ops.sign_request(store, by, "deploy", profile.id, None, args)
        except UsageError as error:
            return _blocker(error)
    why = gm.request_problem(store, request, by.name, "deploy", profile.id, None, args)
    return _blocker(Refused(why)) if why else None


def refuse_if_blocked(plan: dict) -> None:
    """Raise the plan's first blocker as the error it is (exit 1 or 2); nothing if none."""
    if plan["blockers"]:
        first = plan["blockers"][0]
        raise (Refused if first["exit_code"] == 1 else UsageError)(first["message"])


def deploy_profile(store: Store, path: Path, rooms: list[str] | None, by: Gm) -> dict:
    """Validate and compile the profile file, store it and make it active (tables switch
    at their next hand, G5). Deploying what is already live in every room changes nothing
    (no new deployment row). The result carries the plan's changes and warnings."""
    profile = read_profile(path)
    plan = plan_deployment(store, profile, rooms)
    refuse_if_blocked(plan)
    request = gm_ops.authorize(
        store, by, "deploy", plan["profile"], None, {"config": plan["config_id"], "rooms": rooms}
    )
    return carry_out(store, profile, plan, by.name, request)


def carry_out(
    store: Store,
    profile: Profile,
    plan: dict,
    by: str,
    request: str | None,
    check: Callable[[int], None] | None = None,
) -> dict:
    """Make the planned deployment, logged as GM `by`'s with their signed `request`, in
    one transaction; `check(deployment id)` runs inside it first and may refuse (undoing
    it). A plan without changes deploys nothing."""
    if not plan["changes"]:
        return {**plan, "deployment": None, "unchanged": True}
    outcome = {
        "ok": True,
        **{k: v for k, v in plan.items() if k not in _NOT_LOGGED},
        "unchanged": False,
    }

    def logged(made: int) -> None:
        if check is not None:
            check(made)
        gm.log_action(
            store, by, "deploy", plan["profile"], None, {**outcome, "deployment": made}, request
        )

    deployment = configs.deploy(
        store, profile.compiled, profile.text, plan["rooms"], by, logged=logged
    )  # the bytes compiled, not another read
    return {**plan, "deployment": deployment, "unchanged": False}


_NOT_LOGGED = {"warnings", "blockers", "base", "planned_rooms"}  # said before, not done


def profile_id_of(profile: str) -> str:
    """A profile id, or the id of the profile file at `profile`."""
    path = Path(profile)
    return read_profile(path).id if path.is_file() else profile


def rollback_profile(store: Store, profile: str, by: Gm) -> dict:
    """Undo the newest deployment of a profile, given by its id or by its file.

    NotFound (exit 2, before anything is signed or logged) for a profile this store never
    deployed: a typo in an id or a path is a usage error, not a refused rollback."""
    if not profile.strip():
        raise UsageError("name the profile to roll back: its id, or its file")
    profile_id = profile_id_of(profile)
    if not configs.history(store, profile_id):
        deployed = ", ".join(configs.deployed_profiles(store)) or "none yet"
        what = (
            f"{profile}: no such profile file, and no profile of that id was"
            if profile_id.endswith(".toml") or "/" in profile_id
            else f"{profile_id} was never"
        )
        raise NotFound(
            f"{what} deployed to this store: nothing to roll back (deployed profiles: "
            f"{deployed}); see `gmtool deploy history`"
        )
    request = gm_ops.authorize(store, by, "rollback", profile_id)
    return configs.rollback(
        store,
        profile_id,
        by.name,
        logged=lambda result: gm.log_action(
            store, by.name, "rollback", profile_id, None, {"ok": True, **result}, request
        ),
    )
