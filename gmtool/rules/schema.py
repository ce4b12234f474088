"""The profile format as data: every key, its type, default, range and rule id.

This table is the single source of truth for the format. Validation walks it, the
compiler resolves defaults from it, `gmtool rules schema` turns it into JSON Schema and
the profile reference in docs/ is checked against it, so a key cannot exist in one
place and be missing from another.

Defaults and applicability may depend on the game (`stud5` / `three-card`) and, for
stud5, on the betting style (`capped` / `owner_ante`); both are read from the profile
before anything else is checked.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

from gmtool.bounds import MAX_COINS, MAX_COUNT, MAX_SECONDS, MAX_VERSION

# The compiled form's version. 2 (2026-12-01): `ranking.tie_break = "ranks_then_suit"`
# means seed 000's rule (RULES S6, corrected); configs of version 1 that say it meant what
# is now "all_ranks_then_suit", and keep that meaning (engine/rankings.tie_break_of).
# 3 (2026-12-02): owner-ante configs carry `betting.raise_chip_unit` (L10); configs
# without it counted their raise chips in coins, and keep that meaning (engine/config.py).
SCHEMA_VERSION = 3

STUD5 = "stud5"
THREE_CARD = "three-card"
GAMES = (STUD5, THREE_CARD)
CAPPED = "capped"
OWNER_ANTE = "owner_ante"

STUD5_CATEGORIES = (
    "straight_flush",
    "four_of_a_kind",
    "full_house",
    "flush",
    "straight",
    "three_of_a_kind",
    "two_pair",
    "one_pair",
    "high_card",
)
THREE_CARD_CATEGORIES = ("trips", "straight_flush", "straight", "flush", "pair", "high_card")
CARDS_PER_PLAYER = {STUD5: 5, THREE_CARD: 3}
CATEGORIES = {STUD5: STUD5_CATEGORIES, THREE_CARD: THREE_CARD_CATEGORIES}

ID_PATTERN = r"^[a-z0-9][a-z0-9-]*$"


class Context(NamedTuple):
    """What a profile declares about itself: decides which keys apply and their defaults."""

    game: str | None
    style: str


@dataclass(frozen=True)
class When:
    """A condition on the context, with the words the docs use for it and the same
    condition as JSON Schema on the whole profile (for the published schema's if/then)."""

    text: str
    test: Callable[[Context], bool]
    json: dict[str, Any] | None = None


def _game_is(game: str) -> dict[str, Any]:
    return {
        "required": ["profile"],
        "properties": {"profile": {"required": ["game"], "properties": {"game": {"const": game}}}},
    }


# betting.style absent means capped (its default), which `properties` leaves unconstrained
_STYLE_CAPPED = {"properties": {"betting": {"properties": {"style": {"const": CAPPED}}}}}
_STYLE_OWNER = {
    "required": ["betting"],
    "properties": {
        "betting": {"required": ["style"], "properties": {"style": {"const": OWNER_ANTE}}}
    },
}

ALWAYS = When("", lambda ctx: True)
IS_STUD5 = When('game = "stud5"', lambda ctx: ctx.game == STUD5, _game_is(STUD5))
IS_THREE_CARD = When(
    'game = "three-card"', lambda ctx: ctx.game == THREE_CARD, _game_is(THREE_CARD)
)
IS_CAPPED = When(
    'game = "stud5", betting.style = "capped"',
    lambda ctx: ctx.game == STUD5 and ctx.style == CAPPED,
    {"allOf": [_game_is(STUD5), _STYLE_CAPPED]},
)
IS_OWNER_ANTE = When(
    'game = "stud5", betting.style = "owner_ante"',
    lambda ctx: ctx.game == STUD5 and ctx.style == OWNER_ANTE,
    {"allOf": [_game_is(STUD5), _STYLE_OWNER]},
)
CAPPED_OR_THREE_CARD = When(
    'betting.style = "capped" or three-card',
    lambda ctx: ctx.game == THREE_CARD or ctx.style == CAPPED,
    {"anyOf": [IS_CAPPED.json, IS_THREE_CARD.json]},
)


@dataclass(frozen=True)
class Default:
    """A default value that may depend on the context; `doc` is how the docs show it."""

    resolve: Callable[[Context, dict[str, Any]], Any]
    doc: str


def fixed(value: Any) -> Default:
    return Default(lambda ctx, table: value, _toml_literal(value))


def per_game(stud5: Any, three_card: Any) -> Default:
    return Default(
        lambda ctx, table: three_card if ctx.game == THREE_CARD else stud5,
        f"{_toml_literal(stud5)} (stud5), {_toml_literal(three_card)} (three-card)",
    )


def per_style(capped: Any, owner_ante: Any) -> Default:
    return Default(
        lambda ctx, table: owner_ante if ctx.style == OWNER_ANTE else capped,
        f"{_toml_literal(capped)} (capped), {_toml_literal(owner_ante)} (owner_ante)",
    )


def _toml_literal(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml_literal(v)}" for k, v in value.items()) + " }"
    return str(value)


