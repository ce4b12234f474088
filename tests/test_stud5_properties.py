"""Stud5 hands under random legal play: the invariants of RULES S10, S15, S20, Q1-Q4, D-7
and the engine's contract (docs/architecture.md), for every shipped stud5 profile and
every open tier.

Each example seats 2 to 4 players holding at least the room's minimum holding (the
owner-ante table: an ante made of chip clicks, coins >= 200 x ante), deals from a seeded
deck and plays a sequence of choices among ``hand.legal_actions()`` (amounts inside the
bounds, on the step), mixed with host inputs (``wait N``, disconnect / reconnect, escape,
GM kick) wherever ``hand.can`` accepts them; when the choices run out, the players check
or call to the end. On failure hypothesis prints the setup and the inputs applied, one
scenario line each ("ann bet 100", "wait 15", "bob escape").

A deeper run: ``GMTOOL_PROPERTY_EXAMPLES=2000 pytest tests/test_stud5_properties.py``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st

from gmtool.engine.deck import commitment, shuffle, verify
from gmtool.engine.errors import IllegalAction
from gmtool.engine.events import (
    HOST_VERBS,
    STUD5_VERBS,
    THREE_CARD_VERBS,
    Event,
    inputs_of,
)
from gmtool.engine.games import ranking_for
from gmtool.engine.hand import DeckSource, Hand
from gmtool.engine.play import Action, Seat, replay, seeded_source, start_hand
from gmtool.engine.rankings import deck_for
from gmtool.rules.compile import compile_file

RULES_DIR = Path(__file__).resolve().parent.parent / "rules"
STUD5_PROFILES = ("qq-showhand", "video-showhand", "straight-flush", "lequ-showhand")
NAMES = ("ann", "bob", "carl", "dora")
OUTSIDER = "zed"
WAITS = (1, 5, 14, 15, 16, 60, 179, 180, 200)  # around the 15 s clock and the 3 min window
RULE_ID = re.compile(r"^(?:[SQLHG]\d+|D-\d+)$")
EXAMPLES = int(os.environ.get("GMTOOL_PROPERTY_EXAMPLES", "40"))
PROPERTY = settings(
    max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@cache
def compiled(profile: str) -> dict:
    return compile_file(RULES_DIR / f"{profile}.toml")


@cache
def ranking(profile: str):
    """One ranking per profile, built once (the engine would rebuild it per hand)."""
    return ranking_for(compiled(profile))


def open_tables() -> list[tuple[str, str]]:
    return [
        (profile, tier["id"])
        for profile in STUD5_PROFILES
        for tier in compiled(profile)["tiers"]
        if tier["enabled"]
    ]


TABLES = open_tables()
CAPPED_TABLES = [(p, t) for p, t in TABLES if compiled(p)["betting"]["style"] == "capped"]
TABLE_IDS = [f"{p}/{t}" for p, t in TABLES]
CAPPED_IDS = [f"{p}/{t}" for p, t in CAPPED_TABLES]


def test_every_shipped_stud5_profile_and_open_tier_is_covered() -> None:
    shipped = {
        path.stem for path in RULES_DIR.glob("*.toml") if compiled(path.stem)["game"] == "stud5"
    }
    assert shipped == set(STUD5_PROFILES)
    assert ("lequ-showhand", "table") in TABLES and ("straight-flush", "normal") in TABLES


# ---- a hand and its random play ----------------------------------------------------------


class RecordingSource(DeckSource):
    """A seeded deck that remembers the order its cards left it."""

    def __init__(self, cards) -> None:
        super().__init__(cards)
        self.drawn: list = []

    def draw(self, player: str):
        card = super().draw(player)
        self.drawn.append(card)
        return card

    def deal(self, players):
        cards = super().deal(players)
        self.drawn.extend(cards)
        return cards


@dataclass(frozen=True)
class Setup:
    """Everything a hand starts from: table, seats with coins, banker, hand seed, ante."""

    profile: str
    tier_id: str
    seats: tuple[Seat, ...]
    banker: str
    seed: bytes
    ante: int | None

    @property
    def config(self) -> dict:
        return compiled(self.profile)

    @property
    def tier(self) -> dict:
        return next(t for t in self.config["tiers"] if t["id"] == self.tier_id)

    def start(self, source=None) -> Hand:
        source = source or seeded_source(self.config, self.seed)
        return start_hand(
            self.config,
            self.tier_id,
            list(self.seats),
            self.banker,
            source,
            ante=self.ante,
            ranking=ranking(self.profile),
        )

    def start_recording(self) -> tuple[Hand, RecordingSource]:
        source = RecordingSource(shuffle(deck_for(self.config).cards, self.seed))
        return self.start(source), source


@st.composite
def setups(draw, table: tuple[str, str]) -> Setup:
    profile, tier_id = table
    config = compiled(profile)
    ante = None
    if config["betting"]["style"] == "owner_ante":  # L2/L7: chip clicks; coins >= 200 x ante
        ante = sum(
            draw(st.lists(st.sampled_from(config["owner_ante"]["chips"]), min_size=1, max_size=3))
        )
        low = config["owner_ante"]["min_holding_antes"] * ante
        spread = 3 * low
    else:
        tier = next(t for t in config["tiers"] if t["id"] == tier_id)
        low = tier["min_holding"] if tier["coins"] else 0
        spread = 2 * tier["hand_cap"]
    count = draw(st.integers(2, min(4, config["table"]["seats"])))
    coins = draw(st.lists(st.integers(low, low + spread), min_size=count, max_size=count))
    banker = draw(st.integers(0, count - 1))
    seed = draw(st.binary(min_size=1, max_size=32))
    seats = tuple(Seat(name, amount) for name, amount in zip(NAMES, coins))
    return Setup(profile, tier_id, seats, NAMES[banker], seed, ante)


# A step is (kind, pick, extra): kinds 0-15 a player's choice among the legal actions
# (folding one time in eight, so that hands reach the later streets), 16 `wait N`,
# 17 disconnect or reconnect, 18 a timeout, 19 an escape or a GM kick.
STEPS = st.lists(
    st.tuples(st.integers(0, 19), st.integers(0, 255), st.integers(0, 255)), max_size=40
)


def chosen_action(hand: Hand, step: tuple[int, int, int]) -> Action | None:
    kind, pick, extra = step
    if kind < 16:
        legal = hand.legal_actions()
        stay = [choice for choice in legal if choice.verb != "fold"]
        if not legal:
            return None
        choice = stay[pick // 8 % len(stay)] if stay and pick % 8 else legal[-1]
        amount = None
        if getattr(choice, "amounts", ()):  # a list of allowed amounts instead of a range
            amount = choice.amounts[extra % len(choice.amounts)]
        elif choice.verb in ("bet", "raise"):
            steps = (choice.max_amount - choice.min_amount) // choice.step + 1
            amount = choice.min_amount + extra % steps * choice.step
        return Action(choice.verb, hand.to_act, amount)
    if kind == 16:
        return Action("wait", amount=WAITS[pick % len(WAITS)])
    if kind == 18:
        return Action("timeout", hand.to_act)
    player = hand.order[pick % len(hand.order)]
    if kind == 17:
        return Action("disconnect" if hand.players[player].connected else "reconnect", player)
    return Action("escape" if extra % 2 else "kick", player)


def finishing_action(hand: Hand) -> Action:
    """Check or call to the end (fold only when nothing else is allowed)."""
    legal = {choice.verb: choice for choice in hand.legal_actions()}
    assert legal, f"the hand is not over but nobody may act: to_act={hand.to_act}"
    for verb in ("check", "call", "bet"):
        if verb in legal:
            return Action(verb, hand.to_act, legal[verb].min_amount if verb == "bet" else None)
    return Action("fold", hand.to_act)


def play(
    setup: Setup, steps, hand: Hand | None = None, finish: bool = True, after_each=None
) -> Hand:
    """Apply the steps (skipping inputs `can` refuses), then finish the hand passively."""
    hand = hand or setup.start()
    if after_each:
        after_each(hand)
    for step in steps:
        if hand.is_over:
            break
        action = chosen_action(hand, step)
        if action is None or not hand.can(action):
            continue
        note(str(action))
        hand.apply(action)
        if after_each:
            after_each(hand)
    while finish and not hand.is_over:
        action = finishing_action(hand)
        note(str(action))
        hand.apply(action)
        if after_each:
            after_each(hand)
    return hand


def events_json(events: list[Event]) -> list[dict]:
    return [e.as_json() for e in events]


# ---- settlement (S20) --------------------------------------------------------------------


@pytest.mark.parametrize("table", TABLES, ids=TABLE_IDS)
@PROPERTY
@given(data=st.data(), steps=STEPS)
def test_s20_settlement_sums_to_zero(table, data, steps) -> None:
    """S20: a settlement is a set of ledger entries that sum to zero; every seat has one."""
    setup = data.draw(setups(table))
    hand = play(setup, steps)
    assert hand.settlement is not None
    event(f"ended by {hand.settlement.reason} on street {hand.street}")
    event(f"{len(setup.seats)} players")
    for kind in sorted(
        {e.type for e in hand.events}
        & {"allin", "raise", "disconnect", "window_expired", "timeout", "kick"}
    ):
        event(f"has {kind}")
    assert sum(entry.delta for entry in hand.settlement.entries) == 0
    assert sorted(entry.player for entry in hand.settlement.entries) == sorted(hand.order)
    recorded = [e for e in hand.events if e.type == "settlement"]
    assert len(recorded) == 1 and sum(x["delta"] for x in recorded[0].get("entries")) == 0


@pytest.mark.parametrize("table", TABLES, ids=TABLE_IDS)
@PROPERTY
@given(data=st.data(), steps=STEPS)
def test_s20_no_coins_go_negative(table, data, steps) -> None:
    """S20/D-9: coins at the start of the hand plus the settlement delta are never below 0;
    training rooms (S22) move no coins at all."""
    setup = data.draw(setups(table))
    hand = play(setup, steps)
    for seat in setup.seats:
        delta = hand.settlement.delta(seat.name)
        assert seat.coins + delta >= 0, (seat, delta)
        if not setup.tier.get("coins", True):
            assert delta == 0


# ---- street cap, hand cap, smallest stack (Q1, Q3, Q4, S15, L11, D-7) ---------------------


def money_events(events: list[Event]):
    """(street, all-in so far, event, hand total) for every event that puts chips in."""
    street, allin = 1, False
    for e in events:
        if e.type == "deal":
            street = e.get("street")
        elif e.type == "ante":
            yield street, allin, e, e.get("amount")
        elif e.get("total") is not None and e.type in ("bet", "raise", "call", "allin"):
            allin = allin or e.type == "allin"
            yield street, allin, e, e.get("total")


def street_bound(setup: Setup, street: int, allin: bool) -> int:
    """Q1/D-4: the street's cumulative cap; Q3: all-in from allin_from_street -> hand cap."""
    betting, tier = setup.config["betting"], setup.tier
    cap = tier["street_caps"][max(street, 2) - 2]
    if allin and street >= betting["allin_from_street"] and betting["allin_amount"] == "hand_cap":
        cap = max(cap, tier["hand_cap"])
    return cap


