"""A GM's signed request: what a GM asks of a store, in a form only their key can make.

A request is a signed note (c2sp.org/signed-note) whose text is one line of canonical
JSON: the store it is for (its id, so a request cannot be replayed on another store), who
asks (`by`, the key's name), the action, its target and reason, its arguments (the amount
of an adjustment, the role and key of a GM user, the config deployed), when, a random
nonce (no two requests are the same note) and the history it was made on (`log`: the
evidence log's size and root when it was signed). The store keeps the note as it was
signed; whoever holds the GM's registered verifier key can check it, the host before it
acts and the audit afterwards.

Copies of a store share its id, so the id alone does not stop a request signed on a copy
from being carried out on the original. `log` does: the original's first `size` records
must hash to the signed root, which they do not once the copy has written anything of
its own (`history_problem`). Requests signed before 2026-12-02 (issue 24) name no history
(`FIELDS_UNBOUND`); they stay valid evidence of what was done then.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, cast

from gmtool.canonical import canonical_json
from gmtool.evidence.note import NoteError, Signer, Verifier, open_note, sign

FIELDS_UNBOUND = ("store", "by", "action", "target", "reason", "args", "at", "nonce")
FIELDS = (*FIELDS_UNBOUND, "log")  # since 2026-12-02: bound to the log it was made on
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
    "token_key",  # a key that signs player tokens (issue 25)
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
    history: tuple[int, bytes] | None = None,
) -> str:
    """The signed request note (the caller checked that `gm` has a key), bound to the
    evidence log's (size, root) `history` when it is signed. Without `history` the note is
    in the form of requests from before 2026-12-02 (tests forge such requests)."""
    fields: dict[str, Any] = {
        "store": store_id,
        "by": gm.name,
        "action": action,
        "target": target,
        "reason": reason,
        "args": args,
        "at": at,
        "nonce": secrets.token_hex(16),
    }
    if history is not None:
        fields["log"] = {"size": history[0], "root": history[1].hex()}
    return sign(canonical_json(fields) + "\n", cast(Signer, gm.signer))


def fields_of(note: str) -> dict[str, Any]:
    """The request's fields as written, signature unchecked; NoteError if malformed."""
    text, sep, _ = note.rpartition("\n\n")
    try:
        fields = json.loads(text) if sep else None
    except ValueError:
        fields = None
    if not isinstance(fields, dict) or set(fields) not in (set(FIELDS), set(FIELDS_UNBOUND)):
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


def history(fields: dict[str, Any]) -> tuple[int, str] | None:
    """The (size, root in hex) of the log a request was signed on; None for a request from
    before requests named it. NoteError when `log` is not a size and a root."""
    if "log" not in fields:
        return None
    log = fields["log"]
    size = log.get("size") if isinstance(log, dict) else None
    root = log.get("root") if isinstance(log, dict) else None
    if (
        type(size) is not int
        or size < 0
        or not isinstance(root, str)
        or len(root) != 64
        or root.strip("0123456789abcdef")
    ):
        raise NoteError("its `log` is not a log size and a SHA-256 root")
    return size, root


def history_problem(
    note: str,
    index: int,
    root_at: Callable[[int], bytes | None],
    tight: bool = False,
) -> str | None:
    """Why the request `note`, carried out by log record `index`, was not made on this
    store's history (`root_at(n)`: the root of its first n records, None where the store
    cannot say); None when it was, or when it names no history (older requests). With
    `tight`, the request was signed in the very transaction that logs it, so its record
    must be the first after the size it names."""
    try:
        named = history(fields_of(note))
    except NoteError as error:
        return str(error)
    if named is None:
        return None
    size, root = named
    here = root_at(size)
    if here is not None and here.hex() != root:
        return (
            f"it was signed on another history: the first {size} records of this log are "
            "not the ones it names (a request made on a copy of this store, replayed here)"
        )
    if size > index:
        return (
            f"it names a log of {size} records, but what it asked for is record {index}: it "
            "was signed on another history (a copy of this store that had written more)"
        )
    if tight and size != index:
        return (
            f"it was signed when the log held {size} records, but what it asked for is "
            f"record {index}: signed in the transaction that logs it, nothing may lie between "
            "(a request made on a copy of this store, carried out here later)"
        )
    if here is None:
        return f"the store cannot rebuild the root of its first {size} records to compare"
    return None


def time_problem(
    note: str | None, done_at: object, what: str = "it", within: float | None = None
) -> str | None:
    """Why an action logged at `done_at` cannot be the one the request `note` asked for
    by time: dated before the request itself, or (`within`: a request signed in the write
    that logs it) more than `within` seconds after it. None when it is not, or when either
    time cannot be read (the request's shape and the action's row are checked elsewhere)."""
    if note is None:
        return None
    try:
        asked_at = fields_of(note)["at"]
        asked, done = _moment(asked_at), _moment(done_at)
    except NoteError:
        return None
    if asked is None or done is None:
        return None
    if done < asked:
        return f"{what} is dated {done_at}, before its own request ({asked_at})"
    if within is not None and (done - asked).total_seconds() > within:
        return (
            f"{what} is dated {done_at}, {(done - asked).total_seconds():,.0f} s after its "
            f"request ({asked_at}), which was signed in the write that logged it: re-dated"
        )
    return None


def _moment(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
