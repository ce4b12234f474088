"""Player tokens (issue 25 item 3): JWTs (RFC 7519) an operator's login service signs with
an Ed25519 key whose public half is registered in the store, checked with PyJWT.

A token names its player (`sub`), the store it is for (`aud`: the store id, so a token of
one store opens nothing on another), when it was issued (`iat`) and when it expires (`exp`),
and in its header the key that signed it (`kid`, see `key_id`). Only EdDSA is accepted,
fixed here and never read from the token (RFC 8725 2.1): no `none`, and no HS256, whose
secret the store would have to hold for anyone who reads the store to mint tokens with.

Time is the caller's (the host's injected clock), not PyJWT's: `verify` checks `exp`,
`iat` and `nbf` itself against `now`, allowing `LEEWAY_S` of clock skew.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from gmtool.bounds import composed, unsafe_characters

ALGORITHM = "EdDSA"
LEEWAY_S = 30  # clock skew allowed between the login service and the host
MAX_TTL_S = 30 * 86_400  # the longest a token may live: a leaked one must not be for ever
MAX_SUBJECT = 64  # characters of a player's name in a token


PrivateKey = Ed25519PrivateKey
PublicKey = Ed25519PublicKey


def new_key() -> Ed25519PrivateKey:
    """A new key to sign tokens with (its public half is registered in the store)."""
    return Ed25519PrivateKey.generate()


def private_pem(key: Ed25519PrivateKey) -> bytes:
    """The key as an unencrypted PKCS#8 PEM file's bytes (kept in a file of mode 0600)."""
    from cryptography.hazmat.primitives.serialization import (
        Encoding,
        NoEncryption,
        PrivateFormat,
    )

    return key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption())


def load_private_pem(data: bytes) -> Ed25519PrivateKey:
    """The key `private_pem` wrote; ValueError when it is not an Ed25519 key."""
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    key = load_pem_private_key(data, password=None)
    if not isinstance(key, Ed25519PrivateKey):
        raise ValueError("not an Ed25519 key")
    return key


def keys_of(lines: list[str]) -> dict[str, Ed25519PublicKey]:
    """The registered keys' lines (`public_text`) by key id; a line that is no key is
    skipped (the audit reports an edited registration)."""
    keys = {}
    for line in lines:
        try:
            public = parse_public(line)
        except ValueError:
            continue
        keys[key_id(public)] = public
    return keys


class TokenError(Exception):
    """A token that opens nothing: `code` says why, in one word, for the close reason and
    the log; the message says it in words."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class Claims:
    """What a checked token says: who, for which store, and from when until when."""

    subject: str
    store: str
    issued: int
    expires: int
    key: str  # the kid of the key that signed it
    token_id: str | None = None  # `jti`, when the issuer gives one


def key_id(public: Ed25519PublicKey) -> str:
    """A public key's id: the first 16 hex digits of SHA-256 of its raw 32 bytes."""
    return hashlib.sha256(public_bytes(public)).hexdigest()[:16]


def public_bytes(public: Ed25519PublicKey) -> bytes:
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    return public.public_bytes(Encoding.Raw, PublicFormat.Raw)


def public_text(public: Ed25519PublicKey) -> str:
    """A public key as one line to register: `ed25519:` and its raw bytes in base64."""
    return "ed25519:" + base64.b64encode(public_bytes(public)).decode("ascii")


def parse_public(text: str) -> Ed25519PublicKey:
    """The key `public_text` wrote (ValueError: not one)."""
    kind, _, data = text.strip().partition(":")
    if kind != "ed25519":
        raise ValueError("a token key reads `ed25519:` and 32 bytes in base64")
    try:
        raw = base64.b64decode(data, validate=True)
    except ValueError:
        raise ValueError("a token key reads `ed25519:` and 32 bytes in base64") from None
    if len(raw) != 32:
        raise ValueError(f"an Ed25519 public key is 32 bytes, not {len(raw)}")
    return Ed25519PublicKey.from_public_bytes(raw)