@pytest.mark.parametrize("table", CAPPED_TABLES, ids=CAPPED_IDS)
@PROPERTY
@given(data=st.data(), steps=STEPS)
def test_q1_q4_no_hand_total_passes_the_street_cap(table, data, steps) -> None:
    """Q1/Q4: bets and raises may not take a hand total above the current street's
    cumulative cap (ante included, D-4); Q3: all-in on streets >= 4 brings it to the hand
    cap; S15: all-in only from street 4. Checked after every event."""
    setup = data.draw(setups(table))
    hand = play(setup, steps)
    for street, allin, e, total in money_events(hand.events):
        assert total <= street_bound(setup, street, allin), (street, e.as_json())
        if e.type == "allin":
            assert street >= setup.config["betting"]["allin_from_street"], e.as_json()


@pytest.mark.parametrize("table", CAPPED_TABLES, ids=CAPPED_IDS)
@PROPERTY
@given(data=st.data(), steps=STEPS)
def test_q1_q3_no_hand_total_passes_the_hand_cap(table, data, steps) -> None:
    """Q1: 每局最小注 ... 每局最大注: no player's hand total ever exceeds the hand cap,
    all-in included (Q3)."""
    setup = data.draw(setups(table))
    cap = setup.tier["hand_cap"]

    def within_cap(hand: Hand) -> None:
        for player in hand.players.values():
            assert player.total <= cap, (player.name, player.total, cap)

    hand = play(setup, steps, after_each=within_cap)
    for _, _, e, total in money_events(hand.events):
        assert total <= cap, e.as_json()


