"""Suihua three-card hands: RULES H1-H8, H11 with S17-S19, G2, G3 (H9-H10: test_engine_ranking3).

Every test plays a hand from the shipped profile with fixed cards, so each outcome is exact.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gmtool.engine.errors import IllegalAction, SetupError
from gmtool.engine.events import Action, inputs_of
from gmtool.engine.games import ranking_for
from gmtool.engine.hand import Seat
from gmtool.engine.play import fixed_source, replay, seeded_source, start_hand
from gmtool.engine.settlement import Result
from gmtool.engine.three_card import ThreeCardHand
from gmtool.engine.three_card_pricing import Bet, Prices
from gmtool.engine.versions import REVISIONS
from gmtool.rules.compile import compile_file

ROOT = Path(__file__).resolve().parent.parent
CONFIG = compile_file(ROOT / "rules" / "suihua-three-card.toml")
RANKING = ranking_for(CONFIG)
SCENARIOS = ROOT / "rules" / "scenarios" / "three-card"
THREE = {"ann": "2S 5H 9C", "bob": "3D 6C TH", "carl": "4H 8D JS"}
EQUAL = {"ann": "AS KH 9C", "bob": "AH KS 9D", "carl": "2C 3D 7H"}


def variant(**changes) -> dict:
    """The shipped configuration with some three_card / betting / tier values changed."""
    config = {
        **CONFIG,
        "three_card": dict(CONFIG["three_card"]),
        "betting": dict(CONFIG["betting"]),
        "tiers": [dict(t) for t in CONFIG["tiers"]],
    }
    for key, value in changes.items():
        if key == "escape_policy":
            config["betting"][key] = value
        elif key in ("coins", "min_holding"):
            for tier in config["tiers"]:
                tier[key] = value
            if key == "coins" and not value:  # as compiled: a training room has [scoring]
                config["scoring"] = {"win": 1, "loss": -1, "draw": 0, "escape": -2, "disconnect": 0}
        else:
            config["three_card"][key] = value
    return config


def deal(
    cards: dict[str, str] = THREE,
    tier: str = "chips-5",
    banker: str | None = None,
    coins: dict[str, int] | None = None,
    config: dict = CONFIG,
) -> ThreeCardHand:
    """A hand in seat order of `cards`; by default the last player deals, the first speaks."""
    names = list(cards)
    seats = [Seat(name, (coins or {}).get(name, 2000)) for name in names]
    return start_hand(
        config, tier, seats, banker or names[-1], fixed_source(config, cards), ranking=RANKING
    )


def play(hand: ThreeCardHand, *lines: str) -> ThreeCardHand:
    for line in lines:
        hand.apply(Action.parse(line))
    return hand


def refused(hand: ThreeCardHand, line: str) -> IllegalAction:
    """Apply `line`, which must be refused, and check that nothing changed."""
    before = (
        len(hand.events),
        hand.to_act,
        hand.pot,
        dict(hand.seen),
        hand.last_bet,
        hand.bought,
        [p.folded for p in hand.players.values()],
    )
    assert not hand.can(Action.parse(line))
    with pytest.raises(IllegalAction) as caught:
        hand.apply(Action.parse(line))
    assert before == (
        len(hand.events),
        hand.to_act,
        hand.pot,
        dict(hand.seen),
        hand.last_bet,
        hand.bought,
        [p.folded for p in hand.players.values()],
    )
    return caught.value


def deltas(hand: ThreeCardHand) -> dict[str, int]:
    return {name: hand.settlement.delta(name) for name in hand.order}


def types(hand: ThreeCardHand) -> list[str]:
    return [e.type for e in hand.events]


# -- H1 --------------------------------------------------------------------------------------


@pytest.mark.parametrize("players, ok", [(1, False), (2, True), (7, True), (8, False)])
def test_h1_two_to_seven_players(players: int, ok: bool) -> None:
    """H1 52 cards (no jokers), 2 to 7 players: an eighth is refused."""
    seats = [Seat(f"p{i}", 2000) for i in range(players)]
    source = seeded_source(CONFIG, b"h1")
    if ok:
        hand = start_hand(CONFIG, "chips-10", seats, "p0", source, ranking=RANKING)
        assert len(hand.live()) == players
    else:
        with pytest.raises(SetupError) as caught:
            start_hand(CONFIG, "chips-10", seats, "p0", source, ranking=RANKING)
        assert caught.value.rule == "H1"


def test_h1_three_face_down_cards_each_from_one_deck() -> None:
    """H1 3 cards each, all face down, from one 52-card deck."""
    seats = [Seat(f"p{i}", 2000) for i in range(7)]
    hand = start_hand(CONFIG, "chips-5", seats, "p0", seeded_source(CONFIG, b"x"), ranking=RANKING)
    cards = [c for p in hand.players.values() for c in p.cards]
    assert all(len(p.cards) == 3 for p in hand.players.values())
    assert len(set(cards)) == 21
    dealt = next(e for e in hand.events if e.type == "deal").get("cards")
    assert {c["face"] for c in dealt} == {"down"} and len(dealt) == 21


# -- H2 --------------------------------------------------------------------------------------


def test_h2_dealing_and_speaking_start_from_the_dealers_next_player() -> None:
    """H2 Dealing and betting start from the dealer's next player, counterclockwise."""
    seats = [Seat(name, 2000) for name in ("ann", "bob", "carl", "dan")]
    hand = start_hand(
        CONFIG, "chips-5", seats, "bob", seeded_source(CONFIG, b"h2"), ranking=RANKING
    )
    dealt = [c["player"] for c in next(e for e in hand.events if e.type == "deal").get("cards")]
    assert dealt == ["carl", "dan", "ann", "bob"] * 3
    assert hand.to_act == "carl"
    play(hand, "carl follow 10", "dan pass")
    assert hand.to_act == "ann"


