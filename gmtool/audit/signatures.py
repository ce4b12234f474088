"""Every GM action was asked for by a GM whose key allowed it, as the log had it then.

The evidence log holds, in order, each GM user's role and registered key, each GM
action and each command's request. Walking them in that order rebuilds who was an
operator with which key at every moment, so each action is checked against the keys and
roles of its time, not today's:

- an action that did something (kick, close, open, adjust, deploy, rollback, users add,
  witness add or remove) carries the request of an operator, signed by their registered
  key, naming this store and asking for exactly what was done (the amount of an
  adjustment, the role and key given, the config deployed, the witness); a kick or close
  points at its command, whose request must hold;
- every command's request holds (the console never queues one that does not);
- a GM user's role or key changes only with a signed `users add` right after it, and
  the first key is registered once (bootstrap), by its own holder, while no GM had a key;
- no signed request is used twice;
- every request made since requests name the history they were made on (2026-12-02) was
  made on this store's: the log's first `size` records hash to the root it signed, it was
  signed before what it asked for was logged, and an adjustment, a GM user's change or a
  reopening (signed in the transaction that logs it) is the log's next record after it; a
  request naming no history, carried out after one that names it, is a replay from
  before (`gm_replay`);
- nothing it asked for is dated before the request, and what was signed in the write that
  logs it (an adjustment, a GM user's change, a reopening) is dated within a minute of its
  request (`gm_time`).

Before any GM had a key (stores from before GM keys, and a fresh store being set up)
actions were not signed: they are accepted as they were.
"""

from __future__ import annotations

from collections.abc import Iterator

import orjson

from gmtool.evidence import request as requests
from gmtool.evidence.note import NoteError
from gmtool.evidence.request import PRIVILEGED
from gmtool.findings import Finding
from gmtool.store import gm, log_append, log_history, log_reads

COMMANDS = {"kick", "close"}
# Signed in the write transaction that logs them (ops/gm.py `signed_here`): what they ask
# for is the log's next record after the size their request names.
TIGHT = {"adjust", "users_add", "open"}
# How long after its request such an action may be dated: the two are one write's, a
# moment apart on one clock (a minute leaves room for a machine that stalls between them).
TIGHT_S = 60.0


class _History:
    """Each request's history held to the log, in log order: the first request that names
    its history makes every later one that names none a replay."""

    def __init__(self, store) -> None:
        self.store = store
        self.bound_from: int | None = None  # the record of the first request naming its log

    def problem(self, note: str | None, index: int, done_at: object, tight: bool) -> tuple | None:
        """(finding kind, why) when `note`, carried out by record `index` at `done_at`, was
        not made on this history or is dated after it; None when it holds."""
        if note is None:
            return None
        why = requests.history_problem(
            note, index, lambda n: log_history.root_at(self.store, n), tight
        )
        if why is None:
            try:
                named = "log" in requests.fields_of(note)
            except NoteError:
                named = True  # the signature check reports it
            if named:
                self.bound_from = index if self.bound_from is None else self.bound_from
            elif self.bound_from is not None:
                why = (
                    "its request names no history (the form of requests signed before "
                    "2026-12-02), but requests of this store have named theirs since record "
                    f"{self.bound_from}: an old request replayed"
                )
        if why is not None:
            return "gm_replay", why
        late = requests.time_problem(note, done_at, within=TIGHT_S if tight else None)
        return ("gm_time", late) if late else None


def verify_signatures(store) -> Iterator[Finding]:
    store_id = log_append.store_id(store)
    actions = gm.actions_by_id(store)
    users: dict[str, tuple[str, str | None]] = {}  # name -> (role, key) as logged so far
    good_requests: set[int] = set()  # commands whose request held
    seen: set[str] = set()  # request notes used
    change = None  # a GM user change waiting for the users_add that made it
    history = _History(store)
    asked_at: dict[int, str] = {}  # command -> its request (for its fate's time)
    for idx, kind, body in log_reads.gm_records(store):
        try:
            record = orjson.loads(body)
        except ValueError:
            continue  # the log check reports it
        keyed = any(key for _, key in users.values())
        if change is not None and not (
            kind == "gm_action" and _users_add_of(actions.get(record.get("id")), change[0])
        ):
            yield _unsigned_change(change)
            change = None
        if kind == "gm_user":
            if keyed or record.get("key"):  # before GM keys, a change carries no signature
                change = (
                    record.get("name"),
                    record.get("role"),
                    record.get("key"),
                    dict(users),
                    keyed,
                    idx,
                )
            users[record.get("name")] = (record.get("role"), record.get("key"))
        elif kind == "gm_request":
            if keyed and (why := _command_problem(record, users, store_id, seen)):
                yield Finding(
                    "gm_signature",
                    f"GM command {record.get('id')} "
                    f"({record.get('command')} {record.get('table')}): {why} "
                    "(forged)",
                    gm_action=None,
                )
            elif keyed:
                good_requests.add(record.get("id"))
                asked_at[record.get("id")] = record.get("request")
                late = history.problem(record.get("request"), idx, record.get("at"), False)
                if late:
                    yield Finding(
                        late[0],
                        f"GM command {record.get('id')} "
                        f"({record.get('command')} {record.get('table')}): {late[1]}",
                    )
        elif kind == "gm_action":
            row = actions.get(record.get("id"))
            if row is None:
                continue  # the log check reports the missing row
            if change is not None:
                problem = _user_change_problem(row, change, store_id, seen)
                if problem is None:  # signed (or from before GM keys: no request)
                    late = history.problem(row["request"], change[5], row["at"], True)
                    if late:
                        problem = Finding(
                            late[0],
                            f"GM action {row['id']} ({row['actor']} users_add {change[0]}): "
                            f"{late[1]}",
                            gm_action=row["id"],
                        )
                change = None
                if problem:
                    yield problem
                continue
            if not keyed:
                continue
            where = f"GM action {row['id']} ({row['actor']} {row['action']} {row['target']})"
            if why := _action_problem(row, users, store_id, good_requests, seen):
                yield Finding("gm_signature", f"{where}: {why}", gm_action=row["id"])
            elif late := _action_history(row, idx, history, asked_at):
                yield Finding(late[0], f"{where}: {late[1]}", gm_action=row["id"])
    if change is not None:
        yield _unsigned_change(change)