@pytest.mark.parametrize("table", TABLES, ids=TABLE_IDS)
@PROPERTY
@given(data=st.data(), steps=STEPS)
def test_d7_no_hand_total_passes_the_smallest_stack(table, data, steps) -> None:
    """L11/D-7: no player's hand total may ever exceed the smallest coin count among the
    players still in the hand, taken at the start of the hand (so no side pot arises and
    nobody can owe more than they hold). Checked after every event."""
    setup = data.draw(setups(table))

    def within_smallest_stack(hand: Hand) -> None:
        live = [p for p in hand.players.values() if not p.folded]
        bound = min(p.coins for p in live)
        for player in hand.players.values():
            assert player.total <= player.coins, (player.name, player.total, player.coins)
        for player in live:
            assert player.total <= bound, (player.name, player.total, bound)

    hand = play(setup, steps, after_each=within_smallest_stack)
    stacks = {name: hand.players[name].coins for name in hand.order}  # training: virtual
    live = set(hand.order)
    for e in hand.events:
        if e.type == "fold":
            live.discard(e.get("player"))
        total = e.get("amount") if e.type == "ante" else e.get("total")
        if e.type in ("ante", "bet", "raise", "call", "allin"):
            assert total <= min(stacks[p] for p in live), e.as_json()


# ---- replay and determinism (docs/architecture.md, "The engine's contract") -------------


