"""Running an owner-ante table scenario (RULES L1-L8): players join in the listed order."""

from __future__ import annotations

from gmtool.engine.errors import IllegalAction, SetupError
from gmtool.engine.events import Action, ActionSyntaxError
from gmtool.sandbox.run import Outcome, default_coins, pick_tier
from gmtool.sandbox.scenario import Scenario, ScenarioError


def play_owner_table(scenario: Scenario, config: dict) -> Outcome:
    from gmtool.engine.owner_table import OwnerTable
    from gmtool.engine.play import fixed_source, seeded_source

    tier = pick_tier(scenario, config)
    seed = (scenario.seed or scenario.path.name).encode("utf-8")

    def deal(hand_number: int):
        if all(p.cards for p in scenario.players):
            if hand_number > 1:
                raise SetupError("S10", "a scenario with fixed cards plays one hand; use a seed")
            return fixed_source(config, {p.name: p.cards for p in scenario.players})
        return seeded_source(config, seed + b":hand:" + str(hand_number).encode())

    table = OwnerTable(config, tier["id"], seed, deal)
    outcome = Outcome(scenario, config, state=table)
    for player in scenario.players:
        table.join(player.name, player.coins if player.coins is not None
                   else default_coins(config, tier, 1))
    for text in scenario.actions:
        try:
            action = Action.parse(text)
        except ActionSyntaxError as error:
            raise ScenarioError(f"{scenario.path}: {error}") from None
        try:
            table.apply(action)
        except (IllegalAction, SetupError) as error:
            outcome.error, outcome.error_action = error, text
            break
        outcome.actions_run += 1
    outcome.events = list(table.events)
    outcome.settlement = table.settlement
    return outcome