def test_h2_the_winner_deals_the_next_hand() -> None:
    """H2 Dealer: the room owner for the first hand, then the previous winner."""
    hand = play(deal(), "ann pass", "bob pass")
    ended = next(e for e in hand.events if e.type == "hand_ended")
    assert ended.get("next_banker") == "carl" == hand.settlement.winners[0]


def test_h2_out_of_turn_is_refused() -> None:
    hand = deal()
    for line in ("bob follow 10", "carl pass", "bob open"):
        assert refused(hand, line).rule == "H2"


def test_h2_dealer_must_be_seated() -> None:
    with pytest.raises(SetupError) as caught:
        deal(banker="zed")
    assert caught.value.rule == "H2"


# -- H3 --------------------------------------------------------------------------------------


@pytest.mark.parametrize("tier, ante", [("chips-5", 5), ("chips-10", 10)])
def test_h3_the_system_posts_the_ante_for_everyone(tier: str, ante: int) -> None:
    """H3 The system posts the ante for everyone before dealing: 5 or 10 chips."""
    hand = deal(tier=tier)
    assert [e.get("amount") for e in hand.events if e.type == "ante"] == [ante] * 3
    assert types(hand).index("ante") < types(hand).index("deal")
    assert hand.pot == 3 * ante and all(p.total == ante for p in hand.live())


@pytest.mark.parametrize("tier, cap", [("chips-5", 20), ("chips-10", 40)])
def test_h3_no_follow_above_the_cap(tier: str, cap: int) -> None:
    """H3 The room's cap is 20 and 40 chips; no single bet may exceed the cap."""
    hand = play(deal(tier=tier), "ann look")
    assert refused(hand, f"ann follow {cap * 2}").rule == "H3"
    assert max(hand.legal_actions()[0].amounts) == cap


@pytest.mark.parametrize("tier, need", [("chips-5", 25), ("chips-10", 50)])
def test_h12_a_seat_needs_the_ante_plus_one_follow_at_the_cap(tier: str, need: int) -> None:
    """H12 (D-11): 5 + 20 in the 5-chip room, 10 + 40 in the 10-chip room."""
    with pytest.raises(SetupError) as caught:
        deal(tier=tier, coins={"ann": need - 1})
    assert caught.value.rule == "H12" and str(need) in str(caught.value)
    hand = play(deal(tier=tier, coins={"ann": need}), "ann look")
    assert hand.legal_actions()[0].amounts[-1] == need - hand.prices.ante  # the cap