@pytest.mark.parametrize("table", TABLES, ids=TABLE_IDS)
@PROPERTY
@given(data=st.data(), steps=STEPS, finish=st.booleans())
def test_replaying_the_recorded_inputs_gives_the_identical_events(
    table, data, steps, finish
) -> None:
    """A hand is a pure function of (config, seats, deck, inputs): applying
    `inputs_of(events)` to a fresh hand from the same setup gives the same event list,
    byte for byte, whether the hand is over or still running."""
    setup = data.draw(setups(table))
    hand = play(setup, steps, finish=finish)
    fresh = setup.start()
    for action in inputs_of(hand.events):
        fresh.apply(action)
    assert events_json(fresh.events) == events_json(hand.events)
    assert events_json(replay(setup.start(), hand.events)) == events_json(hand.events)
    assert fresh.to_act == hand.to_act and fresh.is_over == hand.is_over


@pytest.mark.parametrize("table", TABLES, ids=TABLE_IDS)
@PROPERTY
@given(data=st.data(), other_seed=st.binary(min_size=1, max_size=32))
def test_same_seed_same_deck_different_seed_different_deck(table, data, other_seed) -> None:
    """docs/architecture.md: the card order is derived from the hand seed, so the same seed always
    gives the same deck (and the same deal), and a different seed a different one."""
    setup = data.draw(setups(table))
    config = setup.config
    size = len(deck_for(config).cards)

    def deck_of(seed: bytes) -> list:
        source = seeded_source(config, seed)
        return [source.draw("anyone") for _ in range(size)]

    assert deck_of(setup.seed) == deck_of(setup.seed)
    assert events_json(setup.start().events) == events_json(setup.start().events)
    if other_seed != setup.seed:
        assert deck_of(other_seed) != deck_of(setup.seed)


@pytest.mark.parametrize("table", TABLES, ids=TABLE_IDS)
@PROPERTY
@given(data=st.data(), steps=STEPS, other_seed=st.binary(min_size=1, max_size=32))
def test_revealed_seed_verifies_against_the_commitment(table, data, steps, other_seed) -> None:
    """docs/architecture.md: commitment = sha256(seed) is stored at the start, the seed
    revealed at the end; the cards that left the deck re-derive from it, and another seed
    does not verify."""
    setup = data.draw(setups(table))
    hand, source = setup.start_recording()
    play(setup, steps, hand=hand)
    cards = deck_for(setup.config).cards
    promise = commitment(setup.seed)
    assert source.drawn, "no card was dealt"
    assert verify(setup.seed, promise, cards, source.drawn)
    assert list(source.drawn) == list(shuffle(cards, setup.seed)[: len(source.drawn)])
    if other_seed != setup.seed:
        assert not verify(other_seed, promise, cards, source.drawn)


