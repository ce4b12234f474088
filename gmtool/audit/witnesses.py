"""Every change to the store's witnesses was made by a GM action logged with it.

Where the signed checkpoints are kept decides what an audit checks the store against, so
the store records its witnesses as evidence (store/witnesses.py) and only an operator's
signed GM action changes them: `witness_add` or `witness_remove`, written in one
transaction with the change, the action's outcome naming the change's row and the row
naming the action. The one exception is the store's first witness, which its first host
start records (before it, the store had none to ask). So:

- each change is named by exactly one successful GM action of its kind, for the same
  type and location, whose id the row holds (the action's signature is checked with
  every GM signature, audit/signatures.py); only the first change, an add, may have none;
- a change adds a witness the store did not have, or removes one it had;
- every change a GM action made is in the store;
- a served witness's key is the one the action (and so its signed request) names; a
  quorum is a number no larger than the served witnesses the store had then.

Rows edited after they were logged, inserted with a log record, or deleted are found by
the evidence log's check (audit/log_check.py).
"""

from __future__ import annotations

from collections.abc import Iterator

from gmtool.audit.signatures import outcome_of
from gmtool.evidence.witness import QUORUM, SERVED
from gmtool.findings import Finding
from gmtool.store import gm, witnesses
from gmtool.store.db import Store

MAKERS = ("witness_add", "witness_remove", "witness_quorum")


def verify_witnesses(store: Store) -> Iterator[Finding]:
    made: dict[int, dict] = {}  # change id -> the GM action whose outcome names it
    for action in sorted(gm.actions_by_id(store).values(), key=lambda row: row["id"]):
        outcome = outcome_of(action) if action["action"] in MAKERS else {}
        if not outcome.get("ok"):
            continue
        change = outcome.get("witness")
        if type(change) is not int or change in made:
            yield Finding(
                "witness",
                f"GM action {action['id']} ({action['action']}) names witness change "
                f"{change!r}, " + ("named before" if change in made else "not a change"),
                gm_action=action["id"],
            )
            continue
        made[change] = action
    current: set[tuple[str, str]] = set()
    for index, row in enumerate(witnesses.changes(store)):
        yield from _check_change(row, made.pop(row["id"], None), first=index == 0)
        place = (row["type"], row["location"])
        if row["change"] == "quorum":
            served = sum(1 for kind, _ in current if kind == SERVED)
            if row["type"] != QUORUM or not str(row["location"]).isdigit():
                yield Finding("witness", f"{_what(row)}: not a quorum")
            elif int(row["location"]) > served:
                yield Finding(
                    "witness",
                    f"{_what(row)}: more than the {served} served witness(es) the store had",
                )
            continue
        if (row["change"] == "add") == (place in current):
            yield Finding(
                "witness",
                f"{_what(row)}: the store "
                + ("already had" if row["change"] == "add" else "had no")
                + " such witness",
            )
        if row["change"] == "add":
            current.add(place)
        else:
            current.discard(place)
    for change, action in sorted(made.items()):
        yield Finding(
            "witness",
            f"GM action {action['id']} made witness change {change}, which is not in the "
            "store (deleted)",
            gm_action=action["id"],
        )


def _what(row: dict) -> str:
    return f"witness change {row['id']} ({row['change']} {row['type']} {row['location']})"


def _check_change(row: dict, action: dict | None, first: bool) -> Iterator[Finding]:
    """One change against the GM action that names it (None: no action names it)."""
    if action is None:
        if row["gm_action_id"] is None and first and row["change"] == "add":
            return  # the store's first witness, recorded by its first host start
        yield Finding("witness", f"{_what(row)} was made by no GM action (inserted)")
        return
    outcome = outcome_of(action)
    if (
        action["id"] != row["gm_action_id"]
        or action["action"] != f"witness_{row['change']}"
        or (outcome.get("type"), outcome.get("location")) != (row["type"], row["location"])
        or outcome.get("key") != row["key"]
    ):
        yield Finding(
            "witness",
            f"{_what(row)} is not what GM action {action['id']} made: {action['action']} "
            f"of {outcome.get('type')} {outcome.get('location')}",
            gm_action=action["id"],
        )
