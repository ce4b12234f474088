"""Scenario files: executable rule tests (rules/scenarios/README.md).

A scenario plays one hand (or, for the owner-ante table, one table from its first
player to the end of its hands) from a profile, players, cards or a seed, and actions,
then checks `[expect]`. `gmtool hands play` runs one; `gmtool rules test` runs them all.
Every key and every `[expect]` key is described in rules/scenarios/README.md.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gmtool.bounds import MAX_COINS, MAX_SECONDS
from gmtool.errors import UsageError

_KEYS = {
    "profile",
    "tier",
    "seed",
    "players",
    "actions",
    "expect",
    "banker",
    "ante",
    "title",
    "rules",
    "description",
    "set",
}
_PLAYER_KEYS = {"name", "coins", "cards"}
EXPECT_KEYS = {
    "winner",
    "winners",
    "settlement",
    "error",
    "reason",
    "results",
    "score",
    "pot",
    "below_minimum",
    "events",
    "first_speakers",
    "legal",
    "to_act",
    "over",
    "owner",
    "ante",
    "seated",
    "removed",
    "messages",
    "hands",
    "street",
    "deal_order",
    "legal_amounts",
    "coins",
    "titles",
    "to_sit",
    "seen",
}


class ScenarioError(UsageError):
    """A scenario file that cannot be run as written (not a rule finding)."""


@dataclass(frozen=True)
class ScenarioPlayer:
    name: str
    coins: int | None
    cards: tuple[str, ...] = ()  # one string per hand (an owner table may play several)

    def cards_for(self, hand: int) -> str:
        """This player's cards in hand number `hand` (1-based); "" when none are given."""
        return self.cards[hand - 1] if hand <= len(self.cards) else ""


@dataclass
class Scenario:
    path: Path
    profile_path: Path
    tier: str | None
    players: list[ScenarioPlayer]
    actions: list[str]
    expect: dict[str, Any]
    seed: str | None = None
    banker: str | None = None
    ante: int | None = None
    title: str = ""
    rules: list[str] = field(default_factory=list)
    edits: dict[str, Any] = field(default_factory=dict)  # `set`: profile key -> value

    @property
    def name(self) -> str:
        return self.path.name