@dataclass(frozen=True)
class Field:
    """One key of the format (or one element type of an array)."""

    kind: str  # "string" | "integer" | "boolean" | "array" | "table"
    doc: str = ""
    rule: str = ""
    default: Default | None = None
    required: bool = False
    when: When = ALWAYS
    choices: tuple[str, ...] = ()
    minimum: int | None = None
    maximum: int | None = None
    pattern: str | None = None
    items: Field | None = None
    fields: dict[str, Field] = field(default_factory=dict)
    min_items: int | None = None
    max_items: int | None = None
    optional_table: bool = False  # a section that compiles to null when absent
    required_when: When | None = None  # required only in this context

    def applies(self, ctx: Context) -> bool:
        return self.when.test(ctx)

    def is_required(self, ctx: Context) -> bool:
        return self.required or (self.required_when is not None and self.required_when.test(ctx))


def _int(
    doc: str,
    rule: str,
    default: Default | None = None,
    minimum: int | None = 0,
    maximum: int = MAX_COINS,
    when: When = ALWAYS,
    required: bool = False,
) -> Field:
    """An integer key; every one is bounded (gmtool/bounds.py), amounts by MAX_COINS."""
    return Field("integer", doc, rule, default, required, when, minimum=minimum, maximum=maximum)


def _int_list(
    doc: str,
    rule: str,
    default: Default | None = None,
    when: When = ALWAYS,
    required: bool = False,
    min_items: int = 1,
    max_items: int = 100,
) -> Field:
    return Field(
        "array",
        doc,
        rule,
        default,
        required,
        when,
        items=Field("integer", minimum=1, maximum=MAX_COINS),
        min_items=min_items,
        max_items=max_items,
    )


def _choice(
    doc: str,
    rule: str,
    choices: tuple[str, ...],
    default: Default | None = None,
    when: When = ALWAYS,
    required: bool = False,
) -> Field:
    return Field("string", doc, rule, default, required, when, choices=choices)


def _section(
    doc: str, fields: dict[str, Field], when: When = ALWAYS, rule: str = "", optional: bool = False
) -> Field:
    return Field("table", doc, rule, when=when, fields=fields, optional_table=optional)


PROFILE = _section(
    "Who the profile is.",
    {
        "id": Field(
            "string",
            "Unique profile id, lowercase letters, digits and dashes.",
            "",
            required=True,
            pattern=ID_PATTERN,
        ),
        "title": Field(
            "string",
            "Display name of the game system.",
            "",
            default=Default(lambda ctx, table: table.get("id", ""), "the id"),
        ),
        "version": _int(
            "Operator-maintained revision; bump it on every change.",
            "G4",
            fixed(1),
            minimum=1,
            maximum=MAX_VERSION,
        ),
        "game": _choice("Engine family.", "0", GAMES, required=True),
    },
)

DECK = _section(
    "The cards in play.",
    {
        "ranks": Field(
            "string",
            "Ranks from low to high, separated by spaces (T or 10 = ten).",
            "S1, H1",
            per_game("8 9 T J Q K A", "2 3 4 5 6 7 8 9 T J Q K A"),
        ),
        "suits": Field(
            "string",
            "Suits from high to low (S H C D = spade > heart > club > diamond).",
            "S1, S2",
            fixed("S H C D"),
        ),
    },
)

