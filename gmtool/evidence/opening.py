"""An opening balance the host signed: the authority for coins that no hand and no GM moved.

A player's first coins come from the host that enrolled them (house bots); anything else
that would create coins is a hand's settlement (its seed is the host's HMAC) or a GM's
signed adjustment. So the host signs each opening balance it grants with its checkpoint
key, and the evidence log keeps the signature in an `opening` record beside the ledger
row. Someone who can write the database but not read the host's key can append a new
player and a ledger row and make the log consistent, but cannot make that signature.

The signed message is a context line and the grant's canonical JSON: the store (the key's
name is the store's log origin), the ledger row, the player and the amount. The context
keeps it from ever reading as a checkpoint note, whose first line is the origin.
"""

from __future__ import annotations

import base64
import binascii

from gmtool.canonical import canonical_json
from gmtool.evidence.note import Signer, Verifier

CONTEXT = "gmtool opening balance v1"


def message(origin: str, ledger_id: int, player: str, amount: int) -> bytes:
    grant = {"store": origin, "ledger": ledger_id, "player": player, "amount": amount}
    return f"{CONTEXT}\n{canonical_json(grant)}\n".encode()


def sign(signer: Signer, ledger_id: int, player: str, amount: int) -> str:
    """The base64 signature of the grant by the host's key (whose name is the origin)."""
    signature = signer.sign(message(signer.name, ledger_id, player, amount))
    return base64.b64encode(signature).decode()


def verify(verifier: Verifier, ledger_id: int, player: str, amount: int, signature: object) -> bool:
    """Whether `signature` is the host's over this grant (anything malformed is not)."""
    if not isinstance(signature, str):
        return False
    try:
        raw = base64.b64decode(signature, validate=True)
    except (binascii.Error, ValueError):
        return False
    return len(raw) == 64 and verifier.verify(
        message(verifier.name, ledger_id, player, amount), raw
    )