def load_scenario(path: Path) -> Scenario:
    """Read and check the shape of a scenario file; every number in it within its bound
    (gmtool/bounds.py), as a profile's are."""
    from gmtool.rules.validate import ProfileFileError, parse_toml, read_profile_bytes

    if not path.exists():
        raise ScenarioError(f"no such scenario file: {path}")
    try:
        data = parse_toml(read_profile_bytes(path).decode("utf-8"))
    except UnicodeDecodeError as error:
        raise ScenarioError(
            f"{path}: not UTF-8 text (byte {error.start}): a scenario is a TOML file"
        ) from None
    except tomllib.TOMLDecodeError as error:
        raise ScenarioError(f"{path}: not valid TOML: {error}") from None
    except ProfileFileError as error:
        raise ScenarioError(str(error)) from None
    if isinstance(data.get("profile"), dict):
        raise ScenarioError(
            f"{path} is a rule profile, not a scenario: check it with `gmtool "
            "rules validate`, and test it with scenario files that name it "
            '(profile = "path/to/it.toml")'
        )
    unknown = set(data) - _KEYS
    if unknown:
        raise ScenarioError(f"{path}: unknown key(s) {', '.join(sorted(unknown))}")
    if not isinstance(data.get("profile"), str):
        raise ScenarioError(
            f"{path}: 'profile' (path of the profile, relative to the scenario) is required"
        )
    players = []
    for index, player in enumerate(_list(data, "players", path)):
        if (
            not isinstance(player, dict)
            or not isinstance(player.get("name"), str)
            or set(player) - _PLAYER_KEYS
        ):
            raise ScenarioError(
                f'{path}: players[{index}] must be {{ name = "...", coins = N, cards = "..." }}}}'
            )
        coins = player.get("coins")
        if coins is not None:
            _bounded(coins, f"players[{index}].coins", path, 0, MAX_COINS)
        cards = player.get("cards", ())
        if isinstance(cards, str):
            cards = (cards,) if cards.strip() else ()
        if not isinstance(cards, (list, tuple)) or not all(isinstance(c, str) for c in cards):
            raise ScenarioError(
                f"{path}: players[{index}].cards must be a string of cards, "
                "or (owner table) an array with one string per hand"
            )
        players.append(ScenarioPlayer(player["name"], coins, tuple(cards)))
    actions = _list(data, "actions", path, required=False)
    if not all(isinstance(a, str) for a in actions):
        raise ScenarioError(f'{path}: actions must be strings like "ann bet 100"')
    for action in actions:
        _check_action(action, path)
    if data.get("ante") is not None:
        _bounded(data["ante"], "ante", path, 0, MAX_COINS)
    expect = data.get("expect", {})
    if not isinstance(expect, dict) or set(expect) - EXPECT_KEYS:
        raise ScenarioError(
            f"{path}: unknown [expect] key(s) "
            f"{', '.join(sorted(set(expect) - EXPECT_KEYS))}; known: "
            f"{', '.join(sorted(EXPECT_KEYS))}"
        )
    edits = data.get("set", {})
    if not isinstance(edits, dict):
        raise ScenarioError(
            f"{path}: 'set' must be a table of profile keys and values, as "
            '`gmtool rules set` takes them: set = {{ "betting.raise_chips" '
            "= [50, 100] }}"
        )
    for key in ("tier", "seed", "banker", "title", "description"):
        if key in data and not isinstance(data[key], str):
            raise ScenarioError(f"{path}: '{key}' must be text (\"...\")")
    if not isinstance(data.get("rules", []), list) or not all(
        isinstance(rule, str) for rule in data.get("rules", [])
    ):
        raise ScenarioError(f"{path}: 'rules' must be an array of rule ids like [\"S19\"]")
    has_cards = any(p.cards for p in players)
    if has_cards and "seed" in data:
        raise ScenarioError(f"{path}: give either a seed or every player's cards, not both")
    if has_cards and not all(p.cards for p in players):
        raise ScenarioError(f"{path}: every player needs cards (or use a seed)")
    return Scenario(
        path=path,
        profile_path=(path.parent / data["profile"]).resolve(),
        tier=data.get("tier"),
        players=players,
        actions=actions,
        expect=expect,
        seed=data.get("seed"),
        banker=data.get("banker"),
        ante=data.get("ante"),
        title=str(data.get("title", "")),
        rules=list(data.get("rules", [])),
        edits=edits,
    )


def _bounded(value: Any, what: str, path: Path, low: int, high: int) -> None:
    """ScenarioError unless `value` is a whole number from `low` to `high`."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise ScenarioError(f"{path}: {what} must be a whole number")
    if not low <= value <= high:
        raise ScenarioError(
            f"{path}: {what} must be at least {low} and at most {high}, not {value}"
        )


def _check_action(text: str, path: Path) -> None:
    """A scenario line as the engine reads it, its number bounded: an amount of coins by
    MAX_COINS, a wait by MAX_SECONDS. Below zero is left to the engine, which refuses it
    under a rule a scenario may test (G1: time only moves forward)."""
    from gmtool.engine.events import Action, ActionSyntaxError

    try:
        action = Action.parse(text)
    except ActionSyntaxError as error:
        raise ScenarioError(f"{path}: {error}") from None
    if action.amount is not None:
        high = MAX_SECONDS if action.verb == "wait" else MAX_COINS
        _bounded(action.amount, repr(text), path, -high, high)


def _list(data: dict, key: str, path: Path, required: bool = True) -> list:
    value = data.get(key, [] if not required else None)
    if not isinstance(value, list) or (required and not value):
        raise ScenarioError(f"{path}: '{key}' must be a non-empty array")
    return value


def scenario_files(paths: list[str]) -> list[Path]:
    """Scenario files under the given files and folders (profiles are left out); a file
    named on its own is always taken."""
    from gmtool.rules.validate import ProfileFileError, candidate_files

    named = {Path(name) for name in paths}
    try:
        found = candidate_files(paths)
    except ProfileFileError as error:
        raise ScenarioError(str(error)) from None
    return [path for path in found if path in named or _is_scenario(path)]


def _is_scenario(path: Path) -> bool:
    """A scenario names its profile as a string; a file that cannot be read at all is kept,
    so `rules test` reports it as a failure instead of skipping it silently."""
    from gmtool.rules.validate import (
        ProfileFileError,
        is_scenario_data,
        parse_toml,
        read_profile_bytes,
    )

    try:
        return is_scenario_data(parse_toml(read_profile_bytes(path).decode("utf-8")))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, ProfileFileError):
        return True
