"""Running a scenario through the engine and checking its `[expect]` table."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gmtool.engine.config import engine_config
from gmtool.engine.errors import IllegalAction, SetupError
from gmtool.engine.events import Action, ActionSyntaxError, Event
from gmtool.engine.games import game_of
from gmtool.sandbox.scenario import Scenario, ScenarioError


@dataclass
class Outcome:
    """What happened when a scenario ran: events, settlement, or the illegal action."""

    scenario: Scenario
    config: dict
    events: list[Event] = field(default_factory=list)
    settlement: Any = None
    error: IllegalAction | SetupError | None = None
    error_action: str | None = None
    actions_run: int = 0
    state: Any = None  # the hand (or owner table) at the end

    @property
    def winners(self) -> list[str]:
        return list(self.settlement.winners) if self.settlement else []

    def deltas(self) -> dict[str, int]:
        if not self.settlement:
            return {}
        out: dict[str, int] = {}
        for entry in self.settlement.entries:
            out[entry.player] = out.get(entry.player, 0) + entry.delta
        return out

    def as_json(self) -> dict:
        winners = self.winners
        return {
            "scenario": str(self.scenario.path),
            "winner": winners[0] if len(winners) == 1 else (winners or None),
            "settlement": self.deltas(),
            "events": [e.as_json() for e in self.events],
            "error": None
            if self.error is None
            else {"rule": self.error.rule, "action": self.error_action, "message": str(self.error)},
        }


def play(scenario: Scenario) -> Outcome:
    """Run the scenario to its end, or to its first illegal action."""
    config = scenario_config(scenario)
    spec = engine_config(config)
    if game_of(spec).owner_table(spec) and scenario.ante is None:
        return play_owner_table(scenario, config)
    outcome = Outcome(scenario, config)
    try:
        hand = _start(scenario, config)
    except SetupError as error:
        outcome.error, outcome.error_action = error, "(start of the hand)"
        return outcome
    outcome.state = hand
    return drive(hand, scenario, outcome)


def scenario_config(scenario: Scenario) -> dict:
    """The scenario's profile compiled, with its `set` edits made first (checked together
    as `gmtool rules set` checks its pairs: edits that make the profile invalid are refused)."""
    from gmtool.rules.compile import compile_file, compile_text

    if not scenario.edits:
        return compile_file(scenario.profile_path)
    from gmtool.rules.edit import InvalidEdit, KeyPathError, set_values
    from gmtool.rules.validate import ProfileFileError, read_profile_bytes

    try:
        text = set_values(
            read_profile_bytes(scenario.profile_path).decode("utf-8"),
            scenario.edits,
            str(scenario.profile_path),
        )
    except ProfileFileError as error:  # the profile itself: missing or unreadable (exit 2)
        raise ProfileFileError(f"{scenario.path}: set: {error}") from None
    except (UnicodeDecodeError, KeyPathError) as error:
        raise ScenarioError(f"{scenario.path}: set: {error}") from None
    except InvalidEdit as error:
        details = "; ".join(str(finding) for finding in error.findings)
        raise ScenarioError(f"{scenario.path}: set: {error}: {details}") from None
    return compile_text(text, str(scenario.profile_path))


def drive(state, scenario: Scenario, outcome: Outcome) -> Outcome:
    """Apply the scenario's actions to a hand or table until the end or the first refusal."""
    for text in scenario.actions:
        try:
            action = Action.parse(text)
        except ActionSyntaxError as error:
            raise ScenarioError(f"{scenario.path}: {error}") from None
        try:
            state.apply(action)
        except (IllegalAction, SetupError) as error:
            outcome.error, outcome.error_action = error, text
            break
        outcome.actions_run += 1
    outcome.events = list(state.events)
    outcome.settlement = state.settlement
    return outcome


def _start(scenario: Scenario, config: dict):
    from gmtool.engine.hand import Seat
    from gmtool.engine.play import fixed_source, seeded_source, start_hand

    tier = pick_tier(scenario, config)
    seats = [
        Seat(p.name, p.coins if p.coins is not None else default_coins(config, tier, scenario.ante))
        for p in scenario.players
    ]
    if scenario.seed is not None:
        source = seeded_source(config, scenario.seed.encode("utf-8"))
    elif all(p.cards for p in scenario.players):
        if any(len(p.cards) > 1 for p in scenario.players):
            raise ScenarioError(
                f"{scenario.path}: cards for several hands need an owner "
                "table (an owner-ante profile without `ante`)"
            )
        source = fixed_cards(scenario, config, fixed_source)
    else:
        raise ScenarioError(f"{scenario.path}: give a seed or every player's cards")
    banker = scenario.banker or scenario.players[0].name
    return start_hand(config, tier["id"], seats, banker, source, ante=scenario.ante)


def fixed_cards(scenario: Scenario, config: dict, fixed_source, hand: int = 1):
    """The card source of hand number `hand` from the players' `cards` (hole card first)."""
    from gmtool.engine.cards import CardError

    try:
        return fixed_source(
            config, {p.name: p.cards_for(hand) for p in scenario.players if p.cards_for(hand)}
        )
    except CardError as error:
        raise ScenarioError(f"{scenario.path}: {error}") from None


def pick_tier(scenario: Scenario, config: dict) -> dict:
    tiers = config["tiers"]
    if scenario.tier is None:
        enabled = [t for t in tiers if t["enabled"]]
        return enabled[0] if enabled else tiers[0]
    for tier in tiers:
        if tier["id"] == scenario.tier:
            return tier
    raise ScenarioError(
        f"{scenario.path}: no tier {scenario.tier!r} in the profile "
        f"(tiers: {', '.join(t['id'] for t in tiers)})"
    )


def default_coins(config: dict, tier: dict, ante: int | None) -> int:
    """Coins of a player the scenario gives none: ten times what the room requires."""
    spec = engine_config(config)
    return game_of(spec).scenario_coins(spec, spec.tier(tier["id"]), ante)


def play_owner_table(scenario: Scenario, config: dict) -> Outcome:
    """An owner-ante table scenario (RULES L1-L8): players join in the listed order."""
    from gmtool.engine.owner_table import OwnerTable
    from gmtool.engine.play import fixed_source, seeded_source

    tier = pick_tier(scenario, config)
    seed = (scenario.seed or scenario.path.name).encode("utf-8")

    fixed = all(p.cards for p in scenario.players)
    hands_given = max((len(p.cards) for p in scenario.players), default=0)

    def deal(hand_number: int):
        if not fixed:
            return seeded_source(config, seed + b":hand:" + str(hand_number).encode())
        if hand_number > hands_given:
            raise SetupError(
                "S10",
                f"the scenario gives cards for {hands_given} hand(s); hand {hand_number} has none",
            )
        return fixed_cards(scenario, config, fixed_source, hand_number)

    table = OwnerTable(config, tier["id"], seed, deal)
    outcome = Outcome(scenario, config, state=table)
    if fixed:
        try:  # unknown cards are a scenario error, a card dealt twice breaks S1: both up front
            for hand_number in range(1, hands_given + 1):
                fixed_cards(scenario, config, fixed_source, hand_number)
        except SetupError as error:
            outcome.error, outcome.error_action = error, "(start of the hand)"
            return outcome
    for player in scenario.players:
        try:
            table.join(
                player.name,
                player.coins if player.coins is not None else default_coins(config, tier, 1),
            )
        except (IllegalAction, SetupError) as error:  # S8: no free seat
            outcome.error, outcome.error_action = error, f"{player.name} join"
            outcome.events = list(table.events)
            return outcome
    return drive(table, scenario, outcome)
