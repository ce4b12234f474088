"""Who may sit down in a room, decided once for every driver (RULES Q1, Q5, Q6, S21, S22, L7, H3).

The host asks it before seating a bot, the hands ask it before dealing, the sandbox asks
it for a scenario's default coins, and `rules show` prints it: one answer everywhere.
What differs by game is the registry's (engine/games.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from gmtool.engine.config import Compiled, EngineConfig, Tier, engine_config
from gmtool.engine.errors import SetupError
from gmtool.engine.games import game_of


def find_tier(config: Compiled | EngineConfig, tier_id: str) -> Tier:
    """The tier (room) `tier_id` of a config; SetupError naming the rooms if there is none."""
    spec = engine_config(config)
    tier = spec.tier(tier_id)
    if tier is None:
        raise SetupError(
            game_of(spec).room_rule,
            f"no room {tier_id!r} (rooms: {', '.join(t.id for t in spec.tiers)})",
        )
    return tier


def open_tier(config: Compiled | EngineConfig, tier_id: str) -> Tier:
    """`find_tier`, refused when the room is closed (Q6: a disabled tier seats nobody)."""
    tier = find_tier(config, tier_id)
    if not tier.enabled:
        raise SetupError(
            game_of(engine_config(config)).room_rule, f"room {tier_id!r} is closed and seats nobody"
        )
    return tier


def coins_to_sit(config: Compiled | EngineConfig, tier_id: str, ante: int | None = None) -> int:
    """The coins a player needs to sit down in a room.

    Training rooms (S22) need none: no coins move. An owner-ante table needs
    `min_holding_antes` x the ante in force (L7); a capped tier its minimum holding (Q1,
    which Q5 keeps at or above the hand cap); a three-card room its minimum holding and
    at least the ante plus one follow at the cap (H12, D-11).
    """
    spec = engine_config(config)
    return seat_need(spec, find_tier(spec, tier_id), ante)


def seat_need(spec: EngineConfig, tier: Tier, ante: int | None = None) -> int:
    """`coins_to_sit` of a tier already found (a hand asks at its start)."""
    return game_of(spec).coins_to_sit(spec, tier, ante) if tier.coins else 0


def enough_players(config: Compiled | EngineConfig, count: int) -> bool:
    """S9, L5: whether `count` players (seated, agreed or ready) may start a hand."""
    return count >= engine_config(config).table.min_players


def first_banker(
    config: Compiled | EngineConfig,
    players: Sequence[str],
    owner: str | None = None,
    previous_winner: str | None = None,
) -> str:
    """Who is banker (stud5) or dealer (three-card) of a hand (S11, L8, H2).

    The previous hand's winner while still playing; else, with `table.first_banker =
    "owner"`, the table's owner (seed 000 L8, seed 002 H2); else the first player seated
    (seeds 001, 003, 004). A room without an owner (the host's capped and three-card
    rooms) counts the first player seated, who opened it, as its owner.
    """
    if previous_winner in players:
        return previous_winner  # type: ignore[return-value]  # one of `players`
    if engine_config(config).table.first_banker == "owner" and owner in players:
        return owner  # type: ignore[return-value]  # one of `players`
    return players[0]


def sit_rule(config: Compiled | EngineConfig) -> str:
    """The rule a player below `coins_to_sit` breaks."""
    spec = engine_config(config)
    return game_of(spec).sit_rule(spec)


def check_holdings(
    config: Compiled | EngineConfig,
    tier_id: str,
    coins: Mapping[str, int],
    ante: int | None = None,
    need: int | None = None,
    rule: str | None = None,
) -> None:
    """SetupError unless every player holds the coins to sit (`coins`: player -> coins);
    `need` and `rule` replace today's answer for hands of earlier engines."""
    if need is None:
        need = coins_to_sit(config, tier_id, ante)
    for name, held in coins.items():
        if held < need:
            raise SetupError(
                rule or sit_rule(config),
                f"{name} holds {held}, below the {need} this room needs to sit",
            )
