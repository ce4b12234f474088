"""Every profile key has an effect: the engine reads it, or it is named here as display.

A key that validates and then changes nothing is a defect in itself (`betting.raise_chips`
once was one, and `table.first_banker`). This test compiles every shipped profile into
the engine's typed configuration (engine/config.py, whose fields carry the JSON keys'
names), hands the engine a view of it that records each field it reads, drives every rule
that reads configuration (seating, dealing, betting, escapes, timeouts, the owner table's
phases, training-room scores, titles), and then requires every key of the compiled form
to have been read, except the few that only name or describe things.
"""

from __future__ import annotations

import dataclasses
import functools
import random
from collections.abc import Mapping
from pathlib import Path

import pytest

from gmtool.engine.config import EngineConfig
from gmtool.engine.errors import IllegalAction
from gmtool.engine.events import Action
from gmtool.engine.games import game_of, ranking_for
from gmtool.engine.hand import Seat
from gmtool.engine.owner_table import OwnerTable
from gmtool.engine.play import seeded_source, start_hand
from gmtool.engine.rankings import deck_for
from gmtool.engine.seating import coins_to_sit, enough_players, first_banker
from gmtool.engine.settlement import player_title
from gmtool.rules.compile import compile_file

RULES = Path(__file__).resolve().parent.parent / "rules"
PROFILES = sorted(RULES.glob("*.toml"))

# Keys that name or describe, read by the console and reports, not by any rule.
DISPLAY = {
    "config_id",
    "schema_version",
    "game",
    "profile.id",
    "profile.title",
    "profile.version",
    "profile.game",
    "tiers[].title",
    "deck.cards",
}
# Keys of pace that only the host reads (the engine has no clock): key -> its reader.
HOST = {"timeouts.continue_s": "gmtool/house/hand_table.py"}
ROOT = RULES.parent


class Reading:
    """A view of an engine config, or of one of its records, that records the path of
    every field read (`timeouts.action_s`, `tiers[].ante`); methods run on the view, so
    what they read is recorded too."""

    def __init__(self, value, read: set[str], path: str = "") -> None:
        self._value, self._read, self._path = value, read, path

    def __getattr__(self, name: str):
        value = getattr(self._value, name)
        if callable(value) and not isinstance(value, type):  # a method: run it on the view
            return functools.partial(getattr(type(self._value), name), self)
        path = f"{self._path}.{name}" if self._path else name
        self._read.add(path)
        return _wrap(value, self._read, path)


class ReadingMapping(Mapping):
    """The same for a mapping inside a record (three_card.open_cost)."""

    def __init__(self, data: Mapping, read: set[str], path: str) -> None:
        self._data, self._read, self._path = data, read, path

    def __getitem__(self, key):
        self._read.add(f"{self._path}.{key}")
        return self._data[key]

    def __iter__(self):
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)


def _wrap(value, read: set[str], path: str):
    if dataclasses.is_dataclass(value):
        return Reading(value, read, path)
    if isinstance(value, Mapping):
        return ReadingMapping(value, read, path)
    if isinstance(value, tuple) and value and dataclasses.is_dataclass(value[0]):
        return tuple(Reading(item, read, path + "[]") for item in value)
    return value


def leaf_paths(value, path: str = "") -> set[str]:
    """Every key of the compiled form (tiers as `tiers[].key`); a section that does not
    apply to the profile compiles to null and has no keys."""
    if isinstance(value, Mapping):
        out = set()
        for key, item in value.items():
            if item is not None:
                out |= leaf_paths(item, f"{path}.{key}" if path else key) or {
                    f"{path}.{key}" if path else key
                }
        return out
    if isinstance(value, list) and value and isinstance(value[0], Mapping):
        return set().union(*(leaf_paths(item, path + "[]") for item in value))
    return set()


