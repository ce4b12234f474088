"""Time is an input, and it is time however it is cut (RULES S17, S18, engine version 4).

A host may report 40 seconds as `wait 40` or as `wait 16` and `wait 24`; the action clocks
and reconnect windows must run out at the same moments either way. Each example plays a
random stud5 or three-card hand with disconnects mixed in, then sends N seconds once to
one copy and cut into random pieces to another: apart from the `wait` events themselves,
both copies must record the same events and stand in the same state.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gmtool.engine.events import Action
from gmtool.engine.play import Seat, seeded_source, start_hand
from gmtool.rules.compile import compile_file

RULES_DIR = Path(__file__).resolve().parent.parent / "rules"
ROOMS = (("qq-showhand", "junior"), ("suihua-three-card", "chips-10"), ("video-showhand", "junior"))
NAMES = ("ann", "bob", "carl", "dora")


@cache
def compiled(profile: str) -> dict:
    return compile_file(RULES_DIR / f"{profile}.toml")


def start(profile: str, tier: str, players: int, seed: bytes):
    config = compiled(profile)
    seats = [Seat(name, 50_000) for name in NAMES[:players]]
    return start_hand(config, tier, seats, NAMES[0], seeded_source(config, seed))


def pieces(total: int, cuts: list[int]) -> list[int]:
    """`total` cut at the given points (each in 1..total-1), as positive pieces."""
    points = sorted({c for c in cuts if 0 < c < total})
    edges = [0, *points, total]
    return [b - a for a, b in zip(edges, edges[1:])]


def _state(hand) -> tuple:
    return (
        hand.to_act,
        hand.is_over,
        hand.pot,
        [
            (p.name, p.folded, p.connected, p.action_elapsed, p.window_elapsed)
            for p in hand.players.values()
        ],
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    room=st.sampled_from(ROOMS),
    players=st.integers(2, 4),
    seed=st.binary(min_size=1, max_size=6),
    data=st.data(),
    total=st.integers(1, 400),
    cuts=st.lists(st.integers(1, 399), max_size=6),
)
def test_s17_s18_a_wait_cut_in_pieces_runs_out_the_same_clocks(
    room, players, seed, data, total, cuts
) -> None:
    one, cut = (start(*room, players, seed) for _ in range(2))
    for _ in range(data.draw(st.integers(0, 12), label="steps")):
        if one.is_over:
            return
        options = [Action("disconnect", p.name) for p in one.live() if p.connected]
        options += [Action("wait", amount=s) for s in (5, 14)]
        for legal in one.legal_actions():
            options += legal.actions(one.to_act, limit=3)
        action = data.draw(st.sampled_from(options), label="action")
        one.apply(action)
        cut.apply(action)
    if one.is_over:
        return
    one.apply(Action("wait", amount=total))
    for piece in pieces(total, cuts):
        if cut.is_over:
            break
        cut.apply(Action("wait", amount=piece))
    assert [e for e in one.events if e.type != "wait"] == [
        e for e in cut.events if e.type != "wait"
    ]
    assert _state(one) == _state(cut)