RANKING = _section(
    "How hands are ranked.",
    {
        "categories": Field(
            "array",
            "Hand categories from high to low; exactly the game's categories.",
            "S3, H9",
            per_game(list(STUD5_CATEGORIES), list(THREE_CARD_CATEGORIES)),
            items=Field("string"),
        ),
        "tie_break": _choice(
            "Tie-break policy inside a category.",
            "S6",
            ("key_then_suit", "ranks_then_suit", "all_ranks_then_suit"),
            fixed("key_then_suit"),
            IS_STUD5,
        ),
        "wrap_straights": Field(
            "boolean",
            "Whether A-8-9-10-J style wrap-around straights count.",
            "S4",
            fixed(False),
            when=IS_STUD5,
        ),
        "low_ace_straight": Field(
            "boolean",
            "Whether A-2-3 is the lowest straight.",
            "H9",
            fixed(True),
            when=IS_THREE_CARD,
        ),
    },
)

TABLE = _section(
    "Seats at one table.",
    {
        "seats": _int(
            "Seats at one table; seats x cards per player must fit the deck.",
            "S8, H1",
            per_game(4, 7),
            minimum=2,
            maximum=10,
        ),
        "min_players": _int(
            "Players needed to start a hand.", "S9, L5", fixed(2), minimum=2, maximum=10
        ),
        "first_banker": _choice(
            "Banker (stud5) or dealer (three-card) of a room's first hand.",
            "S11, L8, H2",
            ("first_seated", "owner"),
            Default(
                lambda ctx, table: (
                    "first_seated" if ctx.game == STUD5 and ctx.style == CAPPED else "owner"
                ),
                '"first_seated" (capped), "owner" (owner_ante, three-card)',
            ),
        ),
    },
)

TIMEOUTS = _section(
    "Time limits (RULES G1).",
    {
        "action_s": _int(
            "Seconds a player has to act; a timeout folds (passes).",
            "S17, L13",
            fixed(15),
            minimum=1,
            maximum=MAX_SECONDS,
        ),
        "continue_s": _int(
            "Seconds to press start again after a hand.",
            "L6",
            fixed(15),
            minimum=1,
            maximum=MAX_SECONDS,
        ),
        "reconnect_min": _int(
            "Minutes a disconnected player is waited for (the seed's n).",
            "S18",
            fixed(3),
            minimum=0,
            maximum=1440,
        ),
        "set_ante_s": _int(
            "Seconds the owner has to set the ante.",
            "L4",
            fixed(10),
            minimum=1,
            maximum=MAX_SECONDS,
            when=IS_OWNER_ANTE,
        ),
        "start_countdown_s": _int(
            "Seconds the owner has to start once four players agreed.",
            "L5",
            fixed(10),
            minimum=1,
            maximum=MAX_SECONDS,
            when=IS_OWNER_ANTE,
        ),
    },
)

LADDER = _section(
    "Title ladder by holdings (optional).",
    {
        "metric": _choice("What the ladder measures.", "S23", ("coins", "score"), fixed("coins")),
        "titles": Field(
            "array",
            "Steps of the ladder, strictly increasing `at`.",
            "S23",
            required=True,
            min_items=1,
            items=Field(
                "table",
                fields={
                    "title": Field("string", "Title shown to players.", "S23", required=True),
                    "at": _int("Holdings needed for the title.", "S23", required=True, minimum=1),
                },
            ),
        ),
    },
    rule="S23",
    optional=True,
)

