"""Hand seeds anyone can check: each seed is the host's unique signature over the hand's slot.

A hand's seed is the RSA signature (RSASSA-PKCS1-v1_5 with SHA-256, RFC 8017, made and
checked by `cryptography`) of the host's seed key over a context line and the canonical
JSON of the store, the table and the hand's number. The seed bytes *are* the signature;
the deck follows from them as from any seed (engine/deck.py), and the commitment logged
at the hand's start is their SHA-256. So, once the hand ends and the seed is revealed:

- anyone with the seed key's public half checks that the seed is the signature over the
  hand's slot: no secret is needed (the old seeds, an HMAC under a secret key, could be
  checked only beside `<db>.key`);
- the seed is the only one the key can give that slot: for a given RSA public key and
  message there is exactly one PKCS#1 v1.5 signature (s = m^d mod n is a function of the
  message; verification requires s < n), so the host, key in hand, cannot try seeds for
  a slot and keep one it likes (grinding). An Ed25519 signature is deterministic when it
  is made as RFC 8032 says, but verification cannot tell how its nonce was chosen: a
  holder of the key can make as many valid signatures of one message as they like, so it
  would not fix the seed (docs/decisions.md). This is RFC 9381's RSA-FDH-VRF with the
  PKCS#1 v1.5 encoding in place of the full-domain hash, which `cryptography` does not
  offer, and with its "trusted uniqueness": it holds for a key made by a real RSA key
  generator (e = 65537, prime to p-1 and q-1), as `cryptography` makes them.

The key's public half is registered in the evidence log in a `seed_key` record signed
with the host's checkpoint key (Ed25519, evidence/note.py), from a hand id on; so
whoever writes the database without that key cannot register a key of their own.

Demo and test stores (`house run --seed TEXT`) register instead the HMAC key TEXT
stands for, published in the record: their decks repeat for a given text, and anyone can
work every one of them out (they always could: the text is the key).

Only the standard library, `cryptography` and gmtool's canonical JSON are used.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from collections.abc import Mapping
from functools import lru_cache

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from gmtool.canonical import canonical_json
from gmtool.evidence.note import Signer, Verifier

_PADDING, _SHA256 = padding.PKCS1v15(), hashes.SHA256()
RSA = "rsa-pkcs1v15-sha256"  # a seed is the seed key's signature over the slot
HMAC = "hmac-sha256"  # a demo key, published: a seed is HMAC(key, "table#number")
SCHEMES = (RSA, HMAC)
KEY_BITS = 2048  # 112-bit security (NIST SP 800-57 to 2030); the record says what was used
MIN_BITS = 2048
SEED_CONTEXT = "gmtool hand seed v1"
KEY_CONTEXT = "gmtool seed key v1"


class SeedKeyError(ValueError):
    """Text that is not a seed key."""


def seed_message(origin: str, table_id: str, number: int) -> bytes:
    """What the seed key signs for a hand: its store (the log's origin), table and number:
    a context line and the canonical JSON of {"number", "store", "table"}."""
    head, tail = _slot_text(origin, table_id)
    return head + str(number).encode() + tail


@lru_cache(maxsize=4096)
def _slot_text(origin: str, table_id: str) -> tuple[bytes, bytes]:
    """The message of a table's slots around its number (the audit checks a seed a hand:
    the JSON of the store and table is made once a table). "number" sorts first."""
    text = f"{SEED_CONTEXT}\n{canonical_json({'number': 0, 'store': origin, 'table': table_id})}\n"
    head = f'{SEED_CONTEXT}\n{{"number":'
    if not text.startswith(head + "0,"):
        raise ValueError("canonical JSON does not put the number first")  # never: sorted keys
    return head.encode(), text[len(head) + 1 :].encode()


class SeedSigner:
    """The host's RSA seed key: the seed of a slot is its signature over it."""

    def __init__(self, key: rsa.RSAPrivateKey) -> None:
        self._key = key
        self.public = public_text(key.public_key())

    @classmethod
    def generate(cls) -> SeedSigner:
        return cls(rsa.generate_private_key(public_exponent=65537, key_size=KEY_BITS))

    @classmethod
    def parse(cls, pem: bytes) -> SeedSigner:
        try:
            key = serialization.load_pem_private_key(pem, password=None)
        except (ValueError, TypeError, UnsupportedAlgorithm) as error:
            raise SeedKeyError(f"not a PEM private key ({error})") from None
        if not isinstance(key, rsa.RSAPrivateKey) or key.key_size < MIN_BITS:
            raise SeedKeyError(f"not an RSA key of at least {MIN_BITS} bits")
        return cls(key)

    def pem(self) -> bytes:
        return self._key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )

    def seed(self, origin: str, table_id: str, number: int) -> bytes:
        return self._key.sign(seed_message(origin, table_id, number), _PADDING, _SHA256)