def test_h12_engines_before_4_seated_a_player_holding_the_ante() -> None:
    """Hands of engine 3 replay as they were played: the ante was enough to sit (H3)."""
    names, old = list(THREE), variant(min_holding=0)  # as shipped before H12
    seats = [Seat(name, 6 if name == "ann" else 2000) for name in names]
    hand = start_hand(
        old, "chips-5", seats, names[-1], fixed_source(old, THREE), ranking=RANKING, engine="3"
    )
    assert [legal.verb for legal in hand.legal_actions()] == ["look", "pass"]
    with pytest.raises(SetupError) as caught:
        start_hand(
            old,
            "chips-5",
            [Seat(n, 4 if n == "ann" else 2000) for n in names],
            names[-1],
            fixed_source(old, THREE),
            ranking=RANKING,
            engine="3",
        )
    assert caught.value.rule == "H3"


# -- H4 --------------------------------------------------------------------------------------


def test_h4_look_is_permanent_and_keeps_the_turn() -> None:
    """H4 Looking is allowed at any time on one's turn and is permanent."""
    hand = play(deal(), "ann look")
    assert hand.to_act == "ann" and hand.seen["ann"]
    assert refused(hand, "ann look").rule == "H4"
    assert "look" not in [legal.verb for legal in hand.legal_actions()]
    play(hand, "ann follow 20", "bob follow 10", "carl follow 10")
    assert hand.seen["ann"] and hand.to_act == "ann"
    assert hand.legal_actions()[0].amounts == (20,)  # seen prices from now on


def test_h4_look_at_any_time_after_the_deal() -> None:
    """H4 (corrected 2026-12-02): looking is allowed on one's turn or not, also after
    passing; it changes nobody's turn or clock."""
    hand = play(deal(), "wait 5", "bob look")
    assert hand.seen["bob"] and hand.to_act == "ann"
    assert hand.players["ann"].action_elapsed == 5
    play(hand, "ann follow 10")
    assert hand.legal_actions()[0].amounts == (20,)  # bob now follows at seen prices
    hand = play(deal(), "ann pass", "ann look")
    assert hand.seen["ann"] and hand.to_act == "bob"
    assert refused(hand, "ann look").rule == "H4"  # looking is permanent: once


def test_g3_looking_reveals_no_card_in_the_log() -> None:
    """G3 Hole cards of a running hand are never shown: the look event carries none."""
    hand = play(deal(), "ann look")
    assert hand.events[-1].as_json() == {"type": "look", "player": "ann", "rule": "H4"}


# -- H5 --------------------------------------------------------------------------------------


def test_h5_seen_after_blind_needs_twice_the_bet() -> None:
    """H5 seen after blind: at least 2 x the previous bet."""
    hand = play(deal(), "ann follow 10", "bob look")
    error = refused(hand, "bob follow 10")
    assert error.rule == "H5" and "2 x 10 = 20" in error.reason
    play(hand, "bob follow 20")


def test_h5_blind_after_seen_may_follow_at_half() -> None:
    """H5 blind after seen: at least 1/2 of the previous bet."""
    hand = play(deal(), "ann look", "ann follow 20", "bob follow 10")
    assert hand.events[-1].get("minimum") == 10 and hand.to_act == "carl"
    hand = play(deal(tier="chips-10"), "ann look", "ann follow 20", "bob follow 10")
    assert (
        refused(play(deal(tier="chips-10"), "ann look", "ann follow 40"), "bob follow 10").rule
        == "H5"
    )


def test_h5_same_state_needs_at_least_the_bet() -> None:
    """H5 seen after seen and blind after blind: at least the previous bet."""
    hand = play(deal(tier="chips-10"), "ann follow 20")
    assert refused(hand, "bob follow 10").rule == "H5"
    play(hand, "bob follow 20", "carl look", "carl follow 40", "ann look")
    assert refused(hand, "ann follow 20").rule == "H5"
    play(hand, "ann follow 40")