def mint(
    key: Ed25519PrivateKey,
    store: str,
    subject: str,
    ttl_s: int,
    now: float,
    token_id: str | None = None,
) -> str:
    """A token for `subject` on `store`, valid `ttl_s` seconds from `now`."""
    import jwt

    problem = _subject_problem(subject)
    if problem:
        raise ValueError(problem)
    if not 0 < ttl_s <= MAX_TTL_S:
        raise ValueError(f"a token lives from 1 s to {MAX_TTL_S // 86_400} days")
    issued = int(now)
    claims: dict[str, Any] = {"sub": subject, "aud": store, "iat": issued, "exp": issued + ttl_s}
    if token_id is not None:
        claims["jti"] = token_id
    return jwt.encode(claims, key, algorithm=ALGORITHM, headers={"kid": key_id(key.public_key())})


def verify(token: str, keys: Mapping[str, Ed25519PublicKey], store: str, now: float) -> Claims:
    """The claims of `token` if a registered key signed it for `store` and it is valid at
    `now`; else TokenError."""
    import jwt

    try:
        header = jwt.get_unverified_header(token)
    except jwt.PyJWTError:
        raise TokenError("malformed", "not a token (a JWT: header.claims.signature)") from None
    kid = header.get("kid")
    if header.get("alg") != ALGORITHM:
        raise TokenError(
            "algorithm", f"a token is signed with {ALGORITHM}, not {header.get('alg')!r:.40}"
        )
    if not isinstance(kid, str) or kid not in keys:
        raise TokenError("unknown_key", "the token's key is not registered in this store")
    try:
        claims = jwt.decode(
            token,
            keys[kid],
            algorithms=[ALGORITHM],
            audience=store,
            options={
                "require": ["sub", "aud", "iat", "exp"],
                "verify_exp": False,  # against the host's clock, below
                "verify_iat": False,
                "verify_nbf": False,
            },
        )
    except jwt.InvalidAudienceError:
        raise TokenError("audience", "the token is for another store") from None
    except jwt.MissingRequiredClaimError as error:
        raise TokenError("claims", f"the token has no {error.claim!r} claim") from None
    except jwt.InvalidSignatureError:
        raise TokenError("signature", "the token's signature does not hold") from None
    except jwt.PyJWTError as error:
        raise TokenError("malformed", f"not a valid token ({error})") from None
    return _checked(claims, store, kid, now)


def _checked(claims: dict[str, Any], store: str, kid: str, now: float) -> Claims:
    times = {name: claims.get(name) for name in ("iat", "exp", "nbf")}
    for name, value in times.items():
        if value is not None and type(value) is not int:
            raise TokenError("claims", f"the token's {name!r} is not a whole number of seconds")
    issued, expires = times["iat"], times["exp"]
    assert isinstance(issued, int) and isinstance(expires, int)  # required, checked above
    if expires - issued > MAX_TTL_S:
        raise TokenError("lifetime", "the token lives longer than a store allows (30 days)")
    if now > expires + LEEWAY_S:
        raise TokenError("expired", "the token has expired: ask the login service for a new one")
    not_before = times["nbf"] if times["nbf"] is not None else issued
    if now + LEEWAY_S < not_before:
        raise TokenError("early", "the token is not valid yet (check the clocks)")
    subject = claims["sub"]
    problem = _subject_problem(subject)
    if problem:
        raise TokenError("subject", problem)
    token_id = claims.get("jti")
    return Claims(
        subject, store, issued, expires, kid, token_id if isinstance(token_id, str) else None
    )


def _subject_problem(subject: object) -> str | None:
    if not isinstance(subject, str) or not 0 < len(subject) <= MAX_SUBJECT:
        return f"a player's name is 1 to {MAX_SUBJECT} characters"
    if subject != subject.strip() or unsafe_characters(subject):
        return "a player's name is plain text: no control, invisible or edge space"
    if subject != composed(subject):  # a look-alike of the composed name's player
        return "a player's name is in Unicode's composed form (NFC)"
    return None
