"""Every GM command has exactly one fate, logged, and its row says what the log says.

A command's request is logged when it is queued; whoever decides its fate (the host, the
console withdrawing it, the next host after a crash) logs it as a GM action naming the
command, and copies it into the command's row in the same transaction: the status (the
fate's name), the outcome, the time and the action's id. The row is live state the host
reads to find work, so it is held to the log here:

- at most one fate is logged; a command with a fate is never pending or taken again
  (revived by hand, it would be carried out twice);
- a command without a logged fate is pending or taken, with no outcome, time or action;
- a decided command's status, outcome, time and action are those of its logged fate.

Fates logged before 2026-12-01 do not name their status, and their row's time was read
apart from the action's: their status is held to the outcome (done exactly when it was
ok), and their time is not compared.
"""

from __future__ import annotations

from collections.abc import Iterator

from gmtool.audit.chain import json_or_none
from gmtool.audit.signatures import COMMANDS, outcome_of
from gmtool.findings import Finding
from gmtool.store import gm


def verify_command_fates(store) -> Iterator[Finding]:
    actions = gm.actions_by_id(store)
    fates: dict[int, list[int]] = {}
    for row in sorted(actions.values(), key=lambda row: row["id"]):
        command = outcome_of(row).get("command") if row["action"] in COMMANDS else None
        if type(command) is int:
            fates.setdefault(command, []).append(row["id"])
    for row in gm.command_states(store):
        logged = fates.get(row["id"], [])
        where = f"GM command {row['id']}"
        if len(logged) > 1:
            yield Finding(
                "gm_command",
                f"{where} has {len(logged)} logged fates (GM actions "
                f"{', '.join(map(str, logged))})",
                gm_action=logged[-1],
            )
        elif logged:
            yield from _decided(row, actions[logged[0]], where)
        elif row["status"] not in gm.IN_FLIGHT:
            fate = row["gm_action_id"]
            yield Finding(
                "gm_command",
                f"{where} is {row['status']!r}, but no GM action logs "
                "a fate of it" + (f" (GM action {fate} does not)" if fate else ""),
                gm_action=fate if type(fate) is int else None,
            )
        elif (row["acked_at"], row["outcome"], row["gm_action_id"]) != (None, None, None):
            yield Finding(
                "gm_command",
                f"{where} is {row['status']}, yet has an outcome, a "
                "time or a GM action that no logged fate gave it (edited)",
            )


def _decided(row: dict, action: dict, where: str) -> Iterator[Finding]:
    """A command whose fate `action` logged: its row must say the same."""
    status, logged = row["status"], outcome_of(action)
    fate = logged.pop("fate", None)
    logged.pop("command", None)
    if status in gm.IN_FLIGHT:
        yield Finding(
            "gm_command",
            f"{where} is {status} again after its fate was logged "
            f"(GM action {action['id']}): revived by hand",
            gm_action=action["id"],
        )
        return
    expected = (
        fate
        if fate is not None
        else ("done" if logged.get("ok") else status if status in gm.FATES[1:] else "failed")
    )
    differs = [
        what
        for what, same in (
            (f"status {status!r}, not {expected!r}", status == expected),
            (f"GM action {row['gm_action_id']!r}", row["gm_action_id"] == action["id"]),
            ("an outcome that is not the logged one", json_or_none(row["outcome"]) == logged),
            (
                f"time {row['acked_at']!r}, not {action['at']!r}",
                fate is None or row["acked_at"] == action["at"],
            ),
        )
        if not same
    ]
    if differs:
        yield Finding(
            "gm_command",
            f"{where}'s row says {', '.join(differs)}, against its "
            f"logged fate (GM action {action['id']}): edited",
            gm_action=action["id"],
        )
