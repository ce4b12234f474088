"""RULES G3 at the player's socket (issue 25 item 4): gateway/views.py's `TableView` gives
each connection only the cards it may see.

Hands of every shipped profile are played on the engine with random legal actions and host
inputs (hypothesis); every event goes through a view of each seated player and of a
spectator, and the frames are searched for every card code: no connection ever receives a
face-down card of another player before a showdown shows it, a three-card player never
receives their own cards before they look (H4: until then they play blind), and a buy's
comparison (H7) reaches only the two players compared.
"""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from gmtool.engine.events import Action
from gmtool.engine.hand import Seat
from gmtool.engine.play import seeded_source, start_hand
from gmtool.engine.seating import coins_to_sit
from gmtool.gateway.views import TableView
from gmtool.rules.compile import compile_file

ROOT = Path(__file__).resolve().parent.parent
PROFILES = {path.stem: compile_file(path) for path in sorted((ROOT / "rules").glob("*.toml"))}
NAMES = ("ann", "bob", "carl", "dan", "eve")
STEPS = 60


@st.composite
def hands(draw):
    config = PROFILES[draw(st.sampled_from(sorted(PROFILES)))]
    tier = draw(st.sampled_from([t for t in config["tiers"] if t.get("enabled", True)]))
    players = draw(st.integers(2, min(5, config["table"]["seats"])))
    ante = tier.get("ante") or draw(st.sampled_from([10, 100]))
    least = coins_to_sit(config, tier["id"], ante)
    seats = [Seat(NAMES[i], least * draw(st.sampled_from([1, 2, 5]))) for i in range(players)]
    hand = start_hand(
        config,
        tier["id"],
        seats,
        NAMES[draw(st.integers(0, players - 1))],
        seeded_source(config, draw(st.binary(min_size=1, max_size=8))),
        ante=None if tier.get("ante") else ante,
    )
    for _ in range(STEPS):
        if hand.is_over:
            break
        if draw(st.integers(0, 9)) == 0:
            live = [p.name for p in hand.live()]
            options = [Action("wait", amount=30), Action("escape", draw(st.sampled_from(live)))]
        else:  # look, buy and open (three-card) often: they are where cards change hands
            legal = {entry.verb: entry for entry in hand.legal_actions()}
            favoured = [legal[verb] for verb in ("buy", "look", "open") if verb in legal]
            if favoured and draw(st.booleans()):
                chosen = draw(st.sampled_from(favoured))
            else:
                chosen = draw(st.sampled_from(list(legal.values())))
            options = chosen.actions(hand.to_act)
        hand.apply(draw(st.sampled_from(options)))
    while not hand.is_over:  # bounded: the player to act folds (stud5) or passes
        verbs = {legal.verb for legal in hand.legal_actions()}
        hand.apply(Action("fold" if "fold" in verbs else "pass", hand.to_act))
    return [event.as_json() for event in hand.events], [seat.name for seat in seats]


def _codes(cards) -> list[tuple[str, str, str]]:
    return [(c["card"], c.get("face"), c.get("player")) for c in cards]


@settings(max_examples=300, deadline=None)
@given(hands())
def test_g3_no_connection_sees_a_card_it_should_not(played) -> None:
    events, players = played
    for viewer in [*players, None]:
        view = TableView(viewer)
        may_see: set[str] = set()  # card codes this viewer may have seen so far
        hidden: dict[str, str] = {}  # face-down code -> its owner, not shown to this viewer
        looked = False
        game = None
        for event in events:
            if event["type"] == "hand_started":
                game = event["game"]
            if event["type"] == "deal":
                for code, face, owner in _codes(event["cards"]):
                    own_visible = owner == viewer and (game == "stud5" or looked)
                    if face == "up" or own_visible:
                        may_see.add(code)
                    else:
                        hidden[code] = owner
            if event["type"] == "look" and event["player"] == viewer:
                looked = True
                may_see |= {code for code, owner in hidden.items() if owner == viewer}
            if event["type"] == "showdown":
                may_see |= {code for h in event["hands"] for code in h["cards"]}
            if event["type"] == "buy_result" and viewer in (event["buyer"], event["target"]):
                may_see |= {code for h in event["hands"] for code in h["cards"]}
            frame = json.dumps(view.see(event))
            for code in set(hidden) - may_see:
                assert f'"{code}"' not in frame, (viewer, hidden[code], code, event["type"], frame)


@settings(max_examples=200, deadline=None)
@given(hands())
def test_a_player_sees_their_own_cards_when_they_may(played) -> None:
    """Not too little either: a stud5 player gets their hole card with the deal; a
    three-card player gets their three cards in their own look frame."""
    events, players = played
    for viewer in players:
        view = TableView(viewer)
        dealt: list[str] = []
        for event in events:
            seen = view.see(event)
            if event["type"] == "deal":
                mine = [c for c in event["cards"] if c["player"] == viewer]
                dealt += [c["card"] for c in mine]
                if event.get("rule") == "S10" and any(c["face"] == "down" for c in mine):
                    shown = [c["card"] for c in seen["cards"] if c["player"] == viewer]
                    assert shown == [c["card"] for c in mine]
            if event["type"] == "look" and event["player"] == viewer:
                assert seen["cards"] == dealt


def test_a_spectator_sees_who_won_a_buy_but_not_the_cards() -> None:
    result = {
        "type": "buy_result",
        "buyer": "ann",
        "target": "bob",
        "winner": "bob",
        "loser": "ann",
        "hands": [{"player": "ann", "cards": ["2S", "7H", "9D"]}],
        "explanation": "pair of nines beats...",
        "rule": "H7",
    }
    for viewer in (None, "carl"):
        assert TableView(viewer).see(result) == {
            "type": "buy_result",
            "buyer": "ann",
            "target": "bob",
            "winner": "bob",
            "loser": "ann",
            "rule": "H7",
        }
    assert TableView("ann").see(result) == result


def test_an_unknown_event_with_cards_shows_none_of_them() -> None:
    leak = {"type": "future_event", "cards": ["AS", "KS"], "hole": "QS", "card": "JS"}
    shown = json.dumps(TableView("ann").see(leak))
    assert not [code for code in ("AS", "KS", "QS", "JS") if f'"{code}"' in shown], shown