BETTING = _section(
    "Betting rules.",
    {
        "style": _choice(
            "Betting style: QQ-style capped tiers or the owner-ante table.",
            "Q1, L2",
            (CAPPED, OWNER_ANTE),
            fixed(CAPPED),
            IS_STUD5,
        ),
        "allin_from_street": _int(
            "First street (cards in hand) on which all-in is allowed.",
            "S15",
            fixed(4),
            minimum=2,
            maximum=5,
            when=IS_STUD5,
        ),
        "allin_amount": _choice(
            "What an all-in brings the hand total to.",
            "Q3, L11",
            ("hand_cap", "smallest_stack"),
            per_style("hand_cap", "smallest_stack"),
            IS_STUD5,
        ),
        "raises_per_street": _int(
            "Raises each player may make per street; 0 = no limit.",
            "L10",
            per_style(0, 1),
            minimum=0,
            maximum=MAX_COUNT,
            when=IS_STUD5,
        ),
        "escape_policy": _choice(
            "What an escape (leaving, lost connection, GM kick) does.",
            "S19, G2",
            ("forfeit_to_banker", "fold"),
            Default(
                lambda ctx, table: (
                    "forfeit_to_banker" if ctx.game == STUD5 and ctx.style == CAPPED else "fold"
                ),
                '"forfeit_to_banker" (capped), "fold" (owner_ante, three-card)',
            ),
        ),
        "raise_chips": _int_list(
            "Raise chip buttons, strictly increasing.",
            "L10",
            fixed([1, 5, 10, 50, 100]),
            IS_OWNER_ANTE,
        ),
        "raise_chip_unit": _choice(
            "What the raise chips count: antes (seed 000: the ante the "
            "owner sets defines the raise amounts) or coins.",
            "L10",
            ("ante", "coin"),
            fixed("ante"),
            IS_OWNER_ANTE,
        ),
        "open_min_antes": _int(
            "The opener bets at least this many antes.",
            "L9",
            fixed(1),
            minimum=1,
            maximum=MAX_COUNT,
            when=IS_OWNER_ANTE,
        ),
    },
)

SCORING = _section(
    "Score changes per result in training rooms.",
    {
        "win": _int("Score for a win.", "S22", fixed(1), minimum=-MAX_COUNT, maximum=MAX_COUNT),
        "loss": _int("Score for a loss.", "S22", fixed(-1), minimum=-MAX_COUNT, maximum=MAX_COUNT),
        "draw": _int("Score for a draw.", "S22", fixed(0), minimum=-MAX_COUNT, maximum=MAX_COUNT),
        "escape": _int(
            "Score for an escape.", "S22", fixed(-2), minimum=-MAX_COUNT, maximum=MAX_COUNT
        ),
        "disconnect": _int(
            "Score for a disconnect.", "S22", fixed(0), minimum=-MAX_COUNT, maximum=MAX_COUNT
        ),
    },
    rule="S22",
)

OWNER_ANTE_SECTION = _section(
    "The owner-ante table of seed 000.",
    {
        "chips": _int_list(
            "Ante chip buttons, strictly increasing (plus the max button).",
            "L2",
            fixed([1, 5, 10, 50, 100, 500]),
        ),
        "max_divisor": _int(
            "The ante may not exceed the owner's coins / max_divisor.",
            "L2",
            fixed(200),
            minimum=1,
            maximum=MAX_COUNT,
        ),
        "min_holding_antes": _int(
            "Coins needed to sit and to start a hand, in antes.",
            "L7",
            fixed(200),
            minimum=1,
            maximum=MAX_COUNT,
        ),
    },
    when=IS_OWNER_ANTE,
)

OPEN_COST = Field(
    "table",
    "Opening price, in multiples of the opened player's current bet.",
    "H8",
    fields={
        name: _int(
            f"Cost multiple, {name.replace('_', ' ')}.",
            "H8",
            fixed(value),
            minimum=1,
            maximum=MAX_COUNT,
        )
        for name, value in (
            ("seen_vs_blind", 4),
            ("seen_vs_seen", 2),
            ("blind_vs_blind", 2),
            ("blind_vs_seen", 1),
        )
    },
)

THREE_CARD_SECTION = _section(
    "Three-card (seed 002) rules.",
    {
        "buy_multiplier": _int(
            "A buy costs this many times the target's current bet.",
            "H7",
            fixed(2),
            minimum=1,
            maximum=MAX_COUNT,
        ),
        "open_cost": OPEN_COST,
        "max_rounds": _int(
            "Betting rounds before the system compares hands; 0 = no limit.",
            "H11",
            fixed(0),
            minimum=0,
            maximum=MAX_COUNT,
        ),
    },
    when=IS_THREE_CARD,
)

