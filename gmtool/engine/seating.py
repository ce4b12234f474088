"""Who may sit down in a room, decided once for every driver (RULES Q1, Q5, Q6, S21, S22, L7, H3).

The host asks it before seating a bot, the hands ask it before dealing, the sandbox asks
it for a scenario's default coins, and `rules show` prints it: one answer everywhere.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from gmtool.engine.errors import SetupError


def find_tier(config: Mapping, tier_id: str) -> Mapping:
    """The tier (room) `tier_id` of a compiled config; SetupError naming the tiers if none."""
    for tier in config["tiers"]:
        if tier["id"] == tier_id:
            return tier
    rule = "H3" if config["game"] == "three-card" else "Q6"
    raise SetupError(rule, f"no room {tier_id!r} (rooms: "
                     f"{', '.join(t['id'] for t in config['tiers'])})")


def open_tier(config: Mapping, tier_id: str) -> Mapping:
    """`find_tier`, refused when the room is closed (Q6: a disabled tier seats nobody)."""
    tier = find_tier(config, tier_id)
    if not tier.get("enabled", True):
        rule = "H3" if config["game"] == "three-card" else "Q6"
        raise SetupError(rule, f"room {tier_id!r} is closed and seats nobody")
    return tier


def coins_to_sit(config: Mapping, tier_id: str, ante: int | None = None) -> int:
    """The coins a player needs to sit down in a room.

    Training rooms (S22) need none: no coins move. An owner-ante table needs
    `min_holding_antes` x the ante in force (L7); a capped tier its minimum holding (Q1,
    which Q5 keeps at or above the hand cap); a three-card room its minimum holding and
    at least the ante the system posts for everyone (H3).
    """
    tier = find_tier(config, tier_id)
    if not tier.get("coins", True):
        return 0
    if config["game"] == "three-card":
        return max(tier["ante"], tier.get("min_holding") or 0)
    if config["betting"]["style"] == "owner_ante":
        return config["owner_ante"]["min_holding_antes"] * max(ante or 1, 1)
    return tier.get("min_holding") or 0


def enough_players(config: Mapping, count: int) -> bool:
    """S9, L5: whether `count` players (seated, agreed or ready) may start a hand."""
    return count >= config["table"]["min_players"]


def first_banker(config: Mapping, players: Sequence[str], owner: str | None = None,
                 previous_winner: str | None = None) -> str:
    """Who is banker (stud5) or dealer (three-card) of a hand (S11, L8, H2).

    The previous hand's winner while still playing; else, with `table.first_banker =
    "owner"`, the table's owner (seed 000 L8, seed 002 H2); else the first player seated
    (seeds 001, 003, 004). A room without an owner (the host's capped and three-card
    rooms) counts the first player seated, who opened it, as its owner.
    """
    if previous_winner in players:
        return previous_winner
    if config["table"]["first_banker"] == "owner" and owner in players:
        return owner
    return players[0]


def sit_rule(config: Mapping) -> str:
    """The rule a player below `coins_to_sit` breaks."""
    if config["game"] == "three-card":
        return "H3"
    return "L7" if config["betting"]["style"] == "owner_ante" else "Q1"


def check_holdings(config: Mapping, tier_id: str, coins: Mapping[str, int],
                   ante: int | None = None) -> None:
    """SetupError unless every player holds the coins to sit (`coins`: player -> coins)."""
    need = coins_to_sit(config, tier_id, ante)
    for name, held in coins.items():
        if held < need:
            raise SetupError(sit_rule(config), f"{name} holds {held}, below the {need} "
                             "this room needs to sit")
