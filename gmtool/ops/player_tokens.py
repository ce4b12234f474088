"""Player-token keys in the store, and tokens minted for testing (issue 25 item 3).

An operator registers the Ed25519 public key of a login service as a signed, logged GM
action (`token_key`, target the key's id, the key in its arguments): the host accepts a
token signed by any registered key. `players token NAME` mints one with the key beside
the store, `<db>.token.key` (mode 0600, a secret file the host keeps private), which it
makes and registers first when there is none: for tests and for operators without a
login service. The player is made in the store (0 coins) if new, so that an operator
can grant coins (`players adjust`) before they first connect.
"""

from __future__ import annotations

import os
from pathlib import Path

from gmtool.bounds import composed
from gmtool.errors import UsageError
from gmtool.evidence.request import Gm
from gmtool.gateway import tokens
from gmtool.ops.gm import authorize, signed_here, text
from gmtool.store import gm, ledger, log_append
from gmtool.store.db import Store, files_of


def key_path(db_path: Path) -> Path:
    """The key that mints test tokens for a store: `<db>.token.key`."""
    return db_path.with_name(db_path.name + ".token.key")


def registered(store: Store) -> dict[str, tokens.PublicKey]:
    """Every registered player-token key by its id (`tokens.key_id`)."""
    return tokens.keys_of(gm.token_keys(store))


def register(store: Store, actor: Gm, key_text: str, reason: str | None = None) -> dict:
    """Register `key_text` (`ed25519:` and 32 bytes in base64) as a player-token key, a
    signed GM action; {"kid", "key", "new"} (new False: it was registered already)."""
    try:
        public = tokens.parse_public(key_text)
    except ValueError as error:
        raise UsageError(f"KEY: {error}") from None
    line, kid = tokens.public_text(public), tokens.key_id(public)
    reason = text(reason, "the reason", required=False)
    if kid in registered(store):
        return {"kid": kid, "key": line, "new": False}
    args = {"key": line}
    request = authorize(store, actor, "token_key", kid, reason, args)
    with store.write(durable=True):
        request = signed_here(store, actor, request)
        gm.log_action(store, actor.name, "token_key", kid, reason, {"ok": True, **args}, request)
    return {"kid": kid, "key": line, "new": True}


def mint(store: Store, actor: Gm, player: str, ttl_s: int) -> dict:
    """A token for `player` on this store, signed with `<db>.token.key`; the key is made
    (mode 0600) and registered first where needed. {"token", "store", "kid", "expires",
    "made", "registered"}."""
    player = composed(player)  # as typed, decomposed or not: the player who looks so
    if ledger.is_bot(store, player):
        raise UsageError(
            f"{player} is a bot's account (a host enrolled it): a token would let a person "
            "play it and its coins; name a person's account"
        )
    path = key_path(files_of(store))  # (a PostgreSQL store: in its hosts' home)
    made = False
    if path.exists():
        key = _load(path)
    else:  # written before it is registered: a registered key always has its file
        key = tokens.new_key()
        _write(path, tokens.private_pem(key))
        made = True
    public = tokens.public_text(key.public_key())
    kid = tokens.key_id(key.public_key())
    fresh = kid not in registered(store)
    if fresh:
        register(store, actor, public, "players token: the key beside the store")
    now = store.clock.wall()
    try:
        token = tokens.mint(key, log_append.store_id(store), player, ttl_s, now)
    except ValueError as error:
        raise UsageError(str(error)) from None
    with store.write():  # the player exists from now on, with 0 coins (a GM grants them)
        ledger.ensure_player(store, player, "human")
    return {
        "token": token,
        "store": log_append.store_id(store),  # the audience a login service's tokens name
        "kid": kid,
        "expires": int(now) + ttl_s,
        "made": str(path) if made else None,
        "registered": fresh,
    }


def _load(path: Path) -> tokens.PrivateKey:
    try:
        return tokens.load_private_pem(path.read_bytes())
    except (OSError, ValueError) as error:
        raise UsageError(f"{path}: not a token key ({error})") from None


def _write(path: Path, pem: bytes) -> None:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as error:
        raise UsageError(f"cannot write the token key {path}: {error.strerror}") from None
    with os.fdopen(fd, "wb") as out:
        out.write(pem)
