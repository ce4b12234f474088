"""Player tokens (issue 25 item 3): gateway/tokens.py mints and checks EdDSA JWTs bound to
one store, on the host's clock; every forged, expired, misdirected or malformed token is a
TokenError with a one-word code, never another exception (hypothesis fuzzes it)."""

from __future__ import annotations

import base64
import json

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given, settings
from hypothesis import strategies as st

from gmtool.gateway.tokens import (
    LEEWAY_S,
    MAX_TTL_S,
    TokenError,
    key_id,
    mint,
    parse_public,
    public_text,
    verify,
)

NOW = 1_800_000_000.0
STORE = "0f3c2a9e1b7d4c55"
KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
KEYS = {key_id(KEY.public_key()): KEY.public_key()}


def _code(token: str, now: float = NOW, store: str = STORE) -> str:
    with pytest.raises(TokenError) as caught:
        verify(token, KEYS, store, now)
    return caught.value.code


def _b64(data: dict | bytes) -> str:
    raw = data if isinstance(data, bytes) else json.dumps(data).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def test_a_minted_token_names_its_player_store_and_times() -> None:
    token = mint(KEY, STORE, "ann", 3600, NOW, token_id="t-1")
    claims = verify(token, KEYS, STORE, NOW + 10)
    assert (claims.subject, claims.store, claims.issued, claims.expires) == (
        "ann",
        STORE,
        int(NOW),
        int(NOW) + 3600,
    )
    assert (claims.key, claims.token_id) == (key_id(KEY.public_key()), "t-1")


def test_expiry_runs_on_the_callers_clock_with_a_little_leeway() -> None:
    token = mint(KEY, STORE, "ann", 60, NOW)
    verify(token, KEYS, STORE, NOW + 60 + LEEWAY_S)
    assert _code(token, NOW + 61 + LEEWAY_S) == "expired"
    assert _code(token, NOW - LEEWAY_S - 1) == "early"


def test_a_token_of_another_store_opens_nothing() -> None:
    assert _code(mint(KEY, "another-store", "ann", 60, NOW)) == "audience"


def test_a_token_signed_by_an_unregistered_key_is_refused() -> None:
    other = Ed25519PrivateKey.generate()
    assert _code(mint(other, STORE, "ann", 60, NOW)) == "unknown_key"


def test_a_changed_claim_breaks_the_signature() -> None:
    header, _, signature = mint(KEY, STORE, "ann", 60, NOW).split(".")
    forged = {"sub": "bob", "aud": STORE, "iat": int(NOW), "exp": int(NOW) + 60}
    assert _code(f"{header}.{_b64(forged)}.{signature}") == "signature"


def test_alg_none_and_hs256_with_the_public_key_are_refused() -> None:
    """RFC 8725 2.1: the algorithm is ours, not the token's."""
    kid = key_id(KEY.public_key())
    claims = {"sub": "ann", "aud": STORE, "iat": int(NOW), "exp": int(NOW) + 60}
    unsigned = f"{_b64({'alg': 'none', 'kid': kid})}.{_b64(claims)}."
    assert _code(unsigned) == "algorithm"
    secret = public_text(KEY.public_key()).encode()
    confused = jwt.encode(claims, secret, algorithm="HS256", headers={"kid": kid})
    assert _code(confused) == "algorithm"


@pytest.mark.parametrize("missing", ["sub", "aud", "iat", "exp"])
def test_every_required_claim_must_be_there(missing: str) -> None:
    claims = {"sub": "ann", "aud": STORE, "iat": int(NOW), "exp": int(NOW) + 60}
    del claims[missing]
    token = jwt.encode(claims, KEY, algorithm="EdDSA", headers={"kid": key_id(KEY.public_key())})
    assert _code(token) in ("claims", "audience")


@pytest.mark.parametrize(
    ("claims", "code"),
    [
        ({"exp": NOW + 60.5}, "claims"),
        ({"exp": int(NOW) + MAX_TTL_S + 1}, "lifetime"),
        ({"sub": "evil \u202egnp"}, "subject"),
        ({"sub": ""}, "subject"),
        ({"sub": "x" * 65}, "subject"),
        ({"sub": "jose\u0301"}, "subject"),  # decomposed: a look-alike of "jos\u00e9"
    ],
)
def test_times_lifetimes_and_names_are_checked(claims: dict, code: str) -> None:
    base = {"sub": "ann", "aud": STORE, "iat": int(NOW), "exp": int(NOW) + 60}
    token = jwt.encode(
        {**base, **claims}, KEY, algorithm="EdDSA", headers={"kid": key_id(KEY.public_key())}
    )
    assert _code(token) == code


def test_mint_refuses_what_verify_would_refuse() -> None:
    with pytest.raises(ValueError, match="plain text"):
        mint(KEY, STORE, "bot\u200b-001", 60, NOW)
    with pytest.raises(ValueError, match="30 days"):
        mint(KEY, STORE, "ann", MAX_TTL_S + 1, NOW)


def test_a_public_key_reads_back_and_bad_ones_say_so() -> None:
    text = public_text(KEY.public_key())
    assert key_id(parse_public(text)) == key_id(KEY.public_key())
    for bad in ("ed25519:" + base64.b64encode(b"short").decode(), "rsa:AAAA", "ed25519:@@"):
        with pytest.raises(ValueError):
            parse_public(bad)


@settings(max_examples=500, deadline=None)
@given(
    st.one_of(
        st.text(max_size=200),
        st.builds(
            lambda h, c, s: f"{h}.{c}.{s}",
            st.one_of(
                st.text(max_size=30),
                st.builds(_b64, st.dictionaries(st.text(max_size=5), st.text(max_size=5))),
            ),
            st.one_of(
                st.text(max_size=30),
                st.builds(_b64, st.dictionaries(st.text(max_size=5), st.integers())),
            ),
            st.text(max_size=30),
        ),
    )
)
def test_any_string_is_claims_or_a_token_error(token: str) -> None:
    try:
        verify(token, KEYS, STORE, NOW)
    except TokenError as refusal:
        assert refusal.code and str(refusal)