def test_h5_first_speaker_follows_the_ante_as_a_blind_bet() -> None:
    """The ante is everyone's current bet before they follow, posted blind."""
    hand = deal()
    assert hand.legal_actions()[1].amounts == (5, 10)  # blind after the blind ante 5
    play(hand, "ann look")
    assert hand.legal_actions()[0].amounts == (10, 20)  # seen after it: 2 x 5 at least


@pytest.mark.parametrize(
    "tier, previous, previous_seen, seen, allowed",
    [
        ("chips-5", 5, False, False, (5, 10)),
        ("chips-5", 5, False, True, (10, 20)),
        ("chips-5", 10, False, True, (20,)),
        ("chips-5", 10, True, False, (5, 10)),
        ("chips-5", 20, True, False, (10,)),
        ("chips-5", 10, True, True, (10, 20)),
        ("chips-10", 10, False, False, (10, 20)),
        ("chips-10", 10, False, True, (20, 40)),
        ("chips-10", 20, False, True, (40,)),
        ("chips-10", 5, False, True, (10, 20, 40)),
        ("chips-10", 10, True, False, (5, 10, 20)),
        ("chips-10", 20, True, False, (10, 20)),
        ("chips-10", 40, True, False, (20,)),
        ("chips-10", 40, True, True, (40,)),
        ("chips-10", 20, True, True, (20, 40)),
    ],
)
def test_h5_room_tables_with_minimums(tier, previous, previous_seen, seen, allowed) -> None:
    """H5 (corrected): a follow is one of the follower's own amounts (a blind player's are
    the union of the table's two blind columns, a seen player's of the two seen columns)
    that meets the H5 minimum, never above the cap."""
    prices = Prices.for_tier(CONFIG, next(t for t in CONFIG["tiers"] if t["id"] == tier))
    assert prices.follow_amounts(Bet(previous, previous_seen, "x"), seen) == allowed


@pytest.mark.parametrize(
    "tier, previous, previous_seen, seen, allowed",
    [
        ("chips-5", 5, False, False, (10,)),
        ("chips-5", 10, True, True, (20,)),
        ("chips-10", 10, False, False, (20,)),
        ("chips-10", 20, True, True, (40,)),
    ],
)
def test_h5_engine_2_replays_one_column_per_transition(
    tier, previous, previous_seen, seen, allowed
) -> None:
    """Hands recorded by engine version 2 used the column of the pair (previous state, own
    state) alone; they replay with it (engine/versions)."""
    prices = Prices.for_tier(
        CONFIG, next(t for t in CONFIG["tiers"] if t["id"] == tier), REVISIONS["2"]
    )
    assert prices.follow_amounts(Bet(previous, previous_seen, "x"), seen) == allowed


def test_h5_a_minimum_above_the_cap_is_the_cap() -> None:
    """ "never above the room cap" wins over a multiple the cap cannot reach."""
    prices = Prices(5, 20, {(False, True): (10, 20)}, 2, {}, 0)
    assert prices.follow_amounts(Bet(15, False, "x"), True) == (20,)


# -- H6 --------------------------------------------------------------------------------------


def test_h6_pass_forfeits_the_ante_and_every_bet() -> None:
    """H6 PASS (fold) at any turn forfeits the ante and all bets."""
    hand = play(deal(), "ann follow 10", "bob follow 10", "carl pass", "ann pass")
    assert hand.settlement.winners == ("bob",)
    assert deltas(hand) == {"ann": -15, "bob": 20, "carl": -5}
    assert sum(deltas(hand).values()) == 0


# -- H7 --------------------------------------------------------------------------------------