@pytest.mark.parametrize("table", TABLES, ids=TABLE_IDS)
@PROPERTY
@given(data=st.data(), steps=STEPS)
def test_s10_dealt_cards_are_the_deck_prefix_in_dealing_order(table, data, steps) -> None:
    """S10 and docs/architecture.md: the cards the `deal` events record, read in the order they list
    them, are the first cards of the seed's deck; an auditor holding only the log and the
    revealed seed can then check the deal with deck.verify."""
    setup = data.draw(setups(table))
    hand, source = setup.start_recording()
    play(setup, steps, hand=hand)
    deck = deck_for(setup.config)
    logged = [
        deck.parse_cards(card["card"])[0]
        for e in hand.events
        if e.type == "deal"
        for card in e.get("cards")
    ]
    assert len(logged) == len(source.drawn)
    assert logged == list(shuffle(deck.cards, setup.seed)[: len(logged)]), (
        f"log {deck.format(logged)} != deck {deck.format(source.drawn)}"
    )
    assert verify(setup.seed, commitment(setup.seed), deck.cards, logged)


# ---- illegal actions (the engine's contract: verify, can, do) ------------------


def legal_by_rules(hand: Hand, action: Action) -> bool:
    """An oracle written from RULES S12-S19 and G2, independent of `Hand.can`."""
    if hand.is_over or action.verb not in STUD5_VERBS + HOST_VERBS:
        return False
    if action.player is not None and action.player not in hand.players:
        return False
    if action.verb == "wait":
        return action.amount is not None and action.amount >= 0
    player = hand.players.get(action.player)
    if player is None:
        return False
    if action.verb == "timeout":
        return action.player == hand.to_act and player.connected
    if action.verb == "disconnect":
        return not player.folded and player.connected
    if action.verb == "reconnect":
        return not player.connected
    if action.verb in ("escape", "kick"):
        return not player.folded
    if action.player != hand.to_act:
        return False
    legal = {choice.verb: choice for choice in hand.legal_actions()}
    choice = legal.get(action.verb)
    if choice is None:
        return False
    if action.verb in ("bet", "raise"):
        amount = action.amount
        return (
            amount is not None
            and choice.min_amount <= amount <= choice.max_amount
            and (amount - choice.min_amount) % choice.step == 0
        )
    return True


def amounts_to_try(hand: Hand, verb: str) -> list[int | None]:
    near = [None, -1, 0, 1, 10**9]
    for choice in hand.legal_actions():
        if choice.verb == verb and choice.min_amount is not None:
            near += [
                choice.min_amount - 1,
                choice.min_amount + 1,
                choice.max_amount + 1,
                choice.max_amount + choice.step,
                choice.min_amount - choice.step,
            ]
    return near


def candidate_actions(hand: Hand, players) -> list[Action]:
    """Every verb (a few foreign ones too) for each player, with amounts near the bounds."""
    verbs = STUD5_VERBS + HOST_VERBS + THREE_CARD_VERBS[:2] + ("dance",)
    return [
        Action(verb, player, amount)
        for verb in verbs
        for player in ([None] if verb == "wait" else players)
        for amount in amounts_to_try(hand, verb)
    ]


def illegal_candidates(hand: Hand, players) -> list[Action]:
    return [
        action for action in candidate_actions(hand, players) if not legal_by_rules(hand, action)
    ]


def snapshot(hand: Hand) -> tuple:
    return (
        events_json(hand.events),
        [c.as_json() for c in hand.legal_actions()],
        hand.to_act,
        [repr(hand.players[name]) for name in hand.order],
        hand.pot,
        hand.is_over,
    )