def public_text(key: rsa.RSAPublicKey) -> str:
    """A public key as the log holds it: base64 of its DER SubjectPublicKeyInfo."""
    der = key.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return base64.b64encode(der).decode()


@lru_cache(maxsize=64)
def _public_key(text: str) -> rsa.RSAPublicKey | None:
    try:
        key = serialization.load_der_public_key(base64.b64decode(text, validate=True))
    except (binascii.Error, ValueError, TypeError, UnsupportedAlgorithm):
        return None
    if not isinstance(key, rsa.RSAPublicKey) or key.key_size < MIN_BITS:
        return None
    return key


def usable(scheme: object, key: object) -> bool:
    """Whether a registered (scheme, key) is one seeds can be checked against."""
    if scheme == RSA:
        return isinstance(key, str) and _public_key(key) is not None
    if scheme == HMAC:
        return isinstance(key, str) and _hex32(key) is not None
    return False


def seed_holds(scheme: str, key: str, origin: str, table_id: str, number: int, seed: bytes) -> bool:
    """Whether `seed` is the one seed the registered key gives this slot."""
    if scheme == RSA:
        public = _public_key(key)
        if public is None:
            return False
        try:
            public.verify(seed, seed_message(origin, table_id, number), _PADDING, _SHA256)
        except InvalidSignature:
            return False
        return True
    if scheme == HMAC:
        raw = _hex32(key)
        return raw is not None and hmac.compare_digest(seed, hmac_seed(raw, table_id, number))
    return False


def hmac_seed(key: bytes, table_id: str, number: int) -> bytes:
    """A demo store's seed, and every seed before seed keys: HMAC-SHA256(key, "table#number")
    (engine/deck.py's `hand_seed`, which the host and the audit use for old hands)."""
    return hmac.new(key, f"{table_id}#{number}".encode(), hashlib.sha256).digest()


def _hex32(text: str) -> bytes | None:
    try:
        raw = bytes.fromhex(text)
    except ValueError:
        return None
    return raw if len(raw) == 32 else None


def key_message(
    origin: str, first_hand: int, scheme: str, key: str, at: str, host: str | None = None
) -> bytes:
    """What the host's checkpoint key signs to register a seed key from `first_hand` on
    (for the hands of `host` alone, on a store several hosts share)."""
    grant = {"store": origin, "first_hand": first_hand, "scheme": scheme, "key": key, "at": at}
    if host is not None:
        grant["host"] = host
    return f"{KEY_CONTEXT}\n{canonical_json(grant)}\n".encode()


def sign_key(
    signer: Signer, first_hand: int, scheme: str, key: str, at: str, host: str | None = None
) -> str:
    """The base64 Ed25519 signature of the registration by the host's checkpoint key."""
    raw = signer.sign(key_message(signer.name, first_hand, scheme, key, at, host))
    return base64.b64encode(raw).decode()


def key_signed(verifier: Verifier, body: Mapping[str, object]) -> bool:
    """Whether a `seed_key` record's signature is the host's (anything malformed is not)."""
    fields = [body.get(name) for name in ("id", "scheme", "key", "at", "signature", "host")]
    first, scheme, key, at, signature, host = fields
    if (
        not isinstance(first, int)
        or isinstance(first, bool)
        or not all(isinstance(value, str) for value in (scheme, key, at, signature))
        or not (host is None or isinstance(host, str))
    ):
        return False
    try:
        raw = base64.b64decode(str(signature), validate=True)
    except (binascii.Error, ValueError):
        return False
    return len(raw) == 64 and verifier.verify(
        key_message(verifier.name, first, str(scheme), str(key), str(at), host), raw
    )
