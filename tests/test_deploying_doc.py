"""docs/deploying.md stays true: the token a login service mints as the page shows (PyJWT,
EdDSA, its own kid computed as documented) opens the store it names, once when it carries
a `jti`; and the limits it quotes are the code's."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from gmtool.gateway import limits, tokens
from gmtool.house import connection, gateway

PAGE = (Path(__file__).resolve().parent.parent / "docs" / "deploying.md").read_text()


def _python_block() -> str:
    (block,) = re.findall(r"```python\n(.*?)```", PAGE, re.S)
    return block


def test_a_token_minted_as_the_page_shows_opens_the_store_it_names() -> None:
    key = tokens.new_key()
    raw = key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    kid = hashlib.sha256(raw).hexdigest()[:16]  # "the first 16 hex digits of the SHA-256"
    scope = {"STORE_ID": "store-1", "PRIVATE_KEY": key, "KID": kid, "SESSION_ID": "s-1"}
    exec(_python_block(), scope)  # noqa: S102 - the page's own example, run as written
    registered = tokens.keys_of([tokens.public_text(key.public_key())])
    claims = tokens.verify(scope["token"], registered, "store-1", scope["now"])
    assert (claims.subject, claims.token_id) == ("ann", "s-1")
    with pytest.raises(tokens.TokenError) as refused:
        tokens.verify(scope["token"], registered, "another-store", scope["now"])
    assert refused.value.code == "audience"


def test_the_limits_the_page_quotes_are_the_codes() -> None:
    assert f"{limits.BURST} at once, then {limits.RATE_PER_S:g} a second" in PAGE
    assert f"{limits.FLOOD} in a row" in PAGE
    assert f"after {connection.MAX_QUEUE} waiting (4005)" in PAGE
    assert f"{gateway.MAX_CONNECTIONS:,} sockets" in PAGE
    assert connection.CLOSE["flood"] == 4007 and "(4007)" in PAGE