def test_h7_buy_price_is_twice_the_targets_current_bet() -> None:
    """H7 a seen player may pay 2 x the target's current bet (the ante before any follow)."""
    hand = play(deal(), "ann look", "ann follow 10", "bob look")
    assert hand.buy_price("ann") == 20
    hand = play(deal(), "ann look", "ann follow 10", "bob follow 5", "carl look")
    assert hand.buy_targets("carl") == ("ann",) and hand.buy_price("ann") == 20


def test_h7_buy_with_equal_hands_the_buyer_loses() -> None:
    """H7 Equal hands: the buyer loses. The loser is out of the hand."""
    hand = play(
        deal(EQUAL),
        "ann look",
        "ann follow 10",
        "bob look",
        "bob follow 20",
        "carl follow 10",
        "ann buy bob",
    )
    assert hand.players["ann"].folded and not hand.players["bob"].folded
    assert hand.to_act == "bob" and not hand.bought
    play(hand, "bob follow 20", "carl pass")
    assert deltas(hand) == {"ann": -55, "bob": 70, "carl": -15}


def test_h7_a_winning_buyer_then_follows() -> None:
    """H7 if the buyer wins, the buyer then continues with a normal follow."""
    cards = {"ann": "KS KH 2C", "bob": "QS QH 3C", "carl": "4D 7C 9H"}
    hand = play(
        deal(cards, tier="chips-10"),
        "ann look",
        "ann follow 20",
        "bob look",
        "bob follow 40",
        "carl follow 20",
        "ann buy bob",
    )
    assert hand.players["bob"].folded and hand.to_act == "ann" and hand.bought
    assert [legal.verb for legal in hand.legal_actions()] == ["follow", "pass"]
    assert refused(hand, "ann open").rule == "H7"
    assert refused(hand, "ann buy carl").rule == "H7"
    assert refused(hand, "ann follow 20").rule == "H5"  # follows carl's blind 20: 40
    play(hand, "ann follow 40")
    assert hand.to_act == "carl" and not hand.bought


def test_h7_buying_needs_seen_players() -> None:
    """H7 only seen players buy, and only another seen player still in the hand."""
    hand = play(deal(tier="chips-10"), "ann look", "ann follow 20", "bob follow 10")
    assert refused(hand, "carl buy ann").rule == "H7"  # carl is blind
    play(hand, "carl look")
    for line in ("carl buy bob", "carl buy carl", "carl buy zed"):
        assert refused(hand, line).rule == "H7"
    assert hand.can(Action.parse("carl buy ann"))


def test_h7_a_buy_that_leaves_one_player_ends_the_hand() -> None:
    cards = {"ann": "AS AH 2C", "bob": "KS KH 3C"}
    hand = play(deal(cards), "ann look", "ann follow 10", "bob look", "bob buy ann")
    assert hand.is_over and hand.settlement.reason == "buy"
    assert deltas(hand) == {"ann": 25, "bob": -25}


# -- H8 --------------------------------------------------------------------------------------


def test_h8_open_only_with_exactly_two_players_left() -> None:
    """H8 Opening: only when exactly two players remain."""
    hand = deal()
    assert refused(hand, "ann open").rule == "H8"
    play(hand, "ann pass")
    assert hand.can(Action.parse("bob open"))


@pytest.mark.parametrize(
    "lines, price",
    [
        (["ann follow 20", "bob look"], 80),  # seen vs blind: 4 x 20
        (["ann look", "ann follow 20", "bob look"], 40),  # seen vs seen: 2 x 20
        (["ann follow 20"], 40),  # blind vs blind: 2 x 20
        (["ann look", "ann follow 20"], 20),  # blind vs seen: 1 x 20
    ],
)
def test_h8_the_four_opening_prices(lines: list[str], price: int) -> None:
    """H8 Cost by states (opener vs opened): seen vs blind 4 x the opened player's current
    bet; seen vs seen 2 x; blind vs blind 2 x; blind vs seen 1 x."""
    hand = play(deal({"ann": "AS AH AD", "bob": "KS QH 2C"}, tier="chips-10"), *lines)
    assert hand.open_price("bob") == price
    play(hand, "bob open")
    assert deltas(hand) == {"ann": 10 + price, "bob": -10 - price}


