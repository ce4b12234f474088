"""Running an owner-ante table scenario (RULES L1-L8): players join in the listed order."""

from __future__ import annotations

from gmtool.engine.errors import IllegalAction, SetupError
from gmtool.sandbox.run import Outcome, default_coins, drive, fixed_cards, pick_tier
from gmtool.sandbox.scenario import Scenario


def play_owner_table(scenario: Scenario, config: dict) -> Outcome:
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
            raise SetupError("S10", f"the scenario gives cards for {hands_given} hand(s); "
                             f"hand {hand_number} has none")
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
            table.join(player.name, player.coins if player.coins is not None
                       else default_coins(config, tier, 1))
        except (IllegalAction, SetupError) as error:  # S8: no free seat
            outcome.error, outcome.error_action = error, f"{player.name} join"
            outcome.events = list(table.events)
            return outcome
    return drive(table, scenario, outcome)
