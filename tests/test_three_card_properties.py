"""Properties of three-card hands over random legal action sequences (RULES H3, H5, S20).

Both rooms, 2 to 7 players, random decks, coins, round limits and escape policies; the
players pick among the actions `legal_actions` lists, and the host sends time,
disconnects, escapes and kicks now and then. After a bounded number of steps the players
still in pass in turn, since the seed's hand can otherwise go on for ever (H11).
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from gmtool.engine.errors import IllegalAction
from gmtool.engine.events import Action, inputs_of
from gmtool.engine.games import ranking_for
from gmtool.engine.hand import Seat
from gmtool.engine.play import seeded_source, start_hand
from gmtool.engine.settlement import Result
from gmtool.rules.compile import compile_file

ROOT = Path(__file__).resolve().parent.parent
CONFIG = compile_file(ROOT / "rules" / "suihua-three-card.toml")
RANKING = ranking_for(CONFIG)
TIERS = {tier["id"]: tier for tier in CONFIG["tiers"]}
NAMES = ("ann", "bob", "carl", "dan", "eve", "fay", "gus")
MULTIPLE = {
    ("blind", "blind"): Fraction(1),
    ("seen", "seen"): Fraction(1),
    ("seen", "blind"): Fraction(1, 2),
    ("blind", "seen"): Fraction(2),
}
TABLE = {
    ("blind", "blind"): "blind_follows_blind",
    ("seen", "seen"): "seen_follows_seen",
    ("seen", "blind"): "blind_follows_seen",
    ("blind", "seen"): "seen_follows_blind",
}
STEPS = 40


@st.composite
def setups(draw) -> dict:
    players = draw(st.integers(2, 7))
    tier = draw(st.sampled_from(sorted(TIERS)))
    ante = TIERS[tier]["ante"]
    config = {
        **CONFIG,
        "three_card": {
            **CONFIG["three_card"],
            "max_rounds": draw(st.sampled_from([0, 0, 1, 2, 3])),
        },
        "betting": {
            **CONFIG["betting"],
            "escape_policy": draw(st.sampled_from(["fold", "forfeit_to_banker"])),
        },
    }
    seat = ante + TIERS[tier]["cap"]  # H12: the least a player may sit with
    coins = [draw(st.sampled_from([seat, seat + ante, 60, 200, 2000])) for _ in range(players)]
    return {
        "config": config,
        "tier": tier,
        "seats": [Seat(NAMES[i], coins[i]) for i in range(players)],
        "banker": NAMES[draw(st.integers(0, players - 1))],
        "seed": draw(st.binary(min_size=1, max_size=8)),
    }


def start(setup: dict):
    return start_hand(
        setup["config"],
        setup["tier"],
        setup["seats"],
        setup["banker"],
        seeded_source(setup["config"], setup["seed"]),
        ranking=RANKING,
    )


def host_inputs(hand) -> list[Action]:
    """Time and connection news the host may send now."""
    out = [Action("wait", amount=seconds) for seconds in (5, 15, 200)]
    for player in hand.live():
        out.append(Action("disconnect" if player.connected else "reconnect", player.name))
    live = [p.name for p in hand.live()]
    out += [Action("escape", live[0]), Action("kick", live[-1], reason="test")]
    return out


def play_randomly(hand, data) -> None:
    for _ in range(STEPS):
        if hand.is_over:
            return
        if data.draw(st.integers(0, 9), label="host?") == 0:
            options = host_inputs(hand)
        else:  # a verb first, so that buy and open come up as often as follow; pass less
            legal = hand.legal_actions()
            keep = [entry for entry in legal if entry.verb != "pass"]
            if keep and data.draw(st.integers(0, 3), label="pass?"):
                legal = keep
            options = data.draw(st.sampled_from(legal), label="verb").actions(hand.to_act)
        action = data.draw(st.sampled_from(options), label="action")
        hand.apply(action)  # everything offered must be accepted
    while not hand.is_over:  # bounded: everyone still in passes in turn
        if not hand.players[hand.to_act].connected:
            hand.apply(Action("reconnect", hand.to_act))
        hand.apply(Action("pass", hand.to_act))


def own_amounts(tier: dict, state: str) -> set[int]:
    """H5: a blind player's amounts are the two blind columns, a seen player's the two seen."""
    return {
        amount for (_, follower), key in TABLE.items() if follower == state for amount in tier[key]
    }


def check_follows(hand, tier: dict) -> None:
    """H3, H5: the first bet is any amount of its player's state (the ante is not a bet to
    follow); each later follow answers the previous one, in the room's amounts, under the cap."""
    previous = None
    for e in hand.events:
        if e.type != "follow":
            continue
        amount, state = e.get("amount"), e.get("state")
        before = e.get("previous")
        assert amount <= tier["cap"], "no bet exceeds the cap (H3)"
        assert amount in own_amounts(tier, state), "one of the follower's amounts (H5)"
        if previous is None:
            assert before is None and e.get("minimum") is None
        else:
            assert (before["amount"], before["state"]) == previous
            pair = (previous[1], state)
            assert amount >= min(MULTIPLE[pair] * previous[0], tier["cap"]), "H5 minimum"
        previous = (amount, state)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(setup=setups(), data=st.data())
