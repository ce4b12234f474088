"""The audit's payload decoder gives exactly the json module's values (orjson is only a
faster way to the same result): property tests over any JSON, big integers included."""

from __future__ import annotations

import json
import math

from hypothesis import given
from hypothesis import strategies as st

from gmtool.audit.replay import StoredEvent, decode_payloads

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()
    | st.text()
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=20,
)


def _events(texts: list[str]) -> list[StoredEvent]:
    return [StoredEvent(seq, "x", text) for seq, text in enumerate(texts, 1)]


def _same(a, b) -> bool:
    """Equal values of equal types (NaN equal to NaN, 1 not equal to 1.0 or True)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b


@given(st.lists(VALUES, min_size=1, max_size=5))
def test_decoded_payloads_are_the_json_modules_values(values: list) -> None:
    texts = [json.dumps(value, ensure_ascii=False) for value in values]
    assert _same(decode_payloads(_events(texts)), [json.loads(text) for text in texts])


def test_integers_beyond_64_bits_stay_exact_integers() -> None:
    texts = [
        '{"coins":18446744073709551616}',
        "[-9223372036854775809,123456789012345678901]",
        '{"a":18446744073709551615,"b":-9223372036854775808}',
    ]
    assert _same(decode_payloads(_events(texts)), [json.loads(text) for text in texts])


def test_what_orjson_refuses_is_decoded_by_json() -> None:
    texts = ['["\\ud800"]', '{"a":NaN,"b":Infinity}', json.dumps(["\ud800x"], ensure_ascii=False)]
    assert _same(decode_payloads(_events(texts)), [json.loads(text) for text in texts])


def test_text_that_is_not_json_decodes_to_none() -> None:
    assert decode_payloads(_events(['{"a":1}', "{not json"])) is None
    assert decode_payloads(_events(['{"a":1}', '{"a":1} trailing'])) is None
