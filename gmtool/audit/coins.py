"""Coins: every balance is its ledger, every ledger row has its cause, every coin no hand
moved is justified (an opening balance, a GM adjustment the GM log records)."""

from __future__ import annotations

from collections.abc import Iterator

from gmtool.audit.chain import json_or_none
from gmtool.findings import Finding
from gmtool.store import scan
from gmtool.store.db import Store


def amount(value: object) -> str:
    """Coins as every text output writes them (`248,000`); what a damaged row holds instead
    of a whole number, as it is."""
    return f"{value:,}" if type(value) is int else str(value)


def verify_balances(store: Store, player: str | None = None) -> Iterator[Finding]:
    """Every player's coins equal the sum of their ledger rows."""
    for row in scan.balances(store, player):
        if type(row["coins"]) is int and row["coins"] < 0:
            yield Finding(
                "balance",
                f"{row['name']} holds {amount(row['coins'])} coins: a balance is never negative",
                player=row["name"],
            )
        if row["coins"] != row["ledger"]:
            yield Finding(
                "balance",
                f"{row['name']} holds {amount(row['coins'])} coins but the ledger sums to "
                f"{amount(row['ledger'])}",
                player=row["name"],
            )


def verify_ledger_links(store: Store, from_id: int = 1) -> Iterator[Finding]:
    """Every ledger row (from id `from_id` on) points at a hand or GM action that exists: a
    coin movement whose cause was deleted (say, the last GM action with its chain head
    rewound) is found."""
    for row in scan.ledger_without_gm_action(store, from_id):
        yield Finding(
            "gm_log_missing",
            f"ledger row {row['id']} ({row['player']}) was made by "
            f"GM action {row['gm_action_id']}, which is not in the GM log",
            player=row["player"],
            gm_action=row["gm_action_id"],
            at=row["created_at"],
        )
    for row in scan.ledger_without_hand(store, from_id):
        yield Finding(
            "ledger_orphan",
            f"ledger row {row['id']} ({row['player']}) belongs to "
            f"hand {row['hand_id']}, which does not exist",
            hand=row["hand_id"],
            player=row["player"],
            at=row["created_at"],
        )
    for row in scan.ledger_without_cause(store, from_id):
        yield Finding(
            "ledger_orphan",
            f"ledger row {row['id']} ({row['player']}) has no cause (no hand, no GM action)",
            player=row["player"],
            at=row["created_at"],
        )


def verify_grants(store: Store, from_ledger: int = 1, from_gm_action: int = 1) -> Iterator[Finding]:
    """Every coin that no hand moved is justified: an opening balance is the player's first
    ledger row and their only one; a GM adjustment is the amount, player and success its
    GM log row records; and every adjustment the log says was made has its row (ledger
    rows and GM actions from the ids given on)."""
    openings: set[str] = set()
    paid: dict[object, int] = {}  # GM action id -> the ledger row that carries it
    for row in scan.grants(store, from_ledger):
        where = {"player": row["player"], "at": row["created_at"]}
        if row["reason"] == "opening_balance":
            if (
                row["player"] in openings
                or row["id"] != row["first_id"]
                or row["gm_action_id"] is not None
            ):
                yield Finding(
                    "unjustified_coins",
                    f"ledger row {row['id']}: an opening "
                    f"balance of {amount(row['delta'])} that is not {row['player']}'s first "
                    "ledger row (minted)",
                    **where,
                )
            openings.add(row["player"])
        elif row["reason"] == "gm_adjust" and row["gm_action_id"] is not None:
            action_id = row["gm_action_id"]
            # An adjustment's one row is written with its GM action, in one transaction:
            # a second row for it, or a row after a checkpoint for an action before it,
            # pays the signed adjustment again.
            again = paid.get(action_id)
            if again is not None or (type(action_id) is int and action_id < from_gm_action):
                before = f"ledger row {again}" if again is not None else "a row before"
                yield Finding(
                    "unjustified_coins",
                    f"ledger row {row['id']}: {amount(row['delta'])} for {row['player']} "
                    f"pays GM action {action_id} again ({before} carries it: minted)",
                    gm_action=action_id,
                    **where,
                )
            paid.setdefault(action_id, row["id"])
            outcome = json_or_none(row["outcome"])
            if row["action"] is not None and (
                row["action"] != "adjust"
                or row["target"] != row["player"]
                or not isinstance(outcome, dict)
                or outcome.get("ok") is not True
                or outcome.get("delta") != row["delta"]
            ):
                yield Finding(
                    "unjustified_coins",
                    f"ledger row {row['id']}: {amount(row['delta'])} "
                    f"for {row['player']} is not the adjustment GM action "
                    f"{row['gm_action_id']} records",
                    gm_action=row["gm_action_id"],
                    **where,
                )
        elif row["gm_action_id"] is not None:
            yield Finding(
                "unjustified_coins",
                f"ledger row {row['id']}: reason {row['reason']!r} is not a GM adjustment",
                **where,
            )
    for row in scan.adjustments_without_row(store, from_gm_action, from_ledger):
        yield Finding(
            "unjustified_coins",
            f"GM action {row['id']} adjusted {row['target']}'s "
            "coins but no ledger row carries it (deleted)",
            gm_action=row["id"],
            player=row["target"],
        )