def test_h8_open_with_equal_hands_the_opened_player_wins() -> None:
    """H8 Equal hands: the opened player wins. The winner takes everything in the pot."""
    hand = play(deal({"ann": "AS KH 9C", "bob": "AH KS 9D"}), "ann open")
    assert hand.settlement.winners == ("bob",) and deltas(hand) == {"ann": -15, "bob": 15}
    showdown = next(e for e in hand.events if e.type == "showdown")
    assert "opening: the opened player wins" in showdown.get("explanation")


# -- H11 -------------------------------------------------------------------------------------


def test_h11_no_round_limit_by_default() -> None:
    """H11 D-8: the seed sets no limit on the number of betting rounds."""
    hand = play(deal(), *["ann follow 10", "bob follow 10", "carl follow 10"] * 5)
    assert not hand.is_over and hand.round == 6 and types(hand).count("round_end") == 5


def test_h11_round_limit_compares_all_remaining_hands() -> None:
    """H11 a profile may set a limit; then the system compares all remaining hands."""
    cards = {"ann": "2S 5H 9C", "bob": "QS QH 3C", "carl": "4H 8D JS"}
    hand = play(
        deal(cards, config=variant(max_rounds=2)),
        *["ann follow 10", "bob follow 10", "carl follow 10"] * 2,
    )
    assert hand.is_over and hand.settlement.reason == "round_limit"
    assert hand.settlement.winners == ("bob",)
    assert deltas(hand) == {"ann": -25, "bob": 50, "carl": -25}


def test_h11_round_limit_ties_go_to_the_last_opened_player() -> None:
    """D-8 decision: the system opens in speaking order; each tie goes to the opened player."""
    cards = {"ann": "AS KH 9C", "bob": "2C 3D 7H", "carl": "AH KS 9D"}
    hand = play(
        deal(cards, config=variant(max_rounds=1)), "ann follow 10", "bob pass", "carl follow 10"
    )
    assert hand.settlement.winners == ("carl",)  # ann would speak next: ann opens carl
    hand = play(
        deal(cards, banker="ann", config=variant(max_rounds=1)),
        "bob pass",
        "carl follow 10",
        "ann follow 10",
    )
    assert hand.settlement.winners == ("ann",)  # carl would speak next: carl opens ann


# -- S17, S18, S19, G2 -----------------------------------------------------------------------


def test_s17_a_timeout_is_a_pass() -> None:
    """S17 a player who does not act in time is passed by the system."""
    hand = play(deal(), "wait 14")
    assert hand.to_act == "ann"
    play(hand, "wait 1")
    assert hand.players["ann"].folded and hand.to_act == "bob"
    assert hand.events[-1].get("cause") == "timeout"
    play(hand, "bob timeout")
    assert hand.settlement.winners == ("carl",)


def test_s18_the_reconnect_window() -> None:
    """S18 the disconnected player to act is waited for reconnect_min minutes."""
    hand = play(deal(), "ann disconnect", "wait 179", "ann reconnect", "wait 14")
    assert hand.to_act == "ann" and not hand.players["ann"].folded
    hand = play(deal(), "ann disconnect", "wait 180")
    assert not hand.players["ann"].folded, "exactly n minutes is still in time"
    play(hand, "wait 1")
    assert hand.players["ann"].folded and hand.to_act == "bob"
    hand.apply(Action.parse("bob pass"))
    assert hand.settlement.results["ann"] == Result.DISCONNECT


def test_s19_escape_under_policy_fold_is_a_pass() -> None:
    """S19 policy fold (three-card's default): the escapee passes; the others play on."""
    hand = play(deal(), "ann follow 10", "carl escape")
    assert hand.players["carl"].folded and hand.to_act == "bob"
    play(hand, "bob pass")
    assert deltas(hand) == {"ann": 10, "bob": -5, "carl": -5}
    assert hand.settlement.results["carl"] == Result.ESCAPE