_FOLLOW = {
    "blind_follows_blind": "Amounts a blind player may follow a blind bet with.",
    "seen_follows_seen": "Amounts a seen player may follow a seen bet with.",
    "blind_follows_seen": "Amounts a blind player may follow a seen bet with.",
    "seen_follows_blind": "Amounts a seen player may follow a blind bet with.",
}


def _three_card_seat(ctx: Context, table: dict[str, Any]) -> int:
    """H12: a three-card player needs the ante plus one follow at the cap; 0 elsewhere."""
    ante, cap = table.get("ante"), table.get("cap")
    if (
        ctx.game == THREE_CARD
        and table.get("coins", True) is not False
        and isinstance(ante, int)
        and isinstance(cap, int)
    ):
        return ante + cap
    return 0


TIER = Field(
    "table",
    "One room tier.",
    fields={
        "id": Field(
            "string",
            "Tier id, unique in the file; `rules set` addresses tiers by it.",
            "",
            required=True,
            pattern=ID_PATTERN,
        ),
        "title": Field(
            "string",
            "Room name shown to players.",
            "",
            default=Default(lambda ctx, table: table.get("id", ""), "the id"),
        ),
        "enabled": Field(
            "boolean", "Whether the room is open; a disabled tier seats nobody.", "Q6", fixed(True)
        ),
        "coins": Field(
            "boolean",
            "false = training room: no coins move, only tallies and score.",
            "S22",
            fixed(True),
        ),
        "ante": _int(
            "Ante every player posts.",
            "Q1, H3",
            minimum=1,
            required=True,
            when=CAPPED_OR_THREE_CARD,
        ),
        "bet_unit": _int(
            "Bets and raises are multiples of it.",
            "Q4, D-5",
            Default(lambda ctx, table: table.get("ante"), "the ante"),
            minimum=1,
            when=IS_CAPPED,
        ),
        "street_caps": _int_list(
            "Cumulative caps for streets 2, 3, 4, 5 (ante included).",
            "Q1, D-4",
            when=IS_CAPPED,
            required=True,
            min_items=4,
            max_items=4,
        ),
        "hand_cap": _int(
            "The most a player may put in one hand.",
            "Q1, Q3",
            minimum=1,
            when=IS_CAPPED,
            required=True,
        ),
        "min_holding": replace(
            _int(
                "Coins needed to sit (required in capped tiers; in three-card at least the ante "
                "plus one follow at the cap).",
                "Q1, Q5, H12",
                Default(_three_card_seat, "the ante plus the cap (three-card), 0 (training)"),
                when=CAPPED_OR_THREE_CARD,
            ),
            required_when=IS_CAPPED,
        ),
        "cap": _int(
            "The most any single bet may be (封顶).",
            "H3",
            minimum=1,
            when=IS_THREE_CARD,
            required=True,
        ),
        **{
            name: _int_list(doc, "H5", when=IS_THREE_CARD, required=True)
            for name, doc in _FOLLOW.items()
        },
    },
)

ROOT = Field(
    "table",
    "A rule profile.",
    fields={
        "profile": PROFILE,
        "deck": DECK,
        "ranking": RANKING,
        "table": TABLE,
        "timeouts": TIMEOUTS,
        "ladder": LADDER,
        "betting": BETTING,
        "scoring": SCORING,
        "owner_ante": OWNER_ANTE_SECTION,
        "three_card": THREE_CARD_SECTION,
        "tiers": Field(
            "array",
            "Room tiers (at least one enabled).",
            "Q1, Q6, H3",
            required=True,
            min_items=1,
            items=TIER,
        ),
    },
)

TIME_WARNING_RANGE = (5, 120)


def walk(root: Field = ROOT, prefix: str = "") -> Iterator[tuple[str, Field]]:
    """Yield (dotted name, Field) for every key of the format, depth first."""
    for name, child in root.fields.items():
        path = f"{prefix}.{name}" if prefix else name
        yield path, child
        if child.kind == "table":
            yield from walk(child, path)
        elif child.kind == "array" and child.items is not None and child.items.kind == "table":
            yield from walk(child.items, path + "[]")
