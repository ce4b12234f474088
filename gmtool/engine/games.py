"""What differs between the game systems, in one place: the registry every caller asks.

Two engine families play the five seed systems: five-card stud (seeds 000, 001, 003,
004) and three-card (seed 002). Everything a driver (host, sandbox, audit, console)
needs to know that depends on the family is a method of its `Game`: cards per player,
the ranking, who may sit, which rule a refusal names, whether a room is played as an
owner table. Callers never compare game names: they ask `game_of`. The hand class of
each game is `engine/play.py`'s (this module knows no hand). A sixth system is a profile
(data) and, at most, one new class here and one hand class.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

from gmtool.engine.config import Compiled, EngineConfig, OwnerAnteSpec, Tier, engine_config
from gmtool.engine.errors import SetupError
from gmtool.engine.rankings import Ranking, stud5_ranking, three_card_ranking

if TYPE_CHECKING:
    from gmtool.engine.ranking import Stud5Ranking
    from gmtool.engine.ranking3 import ThreeCardRanking


class Game(ABC):
    """One engine family; subclasses fill in what differs."""

    name = ""
    cards_each = 0
    seat_rule = ""  # the rule of seats and players (S8, H1)
    room_rule = ""  # the rule of rooms: no such room, a closed one (Q6, H3)
    blind_until_look = False  # a player sees their face-down cards only once they look (H4)

    @abstractmethod
    def ranking(self, config: EngineConfig) -> Ranking:
        """The hand ranking of the config (shared by configs that rank alike)."""

    def owner_table(self, config: EngineConfig) -> bool:
        """Whether rooms are owner tables (seed 000: owner, ante, agreement) rather than
        rooms of independent hands."""
        return False

    def coins_to_sit(self, config: EngineConfig, tier: Tier, ante: int | None) -> int:
        """Coins to sit in a room that plays for coins (training rooms need none)."""
        return tier.min_holding or 0

    def sit_rule(self, config: EngineConfig) -> str:
        return self.room_rule

    def scenario_coins(self, config: EngineConfig, tier: Tier, ante: int | None) -> int:
        """What a scenario player holds when the scenario gives no coins: ten times what
        the room requires (the sandbox's default)."""
        return max(tier.min_holding or 0, tier.hand_cap or 0, (tier.cap or 0) * 10, 100) * 10


class Stud5(Game):
    name = "stud5"
    cards_each = 5
    seat_rule = "S8"
    room_rule = "Q6"

    def ranking(self, config: EngineConfig) -> Stud5Ranking:
        return stud5_ranking(config)

    def owner_table(self, config: EngineConfig) -> bool:
        return config.betting.style == "owner_ante"

    def coins_to_sit(self, config: EngineConfig, tier: Tier, ante: int | None) -> int:
        if self.owner_table(config):  # L7: min_holding_antes x the ante in force
            return _owner_ante(config).min_holding_antes * max(ante or 1, 1)
        return super().coins_to_sit(config, tier, ante)  # Q1 (Q5 keeps it >= the hand cap)

    def sit_rule(self, config: EngineConfig) -> str:
        return "L7" if self.owner_table(config) else "Q1"

    def scenario_coins(self, config: EngineConfig, tier: Tier, ante: int | None) -> int:
        if self.owner_table(config):
            return _owner_ante(config).min_holding_antes * (ante or 1) * 10
        return super().scenario_coins(config, tier, ante)


class ThreeCard(Game):
    name = "three-card"
    cards_each = 3
    seat_rule = "H1"
    room_rule = "H3"
    blind_until_look = True

    def ranking(self, config: EngineConfig) -> ThreeCardRanking:
        return three_card_ranking(config)

    def coins_to_sit(self, config: EngineConfig, tier: Tier, ante: int | None) -> int:
        # H12 (D-11): the ante the system posts plus one follow at the cap, whatever a
        # config compiled before the rule says
        return max((tier.ante or 0) + (tier.cap or 0), tier.min_holding or 0)

    def sit_rule(self, config: EngineConfig) -> str:
        return "H12"


def _owner_ante(config: EngineConfig) -> OwnerAnteSpec:
    """The [owner_ante] section, which an owner-table config always has (the compiler's)."""
    return config.owner_ante  # type: ignore[return-value]  # (no call: hot)


GAMES: dict[str, Game] = {game.name: game for game in (Stud5(), ThreeCard())}


def game_of(config: EngineConfig) -> Game:
    """The registry's entry for a config's game (SetupError if there is none)."""
    game = GAMES.get(config.game)
    if game is None:
        raise SetupError("G4", f"no engine plays game {config.game!r} (games: {', '.join(GAMES)})")
    return game


def ranking_for(config: Compiled | EngineConfig) -> Ranking:
    """The hand ranking a compiled profile describes (stud5 or three-card)."""
    spec = engine_config(config)
    return game_of(spec).ranking(spec)