def test_s19_escape_under_policy_forfeit_to_banker() -> None:
    """S19 forfeit_to_banker: the escapee is charged the pot; the dealer wins it (D-1 if
    the dealer escapes: the next player still in the hand takes the dealer's place)."""
    config = variant(escape_policy="forfeit_to_banker")
    hand = play(deal(config=config), "ann follow 10", "bob escape")
    assert deltas(hand) == {"ann": 0, "bob": -25, "carl": 25}
    hand = play(deal(config=config), "ann follow 10", "carl escape")
    assert deltas(hand) == {"ann": 25, "bob": 0, "carl": -25}
    assert hand.settlement.winners == ("ann",)


def test_g2_a_kick_is_an_escape() -> None:
    """G2 A GM kick during a running hand is an escape under the profile's policy."""
    hand = play(deal(), "kick bob collusion")
    kick = next(e for e in hand.events if e.type == "kick")
    assert kick.get("reason") == "collusion" and hand.players["bob"].folded
    assert hand.to_act == "ann"


# -- coins, training rooms, errors, replay ---------------------------------------------------------


def test_nobody_puts_in_more_than_they_hold() -> None:
    """Decision (as D-9): coins never go negative; pass is always possible."""
    hand = play(
        deal(coins={"ann": 25}),
        "ann look",
        "ann follow 20",  # 0 left after it
        "bob look",
        "bob follow 20",
        "carl look",
        "carl follow 20",
    )
    assert refused(hand, "ann follow 20").rule == "H5"
    assert [legal.verb for legal in hand.legal_actions()] == ["pass"]


def test_training_room_moves_no_coins() -> None:
    """S22 a room with coins = false moves no coins; results and score change."""
    hand = play(deal(config=variant(coins=False)), "ann follow 10", "bob pass", "carl pass")
    assert set(deltas(hand).values()) == {0}
    assert hand.settlement.score == {"ann": 1, "bob": -1, "carl": -1}


def test_words_of_other_games_and_strangers_are_refused() -> None:
    hand = deal()
    assert refused(hand, "ann bet 10").rule == "H5"
    assert refused(hand, "zed follow 10").rule == "H1"


def test_nothing_is_accepted_after_the_hand_ends() -> None:
    hand = play(deal(), "ann pass", "bob pass")
    assert refused(hand, "carl follow 10").rule == "S20"


def test_every_listed_action_is_accepted() -> None:
    hand = play(deal(EQUAL, tier="chips-10"), "ann look", "ann follow 20", "bob look")
    for legal in hand.legal_actions():
        for action in legal.actions("bob"):
            assert hand.can(action), action


def test_replay_reproduces_the_events() -> None:
    cards = {"ann": "KS KH 2C", "bob": "QS QH 3C", "carl": "4D 7C 9H"}
    lines = [
        "ann look",
        "ann follow 20",
        "wait 3",
        "bob look",
        "bob follow 40",
        "carl disconnect",
        "wait 20",
        "carl reconnect",
        "carl follow 20",
        "ann buy bob",
        "ann follow 40",
        "carl open",
    ]
    hand = play(deal(cards, tier="chips-10"), *lines)
    again = replay(deal(cards, tier="chips-10"), hand.events)
    assert again == hand.events
    assert [str(a) for a in inputs_of(hand.events)] == lines


# -- the scenario files ---------------------------------------------------------------------------


def test_scenarios_cover_h1_to_h11_in_both_rooms_and_pass() -> None:
    """`gmtool rules test rules/scenarios/three-card` passes and covers every H rule."""
    import tomllib

    from gmtool.sandbox.suite import run_scenarios

    results = run_scenarios([str(SCENARIOS)])
    assert results and all(r.passed for r in results), [r for r in results if not r.passed]
    covered = {rule for r in results for rule in r.rules}
    assert {f"H{n}" for n in range(1, 12)} <= covered
    files = sorted(SCENARIOS.glob("*.toml"))
    assert len(files) == len(results)  # a file that does not parse would be skipped silently
    tiers = {tomllib.loads(path.read_text(encoding="utf-8"))["tier"] for path in files}
    assert tiers == {"chips-5", "chips-10"}