@pytest.mark.parametrize("table", TABLES, ids=TABLE_IDS)
@PROPERTY
@given(data=st.data(), steps=STEPS, finish=st.booleans())
def test_illegal_action_raises_with_a_rule_and_changes_nothing(table, data, steps, finish) -> None:
    """docs/architecture.md: an illegal action raises a typed error naming the rule id (S13,
    Q4, L9 ...) and leaves the state unchanged: same events, same legal actions, same player to act.
    Every illegal candidate (each verb for each seated player and an outsider, amounts
    around the bounds) is tried at the point the random play stopped."""
    setup = data.draw(setups(table))
    hand = play(setup, steps, finish=finish)
    before = snapshot(hand)
    for action in illegal_candidates(hand, list(hand.order) + [OUTSIDER]):
        with pytest.raises(IllegalAction) as refused:
            hand.apply(action)
        assert RULE_ID.match(refused.value.rule), (action, refused.value.rule)
        assert snapshot(hand) == before, action


@pytest.mark.parametrize("table", TABLES, ids=TABLE_IDS)
@PROPERTY
@given(data=st.data(), steps=STEPS, finish=st.booleans())
def test_can_agrees_with_the_rules_and_with_apply(table, data, steps, finish) -> None:
    """verify/can/do: `can` (for menus and bots) is True exactly when the rules
    allow the input, for every verb of every seated player; `apply` refuses the rest."""
    setup = data.draw(setups(table))
    hand = play(setup, steps, finish=finish)
    for action in candidate_actions(hand, list(hand.order)):
        allowed = legal_by_rules(hand, action)
        assert hand.can(action) is allowed, action
        if not allowed:
            with pytest.raises(IllegalAction):
                hand.apply(action)


@pytest.mark.parametrize("table", TABLES, ids=TABLE_IDS)
@PROPERTY
@given(data=st.data(), steps=STEPS)
def test_s13_the_entry_of_one_verb_is_that_verbs_entry_in_the_legal_list(
    table, data, steps
) -> None:
    """What `apply` checks an action against (`Limits.entry`, one verb) is exactly the
    entry of that verb in `legal_actions` (the whole list), in every state of a hand."""

    def same_entries(hand: Hand) -> None:
        if hand.to_act is None:
            return
        listed = {choice.verb: choice for choice in hand.legal_actions()}
        player = hand.players[hand.to_act]
        for verb in STUD5_VERBS:
            assert hand.limits.entry(hand, player, verb) == listed.get(verb), verb

    play(data.draw(setups(table)), steps, after_each=same_entries)


@pytest.mark.parametrize("player", [OUTSIDER, None], ids=["unseated", "no-player"])
def test_s8_host_input_for_an_unseated_or_missing_player_is_refused(player) -> None:
    """S8: only seated players take part in a hand. A host input naming someone who is
    not seated (or nobody) is refused: `can` answers False and `apply` raises
    IllegalAction naming a rule, on every table, for every player and host verb."""
    problems = []
    for profile, tier_id in [("qq-showhand", "junior"), ("lequ-showhand", "table")]:
        low = compiled(profile)["owner_ante"]["min_holding_antes"] if tier_id == "table" else 1000
        setup = Setup(
            profile,
            tier_id,
            (Seat("ann", low), Seat("bob", low)),
            "ann",
            b"s8",
            1 if tier_id == "table" else None,
        )
        for verb in STUD5_VERBS + tuple(v for v in HOST_VERBS if v != "wait"):
            hand = setup.start()
            action = Action(verb, player, 100 if verb in ("bet", "raise") else None)
            try:
                if hand.can(action):
                    problems.append(f"{profile}: can({action}) is True")
            except Exception as error:  # noqa: BLE001 - the finding is which error escapes
                problems.append(f"{profile}: can({verb}, {player!r}) raised {error!r}")
            try:
                hand.apply(action)
                problems.append(f"{profile}: apply({verb}, {player!r}) was accepted")
            except IllegalAction as refused:
                assert RULE_ID.match(refused.rule)
            except Exception as error:  # noqa: BLE001
                problems.append(f"{profile}: apply({verb}, {player!r}) raised {error!r}")
    assert not problems, "\n".join(problems)
