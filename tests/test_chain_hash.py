"""The event chain's hash: the fast path equals DESIGN's definition."""

from __future__ import annotations


def test_fast_event_hash_equals_the_canonical_definition() -> None:
    """DESIGN: hash = sha256(prev_hash + canonical_json(event)); the fast path must agree."""
    from gmtool.canonical import canonical_json, chain_hash
    from gmtool.store.hands import event_hash, event_record

    payload = canonical_json({"player": "安", "amount": 100, "cards": [{"card": "AS"}],
                              "note": 'quote " and \\ slash'})
    for hand in (None, 7):
        record = event_record("qq-junior-1", hand, 3, "bet", payload, "2026-11-30T10:00:00+00:00")
        assert event_hash("ab" * 32, "qq-junior-1", hand, 3, "bet", payload,
                          "2026-11-30T10:00:00+00:00") == chain_hash("ab" * 32, record)
