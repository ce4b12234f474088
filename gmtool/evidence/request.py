"""A GM's signed request: what a GM asks of a store, in a form only their key can make.

A request is a signed note (c2sp.org/signed-note) whose text is one line of canonical
JSON: the store it is for (its id, so a request cannot be replayed on another store), who
asks (`by`, the key's name), the action, its target and reason, its arguments (the amount
of an adjustment, the role and key of a GM user, the config deployed), when, and a random
nonce (no two requests are the same note). The store keeps the note as it was signed;
whoever holds the GM's registered verifier key can check it, the host before it acts and
the audit afterwards.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from typing import Any, cast

from gmtool.canonical import canonical_json
from gmtool.evidence.note import NoteError, Signer, Verifier, open_note, sign

FIELDS = ("store", "by", "action", "target", "reason", "args", "at", "nonce")
# The GM actions only an operator may take: each carries the operator's signed request
# (the console refuses anyone else; the audit holds every successful one to it).
PRIVILEGED = {
    "kick",
    "close",
    "open",
    "adjust",
    "deploy",
    "rollback",
    "users_add",
    "witness_add",
    "witness_remove",
    "witness_quorum",
}


@dataclass(frozen=True)
class Gm:
    """Who acts: a GM user name and, where this user has it, their private key. The name
    alone proves nothing; only a signature by the key registered for it does."""

    name: str
    signer: Signer | None = None


def make(
    gm: Gm,
    store_id: str,
    action: str,
    target: str | None,
    reason: str | None,
    args: dict[str, Any],
    at: str,
) -> str:
    """The signed request note (the caller checked that `gm` has a key)."""
    fields = {
        "store": store_id,
        "by": gm.name,
        "action": action,
        "target": target,
        "reason": reason,
        "args": args,
        "at": at,
        "nonce": secrets.token_hex(16),
    }
    return sign(canonical_json(fields) + "\n", cast(Signer, gm.signer))


def fields_of(note: str) -> dict[str, Any]:
    """The request's fields as written, signature unchecked; NoteError if malformed."""
    text, sep, _ = note.rpartition("\n\n")
    try:
        fields = json.loads(text) if sep else None
    except ValueError:
        fields = None
    if not isinstance(fields, dict) or set(fields) != set(FIELDS):
        raise NoteError("not a GM request (a signed line of its fields expected)")
    return fields


def open_request(note: str, verifier: Verifier) -> dict[str, Any]:
    """The request's fields once `verifier`'s signature on it holds; NoteError otherwise."""
    fields = fields_of(note)
    open_note(note, [verifier])
    return fields


def problem(
    note: str | None,
    by: str | None,
    role: str | None,
    key: str | None,
    store_id: str,
    action: str,
    target: str | None,
    reason: str | None,
    args: dict[str, Any] | None = None,
) -> str | None:
    """Why `note` is not a request that `by` (whose role and registered verifier key are
    given) signed as an operator for exactly this action on store `store_id`; None when
    it is one. Arguments are compared only when `args` is given."""
    doing = action.replace("_", " ")
    if role is None:
        return f"{by!r} is not a GM user; only operators may {doing}"
    if role != "operator":
        return f"{by!r} is {role}; only operators may {doing}"
    if key is None:
        return (
            f"{by!r} has no registered key: an operator registers it (`gmtool gm users add "
            f"{by} --role operator --key KEY`)"
        )
    if note is None:
        return "the request is not signed"
    try:
        fields = open_request(note, Verifier.parse(key))
    except NoteError:
        return f"the request is not signed by {by}'s registered key"
    if fields["by"] != by or fields["store"] != store_id:
        return "the request was signed for another GM or another store"
    asked: dict[str, Any] = {"action": action, "target": target, "reason": reason}
    if args is not None:
        asked["args"] = args
    changed = sorted(name for name, value in asked.items() if fields[name] != value)
    if changed:
        return f"the request does not ask for this ({', '.join(changed)} differ)"
    return None
