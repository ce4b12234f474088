"""What one connection may ask of a host (gmtool/gateway/limits.py): a budget of frames
on the host's clock, and tokens with a `jti` used once. Over real sockets:
tests/test_gateway_play.py (a flood closed with 4007, a replayed token with 4001)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from gmtool.gateway.limits import BURST, FLOOD, RATE_PER_S, FrameBudget, TokenIds


def test_a_burst_is_taken_and_the_next_frame_is_refused_once_then_quietly() -> None:
    budget = FrameBudget(0.0)
    assert [budget.take(0.0) for _ in range(BURST)] == ["take"] * BURST
    assert budget.take(0.0) == "refuse"
    assert budget.take(0.0) == "quiet"


def test_a_pause_refills_the_budget_at_its_rate() -> None:
    budget = FrameBudget(0.0)
    for _ in range(BURST + 3):
        budget.take(0.0)
    assert budget.take(1.0 / RATE_PER_S) == "take"  # one frame's worth of time
    assert budget.take(1.0 / RATE_PER_S) == "refuse"  # a new run past the budget: told again


def test_a_flood_without_a_pause_closes_the_connection() -> None:
    budget = FrameBudget(0.0)
    verdicts = [budget.take(0.0) for _ in range(BURST + FLOOD)]
    assert verdicts[-1] == "close" and "close" not in verdicts[:-1]
    assert verdicts.count("refuse") == 1


@given(st.lists(st.floats(min_value=0.0, max_value=5.0), min_size=1, max_size=400))
def test_no_more_frames_are_taken_than_the_burst_and_the_rate_allow(gaps: list[float]) -> None:
    budget, now, taken = FrameBudget(0.0), 0.0, 0
    for gap in gaps:
        now += gap
        taken += budget.take(now) == "take"
        assert taken <= BURST + now * RATE_PER_S + 1e-6


def test_a_token_id_opens_one_connection_until_its_token_expires() -> None:
    ids = TokenIds()
    assert ids.use("t-1", expires=100, now=10.0)
    assert not ids.use("t-1", expires=100, now=50.0)  # replayed
    assert ids.use("t-2", expires=100, now=50.0)
    assert ids.use("t-1", expires=300, now=150.0)  # the first expired (verify refuses it)


def test_expired_ids_are_forgotten_so_memory_stays_bounded() -> None:
    ids = TokenIds()
    for n in range(3000):
        ids.use(f"t-{n}", expires=n, now=float(n))
    assert len(ids.seen) <= 1100