def test_random_hands_keep_the_rules(setup: dict, data) -> None:
    """Zero-sum settlement, the cap, H5, exactly one winner, exact replay."""
    hand = start(setup)
    play_randomly(hand, data)
    settlement = hand.settlement
    event(f"ended by {settlement.reason}")
    event(f"{sum(e.type == 'buy' for e in hand.events)} buys")
    assert sum(entry.delta for entry in settlement.entries) == 0
    assert len(settlement.winners) == 1
    assert [r for r in settlement.results.values() if r == Result.WIN] == [Result.WIN]
    for seat in setup["seats"]:
        assert settlement.delta(seat.name) >= -seat.coins, "coins never go negative"
        assert hand.players[seat.name].total <= seat.coins
    check_follows(hand, TIERS[setup["tier"]])
    again = start(setup)
    for action in inputs_of(hand.events):
        again.apply(action)
    assert again.events == hand.events
    assert [e.as_json() for e in again.events] == [e.as_json() for e in hand.events]


@settings(max_examples=100, deadline=None)
@given(
    setup=setups(),
    data=st.data(),
    verb=st.sampled_from(["follow", "buy", "open", "look", "pass"]),
    amount=st.integers(0, 100),
    who=st.integers(0, 6),
)
def test_refused_actions_change_nothing(
    setup: dict, data, verb: str, amount: int, who: int
) -> None:
    """Every illegal action raises IllegalAction naming the rule and changes nothing."""
    hand = start(setup)
    names = [seat.name for seat in setup["seats"]]
    for _ in range(data.draw(st.integers(0, 10), label="steps")):
        if hand.is_over:
            return
        options = [a for legal in hand.legal_actions() for a in legal.actions(hand.to_act)]
        hand.apply(data.draw(st.sampled_from(options)))
    if hand.is_over:
        return
    player = names[who % len(names)]
    action = Action(
        verb,
        player,
        amount if verb == "follow" else None,
        names[amount % len(names)] if verb == "buy" else None,
    )
    before = (
        [e.as_json() for e in hand.events],
        hand.to_act,
        hand.pot,
        dict(hand.seen),
        hand.last_bet,
        hand.bought,
        hand.round,
    )
    try:
        hand.apply(action)
    except IllegalAction as error:
        assert error.rule.startswith("H")
        assert before == (
            [e.as_json() for e in hand.events],
            hand.to_act,
            hand.pot,
            dict(hand.seen),
            hand.last_bet,
            hand.bought,
            hand.round,
        )
