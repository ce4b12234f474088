"""The engine's configuration: a compiled profile as frozen, typed records (RULES G4).

`gmtool rules compile` writes a profile as canonical JSON: what the store keeps, and
what `config_id` hashes. The engine reads that JSON once into an `EngineConfig` (cached
by config id), whose records carry the same names as the JSON keys (`config.timeouts.
action_s` is `timeouts.action_s` of the profile). Sections a game does not use are None.
What differs between games is not here but in the registry (engine/games.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import Field, dataclass, field, fields
from types import MappingProxyType
from typing import Any, ClassVar, Protocol, TypeVar, overload

from gmtool.engine.errors import SetupError

Compiled = Mapping[str, Any]  # a compiled profile as the store keeps it (its JSON, read)


class _Dataclass(Protocol):
    """A dataclass, as `dataclasses.fields` takes it: the records below."""

    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]


_Record = TypeVar("_Record", bound=_Dataclass)


@dataclass(frozen=True, slots=True)
class ProfileSpec:
    id: str
    title: str
    version: int
    game: str


@dataclass(frozen=True, slots=True)
class DeckSpec:
    ranks: tuple[str, ...]
    suits: tuple[str, ...]
    cards: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RankingSpec:
    categories: tuple[str, ...]
    tie_break: str | None = None  # stud5 (S6)
    wrap_straights: bool = False  # stud5 (S4)
    low_ace_straight: bool = True  # three-card (H9)


@dataclass(frozen=True, slots=True)
class TableSpec:
    seats: int
    min_players: int
    first_banker: str


@dataclass(frozen=True, slots=True)
class Timeouts:
    action_s: int
    continue_s: int
    reconnect_min: int
    set_ante_s: int | None = None  # owner-ante table (L4)
    start_countdown_s: int | None = None  # owner-ante table (L5)


@dataclass(frozen=True, slots=True)
class Betting:
    escape_policy: str
    style: str | None = None  # stud5: "capped" | "owner_ante"
    allin_from_street: int | None = None
    allin_amount: str | None = None
    raises_per_street: int | None = None
    raise_chips: tuple[int, ...] | None = None  # owner-ante (L10)
    raise_chip_unit: str = "coin"  # owner-ante (L10): "ante" | "coin" (compiled before it: coin)
    open_min_antes: int | None = None  # owner-ante (L9)


@dataclass(frozen=True, slots=True)
class Scoring:
    """Score changes by result in training rooms (S22)."""

    win: int
    loss: int
    draw: int
    escape: int
    disconnect: int

    def of(self, result: str) -> int:
        return getattr(self, result, 0)


@dataclass(frozen=True, slots=True)
class OwnerAnteSpec:
    chips: tuple[int, ...]
    max_divisor: int
    min_holding_antes: int


@dataclass(frozen=True, slots=True)
class ThreeCardSpec:
    buy_multiplier: int
    open_cost: Mapping[str, int]
    max_rounds: int


@dataclass(frozen=True, slots=True)
class Title:
    title: str
    at: int


@dataclass(frozen=True, slots=True)
class Ladder:
    metric: str
    titles: tuple[Title, ...]


@dataclass(frozen=True, slots=True)
class Tier:
    id: str
    title: str
    enabled: bool = True
    coins: bool = True
    ante: int | None = None  # capped, three-card (an owner sets it at an owner table)
    bet_unit: int | None = None  # capped
    street_caps: tuple[int, ...] | None = None  # capped
    hand_cap: int | None = None  # capped
    min_holding: int = 0  # capped, three-card
    cap: int | None = None  # three-card
    blind_follows_blind: tuple[int, ...] | None = None  # three-card (H5)
    seen_follows_seen: tuple[int, ...] | None = None
    blind_follows_seen: tuple[int, ...] | None = None
    seen_follows_blind: tuple[int, ...] | None = None


@dataclass(frozen=True)
class EngineConfig:
    """A compiled profile as the engine reads it. `compiled` is the JSON form it came from."""

    game: str
    config_id: str | None
    schema_version: int
    profile: ProfileSpec
    deck: DeckSpec
    ranking: RankingSpec
    table: TableSpec
    timeouts: Timeouts
    betting: Betting
    tiers: tuple[Tier, ...]
    scoring: Scoring | None = None
    owner_ante: OwnerAnteSpec | None = None
    three_card: ThreeCardSpec | None = None
    ladder: Ladder | None = None
    compiled: Compiled = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, compiled: Compiled) -> EngineConfig:
        """The typed form of a compiled config (SetupError naming G4 if it is malformed)."""
        try:
            return cls(
                game=compiled["game"],
                config_id=compiled.get("config_id"),
                schema_version=compiled.get("schema_version", 1),
                profile=_record(ProfileSpec, compiled["profile"]),
                deck=_record(DeckSpec, compiled["deck"]),
                ranking=_record(RankingSpec, compiled["ranking"]),
                table=_record(TableSpec, compiled["table"]),
                timeouts=_record(Timeouts, compiled["timeouts"]),
                betting=_record(Betting, compiled["betting"]),
                tiers=tuple(_record(Tier, tier) for tier in compiled["tiers"]),
                scoring=_record(Scoring, compiled.get("scoring")),
                owner_ante=_record(OwnerAnteSpec, compiled.get("owner_ante")),
                three_card=_record(ThreeCardSpec, compiled.get("three_card")),
                ladder=_ladder(compiled.get("ladder")),
                compiled=compiled,
            )
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise SetupError("G4", f"the compiled configuration is malformed: {error!r}") from None

    def tier(self, tier_id: str) -> Tier | None:
        for tier in self.tiers:
            if tier.id == tier_id:
                return tier
        return None


@overload
def _record(cls: type[_Record], values: Compiled) -> _Record: ...
@overload
def _record(cls: type[_Record], values: None) -> None: ...


def _record(cls: type[_Record], values: Compiled | None) -> _Record | None:
    """`cls` from a JSON object: its keys by field name, lists as tuples, objects read only."""
    if values is None:
        return None
    names = {f.name for f in fields(cls)}
    unknown = set(values) - names
    if unknown:
        raise ValueError(f"{cls.__name__} has no {', '.join(sorted(unknown))}")
    return cls(**{key: _frozen(value) for key, value in values.items()})


def _frozen(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_frozen(item) for item in value)
    if isinstance(value, dict):
        return MappingProxyType({key: _frozen(item) for key, item in value.items()})
    return value


def _ladder(values: Compiled | None) -> Ladder | None:
    if values is None:
        return None
    return Ladder(values["metric"], tuple(_record(Title, step) for step in values["titles"]))


def engine_config(config: Compiled | EngineConfig) -> EngineConfig:
    """The typed form of `config` (built once per config id and content); a typed one as
    it is. Drivers may pass either: the host and audit keep compiled dicts by id. A
    compiled dict is never changed once made (its id is its content's hash), so the
    same dict object is answered from a cache without comparing it again."""
    if type(config) is EngineConfig:  # the common case, before the slower ABC check
        return config
    seen = _BY_OBJECT.get(id(config))
    if seen is not None and seen[0] is config:  # this very dict again: no comparison
        return seen[1]
    if not isinstance(config, Mapping):
        return config
    config_id = config.get("config_id")
    if config_id is None:
        return EngineConfig.of(config)
    cached = _BY_ID.get(config_id)
    if cached is None or cached.compiled is not config and cached.compiled != config:
        cached = _BY_ID[config_id] = EngineConfig.of(config)
        if len(_BY_ID) > 256:
            _BY_ID.pop(next(iter(_BY_ID)))
    _BY_OBJECT[id(config)] = (config, cached)  # (the dict is kept, so its id stays its own)
    if len(_BY_OBJECT) > 256:
        _BY_OBJECT.pop(next(iter(_BY_OBJECT)))
    return cached


_BY_ID: dict[str, EngineConfig] = {}
_BY_OBJECT: dict[int, tuple[Compiled, EngineConfig]] = {}  # id(compiled dict) -> (it, typed)