def play_randomly(hand, rng: random.Random, moves: int = 200) -> None:
    """Legal actions, time and connection news until the hand ends."""
    for _ in range(moves):
        if hand.is_over:
            return
        player = hand.players[hand.to_act]
        if not player.connected:
            hand.apply(Action("reconnect", player.name))
            continue
        roll = rng.random()
        if roll < 0.05:
            hand.apply(Action("wait", amount=rng.choice((5, 20))))
        elif roll < 0.08:
            hand.apply(Action("disconnect", player.name))
        else:
            legal = rng.choice(hand.legal_actions())
            hand.apply(rng.choice(legal.actions(hand.to_act, limit=4)))
    while not hand.is_over:
        hand.apply(
            Action("timeout", hand.to_act)
            if hand.players[hand.to_act].connected
            else Action("wait", amount=10_000)
        )


def drive_hands(config: Mapping, tier: Mapping, rng: random.Random) -> None:
    """Hands of a room ending every way: showdown or folds, an escape, a window run out."""
    names = ["ann", "bob", "carl"]
    assert enough_players(config, len(names))
    need = coins_to_sit(config, tier.id)
    seats = [Seat(name, max(need, 1) * 10) for name in names]
    banker = first_banker(config, names)
    for number in range(40):
        source = seeded_source(config, f"{tier.id}#{number}".encode())
        hand = start_hand(config, tier.id, seats, banker, source, ranking=ranking_for(config))
        if number % 4 == 1:  # an escape
            hand.apply(Action("escape", hand.to_act))
        elif number % 4 == 2:  # a reconnect window runs out
            hand.apply(Action("disconnect", hand.to_act))
            hand.apply(Action("wait", amount=10_000))
        play_randomly(hand, rng)


def drive_owner_table(config: Mapping, tier: Mapping, rng: random.Random) -> None:
    """Every phase of seed 000's table: ante clicks, agreement, countdown, continue."""

    def deal(number: int):
        return seeded_source(config, f"owner#{number}".encode())

    table = OwnerTable(config, tier.id, b"table", deal)
    table.apply(Action("wait", amount=0))
    for name in ("ann", "bob", "carl", "dan"):
        table.join(name, 1_000_000)
    table.apply(Action("wait", amount=1))  # setting_ante: set_ante_s
    table.apply(Action("ante", "ann", amount=config.owner_ante.chips[0]))
    for name in ("bob", "carl", "dan"):
        table.apply(Action("agree", name))  # four agreed: start_countdown_s
    table.apply(Action("wait", amount=1))
    table.apply(Action("start", "ann"))
    table.apply(Action("wait", amount=1))  # the action clock
    table.apply(Action("disconnect", table.hand.to_act))
    table.apply(Action("wait", amount=10_000))  # the reconnect window
    for _ in range(3):
        play_randomly(table.hand, rng)
        table.apply(Action("wait", amount=1))  # continue: continue_s
        for name in list(table.seated):
            if table.phase == "continue":
                try:
                    table.apply(Action("start", name))
                except IllegalAction:
                    pass
        if table.phase != "playing":
            break


@pytest.mark.parametrize("profile", PROFILES, ids=[p.stem for p in PROFILES])
def test_every_profile_key_reaches_the_engine(profile: Path) -> None:
    compiled = compile_file(profile)
    read: set[str] = set()
    config = Reading(EngineConfig.of(compiled), read)
    rng = random.Random(profile.stem)
    deck_for(config)
    ranking_for(config)
    for tier in config.tiers:
        if not tier.enabled:
            coins_to_sit(config, tier.id)
            continue
        if game_of(config).owner_table(config):
            drive_owner_table(config, tier, rng)
        else:
            drive_hands(config, tier, rng)
    for coins in (0, 10**9):
        player_title(coins, coins, config.ladder)
    for key, reader in HOST.items():
        assert f".{key}" in (ROOT / reader).read_text(encoding="utf-8"), (key, reader)
    unread = leaf_paths(compiled) - read - DISPLAY - set(HOST)
    assert not unread, f"{profile.name}: keys that validate but change nothing: {sorted(unread)}"
