"""Saved deploy plans: `deploy PROFILE --plan-out FILE` now, `deploy apply FILE` later.

As with `terraform plan -out` and `terraform apply`, what was reviewed is what is
deployed, or nothing is. The plan file is a signed note (c2sp.org/signed-note, the form
of every GM request) whose text is the plan as JSON: the store it is for, the GM who made
it, the profile's text and compiled config id, the rooms, what changes for players, the
profile's newest deployment when it was made (`base`), and the GM's signed deploy request
for exactly this config and these rooms. The GM signs it with their own key.

`apply_plan` deploys the profile text inside the plan (the file it came from may have
changed since) and refuses, exit 1, when the file was altered after it was signed, when
its signer is not an operator of this store with that key, when it was made for another
store, or when the store moved: the profile was deployed or rolled back since, or the
plan, made again now, would differ. The GM log names the GM who signed the plan: their
signed request is what the store carries out, as the host carries out a GM's signed
command, so applying needs no key of its own.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gmtool.errors import Refused, UsageError
from gmtool.evidence.note import NoteError, Verifier, open_note, sign
from gmtool.evidence.request import Gm
from gmtool.evidence.witness import NotText, read_text, write_private
from gmtool.ops import gm as gm_ops
from gmtool.ops.deploy import carry_out, plan_deployment, refuse_if_blocked
from gmtool.ops.profile import profile_of_text, read_profile
from gmtool.store import configs, gm, log_append
from gmtool.store.db import Store

FORMAT = "gmtool deploy plan 1"  # the `plan` field of every plan file


def save_plan(store: Store, path: Path, rooms: list[str] | None, by: Gm, out: Path) -> dict:
    """The plan of deploying the profile at `path` (as `plan_deployment`), written signed
    by `by` to `out` (its `plan_file`) unless something blocks it."""
    if not str(out).strip() or str(out) == ".":
        raise UsageError("--plan-out is blank: name the plan file to write")
    if str(out) == "-":
        raise UsageError(
            "--plan-out -: a plan is a file `gmtool deploy apply FILE` reads later; name it"
        )
    if not gm.has_operator(store):
        raise UsageError(
            "this store has no operator yet, and a saved plan is applied only when an "
            "operator of the store signed it: `gmtool db init --as NAME` registers the first"
        )
    profile = read_profile(path)
    plan = plan_deployment(store, profile, rooms, by)
    if plan["blockers"]:
        return plan
    args = {"config": plan["config_id"], "rooms": rooms}
    request = gm_ops.sign_request(store, by, "deploy", plan["profile"], None, args)
    fields = {
        "plan": FORMAT,
        "store": log_append.store_id(store),
        "by": by.name,
        "at": store.now(),
        "file": str(path),
        "profile_text": profile.text,
        "request": request,
        **{k: plan[k] for k in ("profile", "version", "config_id", "rooms", "changes", "base")},
    }
    text = json.dumps(fields, ensure_ascii=False, indent=2, sort_keys=True) + "\n"
    if out.is_dir():
        raise UsageError(f"--plan-out {out} is a folder; name the plan file to write")
    try:
        write_private(out, sign(text, by.signer))  # (sign_request: by has a key)
    except OSError as error:
        raise UsageError(
            f"cannot write the plan to {out} ({error.strerror or error}); nothing was deployed"
        ) from None
    return {**plan, "plan_file": str(out)}


def apply_plan(store: Store, plan_file: Path) -> dict:
    """Deploy exactly what the plan file says, or refuse (module docstring)."""
    try:
        note = read_text(plan_file)
    except NotText:
        raise UsageError(f"{plan_file} is not a deploy plan (not a text file)") from None
    fields = _fields(note, plan_file)
    by = fields["by"]
    if fields["store"] != log_append.store_id(store):
        raise Refused(f"{plan_file} was made for another store ({fields['store']}); not applied")
    _check_signature(store, note, by, plan_file)
    profile = profile_of_text(Path(fields["file"]), fields["profile_text"])
    rooms = fields["rooms"]
    args = {"config": fields["config_id"], "rooms": rooms}
    why = gm.request_problem(store, fields["request"], by, "deploy", fields["profile"], None, args)
    if why:
        raise Refused(f"{plan_file}: its deploy request does not hold ({why}); not applied")
    if profile.config_id != fields["config_id"]:
        raise Refused(
            f"{plan_file}: this gmtool compiles the plan's profile to config "
            f"{profile.config_id[:12]}, not the planned {fields['config_id'][:12]} (was gmtool "
            "upgraded?); make a new plan"
        )
    _check_base(store, fields, plan_file)
    plan = plan_deployment(store, profile, rooms)
    refuse_if_blocked(plan)
    if plan["changes"] != fields["changes"]:
        raise Refused(
            f"the store moved since {plan_file} was made: deploying it now would change "
            "other things than the plan says; make a new plan"
        )

    def still_base(made: int) -> None:  # inside the deployment's transaction
        _check_base(store, fields, plan_file, before=made)

    return carry_out(store, profile, plan, by, fields["request"], check=still_base)


def _fields(note: str, plan_file: Path) -> dict[str, Any]:
    """The plan's fields as written (signature unchecked). UsageError for a file that is
    no plan at all; Refused for a plan whose text no longer reads as one (altered)."""
    text, sep, _ = note.rpartition("\n\n")
    if f'"plan": "{FORMAT}"' in note and not sep:
        raise Refused(f"{plan_file} is not signed (its signature was removed); not applied")
    if f'"plan": "{FORMAT}"' not in text:
        raise UsageError(
            f"{plan_file} is not a deploy plan (`gmtool deploy PROFILE --plan-out FILE` writes one)"
        )
    try:
        fields = json.loads(text)
        if not isinstance(fields, dict) or fields.get("plan") != FORMAT:
            raise ValueError
        for name, kind in _FIELDS.items():
            if not isinstance(fields.get(name), kind):
                raise ValueError
    except ValueError:
        raise Refused(
            f"{plan_file} was altered: it no longer reads as the plan that was signed; not applied"
        ) from None
    return fields


_FIELDS: dict[str, Any] = {
    "store": str,
    "by": str,
    "file": str,
    "profile_text": str,
    "request": str,
    "profile": str,
    "config_id": str,
    "rooms": (list, type(None)),
    "changes": list,
    "base": (int, type(None)),
}


def _check_signature(store: Store, note: str, by: str, plan_file: Path) -> None:
    """Refused unless `by` is an operator here and the registered key of `by` signed
    the note as it is now."""
    role, key = gm.role_of(store, by), gm.registered_key(store, by)
    if role != "operator":
        who = f"{by}, who is {role}" if role else f"{by}, who is not a GM user of this store"
        raise Refused(
            f"{plan_file} is signed by {who}: only an operator's plan is applied; not applied"
        )
    if key is None:
        raise Refused(f"{plan_file}: {by} has no registered key to check it with; not applied")
    try:
        open_note(note, [Verifier.parse(key)])
    except NoteError as error:
        words = (
            f"was altered after {by} signed it"
            if "does not verify" in str(error)
            else f"is not signed with {by}'s registered key"
        )
        raise Refused(f"{plan_file} {words}; not applied") from None


def _check_base(
    store: Store, fields: dict[str, Any], plan_file: Path, before: int | None = None
) -> None:
    """Refused when the profile was deployed or rolled back since the plan was made."""
    newest = configs.latest_deployment(store, fields["profile"], before)
    now = newest["id"] if newest else None
    if now == fields["base"]:
        return
    applied = [
        action["id"]
        for action in gm.actions_by_id(store).values()
        if action["request"] == fields["request"]
    ]
    if applied:
        raise Refused(f"{plan_file} was already applied (GM action {applied[0]}); not again")
    raise Refused(
        f"the store moved since {plan_file} was made: {fields['profile']} was deployed or "
        f"rolled back meanwhile (its newest deployment is now {now}, it was "
        f"{fields['base'] if fields['base'] is not None else 'none'}); make a new plan"
    )
