"""Every opening balance carries the host's signature (gmtool.evidence.opening).

The host that enrols a player signs the opening balance with its checkpoint key, and the
log keeps the signature in an `opening` record beside the ledger row. So a player and an
opening balance appended after the newest signed checkpoint, with log records that make
the log consistent, are still reported: only the host's key makes the signature.

An unsigned opening balance logged before the store's first signed one is from a store
from before the host signed them, and is taken as it is (`chain.verify_grants` still
holds it to be the player's first and only opening). Without the host's verifier key the
signatures cannot be checked; each signed record must still be there and match its row.
"""

from __future__ import annotations

from collections.abc import Iterator

from gmtool.audit.chain import json_or_none
from gmtool.audit.coins import amount
from gmtool.evidence import opening
from gmtool.evidence.note import Verifier
from gmtool.findings import Finding
from gmtool.store import scan
from gmtool.store.db import Store


def verify_openings(
    store: Store, verifier: Verifier | None, from_ledger: int = 1
) -> Iterator[Finding]:
    first_signed = scan.first_signed_opening(store)
    for row in scan.openings(store, from_ledger):
        what = (
            f"ledger row {row['id']}: an opening balance of {amount(row['delta'])} "
            f"for {row['player']}"
        )
        where = {"player": row["player"], "at": row["created_at"]}
        if row["signed"] is None:
            # (a row that is not logged at all is reported by the log's own check)
            if (
                first_signed is not None
                and row["logged_at"] is not None
                and row["logged_at"] > first_signed
            ):
                yield Finding(
                    "unjustified_coins", f"{what} that the host did not sign (minted)", **where
                )
            continue
        body = json_or_none(row["signed"])
        if not isinstance(body, dict) or (body.get("player"), body.get("delta")) != (
            row["player"],
            row["delta"],
        ):
            yield Finding(
                "unjustified_coins", f"{what} is not the grant the host signed (edited)", **where
            )
        elif verifier is not None and not opening.verify(
            verifier, row["id"], row["player"], row["delta"], body.get("signature")
        ):
            yield Finding(
                "unjustified_coins", f"{what} whose signature is not the host's (forged)", **where
            )