def outcome_of(row: dict) -> dict:
    """A GM action's outcome as a dict ({} when it is not one: edited)."""
    try:
        outcome = orjson.loads(row["outcome"]) if row["outcome"] else {}
    except (ValueError, TypeError):
        return {}
    return outcome if isinstance(outcome, dict) else {}


def _action_history(row: dict, idx: int, history: _History, asked_at: dict) -> tuple | None:
    """A successful privileged action's request held to the history and the time it was
    carried out at (a kick or close: its command's request, to the time of its fate)."""
    outcome = outcome_of(row)
    if row["action"] not in PRIVILEGED or not outcome.get("ok"):
        return None
    if row["action"] in COMMANDS:
        late = requests.time_problem(asked_at.get(outcome.get("command")), row["at"])
        return ("gm_time", late) if late else None
    return history.problem(row["request"], idx, row["at"], row["action"] in TIGHT)


def _users_add_of(row: dict | None, name: str) -> bool:
    return row is not None and row["action"] == "users_add" and row["target"] == name


def _unsigned_change(change: tuple) -> Finding:
    name, role, key, *_ = change
    return Finding(
        "gm_signature",
        f"GM user {name} became {role}"
        + (f" with key {key}" if key else "")
        + " without a signed `users add` (inserted)",
    )


def _once(note: str | None, seen: set[str]) -> str | None:
    if note is None:
        return None
    if note in seen:
        return "its signed request was already used (replayed)"
    seen.add(note)
    return None


def _action_problem(
    row: dict, users: dict, store_id: str, good_requests: set[int], seen: set[str]
) -> str | None:
    """Why a GM action that did something was not an operator's signed request."""
    outcome = outcome_of(row)
    if row["action"] not in PRIVILEGED or not outcome.get("ok"):
        return None  # refusals and failures did nothing; reading needs no signature
    if row["action"] in COMMANDS:
        command = outcome.get("command")
        return (
            None
            if command in good_requests
            else f"carried out command {command}, which no valid signed request asked for"
        )
    role, key = users.get(row["actor"], (None, None))
    args = None
    if row["action"] == "adjust":
        args = {"delta": outcome.get("delta")}
    elif row["action"] == "deploy":
        args = {"config": outcome.get("config_id"), "rooms": outcome.get("rooms")}
    elif row["action"] in ("witness_add", "witness_remove", "witness_quorum"):
        args = {"type": outcome.get("type"), "location": outcome.get("location")}
        if "key" in outcome:  # a served witness's own key is signed with its URL
            args["key"] = outcome["key"]
    elif row["action"] == "token_key":
        args = {"key": outcome.get("key")}
    return _once(row["request"], seen) or requests.problem(
        row["request"],
        row["actor"],
        role,
        key,
        store_id,
        row["action"],
        row["target"],
        row["reason"],
        args,
    )


def _command_problem(record: dict, users: dict, store_id: str, seen: set[str]) -> str | None:
    role, key = users.get(record.get("by"), (None, None))
    target = (
        f"{record.get('table')}/{record.get('player')}"
        if record.get("player")
        else record.get("table")
    )
    return _once(record.get("request"), seen) or requests.problem(
        record.get("request"),
        record.get("by"),
        role,
        key,
        store_id,
        record.get("command"),
        target,
        record.get("reason"),
        {},
    )


def _user_change_problem(row: dict, change: tuple, store_id: str, seen: set[str]) -> Finding | None:
    """The users_add right after a GM user's change must be a signed request for exactly
    that change: by an operator of the time before it, or the one bootstrap."""
    name, role, key, before, keyed, _ = change
    outcome = outcome_of(row)
    where = f"GM action {row['id']} ({row['actor']} users_add {name})"
    if (
        not outcome.get("ok")
        or outcome.get("role") != role
        or (key is not None and outcome.get("key") not in (None, key))
    ):
        return Finding(
            "gm_signature",
            f"{where}: GM user {name} became {role} but the action "
            "does not say so (edited or inserted)",
            gm_action=row["id"],
        )
    if not keyed:
        if key is None:
            return None  # before GM keys
        if not outcome.get("bootstrap") or row["actor"] != name:
            return Finding(
                "gm_signature",
                f"{where}: the first key was not registered by its own holder (bootstrap)",
                gm_action=row["id"],
            )
        before = {name: ("operator", key)}  # the bootstrap request is signed by that key
    elif outcome.get("bootstrap"):
        return Finding(
            "gm_signature",
            f"{where}: a second bootstrap, while GMs had keys (a self-made operator)",
            gm_action=row["id"],
        )
    who_role, who_key = before.get(row["actor"], (None, None))
    args = {"role": role, "key": outcome.get("key")}
    if outcome.get("bootstrap"):
        args["bootstrap"] = True
    why = _once(row["request"], seen) or requests.problem(
        row["request"], row["actor"], who_role, who_key, store_id, "users_add", name, None, args
    )
    return Finding("gm_signature", f"{where}: {why}", gm_action=row["id"]) if why else None
