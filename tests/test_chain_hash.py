"""The event chain's hash: the fast paths equal the definition in docs/architecture.md."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from gmtool.canonical import canonical_json, chain_hash
from gmtool.store.hands import event_hash, event_hashes, event_record

TEXT = st.text(max_size=12)
PAYLOADS = st.dictionaries(TEXT, st.integers() | TEXT | st.lists(TEXT, max_size=3), max_size=4).map(
    canonical_json
)
EVENTS = st.tuples(
    st.none() | st.integers(min_value=1), st.integers(min_value=1), TEXT, PAYLOADS, TEXT
)


def test_fast_event_hash_equals_the_canonical_definition() -> None:
    """docs/architecture.md: hash = sha256(prev_hash + canonical_json(event)); the fast
    path must agree."""
    payload = canonical_json(
        {"player": "安", "amount": 100, "cards": [{"card": "AS"}], "note": 'quote " and \\ slash'}
    )
    for hand in (None, 7):
        record = event_record("qq-junior-1", hand, 3, "bet", payload, "2026-11-30T10:00:00+00:00")
        assert event_hash(
            "ab" * 32, "qq-junior-1", hand, 3, "bet", payload, "2026-11-30T10:00:00+00:00"
        ) == chain_hash("ab" * 32, record)


@given(
    table=TEXT,
    prevs=st.lists(TEXT, min_size=1, max_size=5),
    events=st.lists(EVENTS, min_size=1, max_size=5),
)
def test_event_hashes_of_many_events_equal_the_definition(
    table: str, prevs: list[str], events: list[tuple]
) -> None:
    """`event_hashes` (the audit's, column by column) equals the definition event by event."""
    events = events[: len(prevs)]
    columns = list(zip(*events))
    expected = [
        chain_hash(prev, event_record(table, hand, seq, type_, payload, at))
        for prev, (hand, seq, type_, payload, at) in zip(prevs, events)
    ]
    assert event_hashes(table, prevs, *columns) == expected
    assert [event_hash(prev, table, *event) for prev, event in zip(prevs, events)] == expected
