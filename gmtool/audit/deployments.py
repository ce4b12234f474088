"""Every deployment was asked for by a GM action logged with it.

A deploy or a rollback writes its deployment row and the GM action that asked for it in
one transaction, and the action's outcome names the row (`deployment`). So each row of
`deployments` is named by exactly one successful deploy or rollback, of the same profile,
by the same GM, with the same config; a row that none names was inserted by hand, even
with a log record that makes the evidence log consistent. Rollbacks logged before their
outcome named the row (stores from before 2026-12-01) vouch for as many rows of their
profile noted as rollbacks.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from gmtool.audit.signatures import outcome_of
from gmtool.findings import Finding
from gmtool.store import gm
from gmtool.store.configs import deployment_rows
from gmtool.store.db import Store

MAKERS = ("deploy", "rollback")


def verify_deployments(store: Store) -> Iterator[Finding]:
    made: dict[int, dict] = {}  # deployment id -> the GM action whose outcome names it
    unnamed: Counter[str] = Counter()  # by profile: older rollbacks that name no row
    for action in sorted(gm.actions_by_id(store).values(), key=lambda row: row["id"]):
        outcome = outcome_of(action) if action["action"] in MAKERS else {}
        if not outcome.get("ok"):
            continue
        deployment = outcome.get("deployment")
        if type(deployment) is not int:
            if action["action"] == "rollback":
                unnamed[action["target"]] += 1
            continue
        if deployment in made:
            yield Finding(
                "deployment",
                f"deployment {deployment} is named by GM actions "
                f"{made[deployment]['id']} and {action['id']}",
                gm_action=action["id"],
            )
            continue
        made[deployment] = action | {
            "config": outcome.get("config_id" if action["action"] == "deploy" else "active")
        }
    for row in deployment_rows(store):
        action = made.pop(row["id"], None)
        what = f"deployment {row['id']} ({row['profile_id']}, by {row['deployed_by']})"
        if action is None:
            if (row["note"] or "").startswith("rollback of") and unnamed[row["profile_id"]]:
                unnamed[row["profile_id"]] -= 1
                continue
            yield Finding("deployment", f"{what} was made by no GM action (inserted)")
        elif (action["target"], action["actor"], action["config"]) != (
            row["profile_id"],
            row["deployed_by"],
            row["config_id"],
        ):
            yield Finding(
                "deployment",
                f"{what} is not what GM action {action['id']} made: "
                f"{action['action']} of {action['target']} by {action['actor']}, "
                f"config {str(action['config'])[:12]}",
                gm_action=action["id"],
            )
    for deployment, action in sorted(made.items()):
        yield Finding(
            "deployment",
            f"GM action {action['id']} made deployment {deployment}, "
            "which is not in the store (deleted)",
            gm_action=action["id"],
        )
