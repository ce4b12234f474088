"""Hand seeds: secret until the hand ends, derivable again after a crash.

Each hand's seed is the host's RSA seed key's signature over the store, the table and
the hand's number (gmtool/evidence/hand_seeds.py): unique, so the host cannot choose it,
and checkable by anyone with the key's public half, which the host registers in the
evidence log (house/seed_source.py). The key lives beside the database (`<db>.seed.key`,
PKCS#8 PEM, mode 0600), so after a `kill -9` the seed of an unfinished hand can still be
revealed when the hand is voided.

Before seed keys (gmtool before 2026-12-02) a seed was HMAC-SHA256(host key,
"table#number") with the secret key `<db>.key`; the audit still checks those hands with it
where it is present. `--seed TEXT` makes sha256(TEXT) such a key, for reproducible demos
and tests, and the host publishes it in the log (every deck of such a store is public):
never use it for real play.

The key file is the one key of a store, so the host and the audit agree by construction:
`--seed` on a store without a key file writes its key there (as the demo does), and
`--seed` whose key is not the one in the file is refused before the host changes
anything (its hands would fail the audit's seed check for good).
"""

from __future__ import annotations

import hashlib
import os
import secrets
from pathlib import Path

from gmtool.engine import deck
from gmtool.evidence.hand_seeds import SeedKeyError, SeedSigner
from gmtool.store.db import StoreError


def key_path(db_path: Path) -> Path:
    return db_path.with_name(db_path.name + ".key")


def seed_key_path(db_path: Path) -> Path:
    return db_path.with_name(db_path.name + ".seed.key")


def host_seed_key_path(db_path: Path, public: str) -> Path:
    """The seed key file of one host of a shared store, named by its public key's digest
    (`<db>.seed-<16 hex>.key`): each host start makes one, in the hosts' home."""
    digest = hashlib.sha256(public.encode("utf-8")).hexdigest()[:16]
    return db_path.with_name(f"{db_path.name}.seed-{digest}.key")


def new_host_seed_signer(db_path: Path) -> SeedSigner:
    """A new seed key for one host of a shared store, written (0600) where a host that takes
    its tables over finds it, to reveal the seeds of the hands it voids."""
    signer = SeedSigner.generate()
    _create_file(host_seed_key_path(db_path, signer.public), signer.pem())
    return signer


def load_seed_signer(db_path: Path) -> SeedSigner:
    """The store's RSA seed key, made on first use (written whole, then linked into place:
    a crash never leaves half a key; a second host starting at once keeps the first's)."""
    path = seed_key_path(db_path)
    if not path.exists():
        _create_file(path, SeedSigner.generate().pem())
    return read_seed_signer(path)


def existing_seed_signer(db_path: Path) -> SeedSigner | None:
    """The seed key if its file exists (crash recovery reveals unfinished hands' seeds)."""
    path = seed_key_path(db_path)
    return read_seed_signer(path) if path.exists() else None


def read_seed_signer(path: Path) -> SeedSigner:
    try:
        return SeedSigner.parse(path.read_bytes())
    except OSError as error:
        raise StoreError(f"{path}: cannot read the seed key ({error.strerror or error})") from None
    except SeedKeyError as error:
        raise StoreError(
            f"{path} is not a gmtool seed key ({error}); without it the seeds of unfinished "
            "hands cannot be revealed. Restore it from a backup, or move it away to start "
            "with a new key (registered in the evidence log from the next hand on)."
        ) from None


def seed_key(demo_seed: str) -> bytes:
    """The host key `--seed TEXT` stands for: sha256(TEXT)."""
    return hashlib.sha256(demo_seed.encode("utf-8")).digest()


def check_key(db_path: Path, demo_seed: str | None = None) -> None:
    """Refuse a start whose host key would not be the store's, before anything changes:
    a damaged key file or seed key, or a `--seed` that stands for another key than the
    file's."""
    path = key_path(db_path)
    if path.exists():
        _agrees(path, _read_key(path), demo_seed)
    existing_seed_signer(db_path)  # a damaged seed key is refused too


def load_key(db_path: Path, demo_seed: str | None = None) -> bytes:
    """The store's host key, from its key file; created on first use: the key `--seed`
    stands for, else a random one. A `--seed` of another key than the file's is refused.

    The file is written to a temporary name, flushed, then linked into place, so a crash
    never leaves an empty or half-written key; a second host starting at the same moment
    keeps the key of whichever linked first.
    """
    path = key_path(db_path)
    if not path.exists():
        _create_key(path, seed_key(demo_seed) if demo_seed is not None else None)
    return _agrees(path, _read_key(path), demo_seed)


def _read_key(path: Path) -> bytes:
    try:
        key = bytes.fromhex(path.read_text(encoding="ascii").strip())
    except (ValueError, UnicodeDecodeError):
        key = b""
    except OSError as error:
        raise StoreError(f"{path}: cannot read the host key ({error.strerror or error})") from None
    if len(key) != 32:
        raise StoreError(
            f"{path} is not a gmtool host key (64 hex digits); without the key "
            "the seeds of unfinished hands cannot be revealed. Restore it from a "
            "backup, or move it away to start with a new key."
        )
    return key


def _agrees(path: Path, key: bytes, demo_seed: str | None) -> bytes:
    if demo_seed is not None and key != seed_key(demo_seed):
        raise StoreError(
            f"--seed {demo_seed!r} stands for another host key than this store's ({path}): "
            "the hands it would deal would fail the audit's seed check for good. --seed is for "
            "demo and test stores; run without it (the host deals from the store's own key)"
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
    _create_key(key_path(db_path), seed_key(demo_seed))


def _create_key(path: Path, key: bytes | None = None) -> None:
    """Write `key` (a new random one if None) to `path`, unless a key is there already."""
    _create_file(path, ((key or secrets.token_bytes(32)).hex() + "\n").encode("ascii"))


def _create_file(path: Path, content: bytes) -> None:
    """Write a secret file (0600) whole, unless one is there already."""
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(content)
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(temporary, path)
        except FileExistsError:
            pass  # another host created it first: use theirs
    finally:
        temporary.unlink(missing_ok=True)


hand_seed = deck.hand_seed  # the derivation is the engine's: audit checks it too
