"""Hand seeds: secret until the hand ends, derivable again after a crash.

Each hand's seed is HMAC-SHA256(host key, "table#number"). The host key lives in a file
beside the database (`<db>.key`, mode 0600), so after a `kill -9` the seed of an
unfinished hand can still be revealed when the hand is voided, and audit can check its
commitment. `--seed TEXT` replaces the key by sha256(TEXT) for reproducible demos and
tests; never use it for real play (anyone who knows the text knows every deck).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path


def key_path(db_path: Path) -> Path:
    return db_path.with_name(db_path.name + ".key")


def load_key(db_path: Path, demo_seed: str | None = None) -> bytes:
    """The host key: from `--seed` text, else the key file (created on first use)."""
    if demo_seed is not None:
        return hashlib.sha256(demo_seed.encode("utf-8")).digest()
    path = key_path(db_path)
    if path.exists():
        return bytes.fromhex(path.read_text(encoding="ascii").strip())
    key = secrets.token_bytes(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        handle.write(key.hex() + "\n")
    return key


def hand_seed(key: bytes, table_id: str, number: int) -> bytes:
    return hmac.new(key, f"{table_id}#{number}".encode("utf-8"), hashlib.sha256).digest()
