"""Hand seeds: secret until the hand ends, derivable again after a crash.

Each hand's seed is HMAC-SHA256(host key, "table#number"). The host key lives in a file
beside the database (`<db>.key`, mode 0600), so after a `kill -9` the seed of an
unfinished hand can still be revealed when the hand is voided, and audit can check its
commitment. `--seed TEXT` replaces the key by sha256(TEXT) for reproducible demos and
tests; never use it for real play (anyone who knows the text knows every deck).
"""

from __future__ import annotations

import hashlib
import os
import secrets
from pathlib import Path

from gmtool.engine import deck
from gmtool.store.db import StoreError


def key_path(db_path: Path) -> Path:
    return db_path.with_name(db_path.name + ".key")


def load_key(db_path: Path, demo_seed: str | None = None) -> bytes:
    """The host key: from `--seed` text, else the key file (created on first use).

    The file is written to a temporary name, flushed, then linked into place, so a crash
    never leaves an empty or half-written key; a second host starting at the same moment
    keeps the key of whichever linked first.
    """
    if demo_seed is not None:
        return hashlib.sha256(demo_seed.encode("utf-8")).digest()
    path = key_path(db_path)
    if not path.exists():
        _create_key(path)
    try:
        key = bytes.fromhex(path.read_text(encoding="ascii").strip())
    except (ValueError, UnicodeDecodeError):
        key = b""
    if len(key) != 32:
        raise StoreError(
            f"{path} is not a gmtool host key (64 hex digits); without the key "
            "the seeds of unfinished hands cannot be revealed. Restore it from a "
            "backup, or move it away to start with a new key."
        )
    return key


def existing_key(db_path: Path) -> bytes | None:
    """The host key if its file exists and holds one (audit checks seeds with it)."""
    try:
        key = bytes.fromhex(key_path(db_path).read_text(encoding="ascii").strip())
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    return key if len(key) == 32 else None


def keep_demo_key(db_path: Path, demo_seed: str) -> None:
    """Write the key `--seed` stands for beside a new demo store, so that a host run on it
    later without `--seed` deals from the same key, and audit checks every seed with it."""
    _create_key(key_path(db_path), load_key(db_path, demo_seed))


def _create_key(path: Path, key: bytes | None = None) -> None:
    """Write `key` (a new random one if None) to `path`, unless a key is there already."""
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="ascii") as handle:
            handle.write((key or secrets.token_bytes(32)).hex() + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(temporary, path)
        except FileExistsError:
            pass  # another host created it first: use theirs
    finally:
        temporary.unlink(missing_ok=True)


hand_seed = deck.hand_seed  # the derivation is the engine's: audit checks it too
