"""Semantic checks that relate several keys (RULES Q5, H5, S8 and friends).

They run after the structural walk and read values defensively: a value of the wrong
type was already reported there, so here it is simply skipped.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, cast

from gmtool.bounds import unsafe_characters
from gmtool.rules import schema
from gmtool.rules.collector import Collector
from gmtool.rules.deckspec import DeckSpecError, parse_ranks, parse_suits
from gmtool.rules.schema import Context, Default
from gmtool.rules.source import Path


def _get(data: Any, *path: str | int) -> Any:
    for part in path:
        if isinstance(part, int):
            if not isinstance(data, list) or part >= len(data):
                return None
        elif not isinstance(data, dict):
            return None
        data = data[part] if isinstance(part, int) else data.get(part)
    return data


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _ints(value: Any) -> list[int] | None:
    if isinstance(value, list) and value and all(_int(v) is not None for v in value):
        return value
    return None


def _resolved(data: dict[str, Any], ctx: Context, section: str, key: str) -> Any:
    """The value of `section.key`, or its default when absent."""
    value = _get(data, section, key)
    if value is not None:
        return value
    spec = schema.ROOT.fields[section].fields[key]
    table = _get(data, section)
    default = cast(Default, spec.default)  # the keys asked for here all have one
    return default.resolve(ctx, table if isinstance(table, dict) else {})


def check_strings(out: Collector, value: Any, path: Path = ()) -> None:
    """`check_text` for every string of the document, wherever it is (a JSON Schema cannot
    say which characters a string may hold, so this is not a check of the shape)."""
    if isinstance(value, str):
        check_text(out, path, value)
    elif isinstance(value, dict):
        for key, item in value.items():
            check_strings(out, item, path + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            check_strings(out, item, path + (index,))


def check_text(out: Collector, path: Path, value: str) -> bool:
    """A string of a profile is shown to players and in reports (titles, ids), so it may
    hold no control, bidirectional or invisible character (`bounds.unsafe_characters`),
    as a GM's name or reason may not; False, with an `unsafe-text` finding, if it does.
    A TOML multi-line string may keep its newlines and tabs, which text output shows as
    they are."""
    unsafe = unsafe_characters(value, allowed="\n\t")
    if unsafe:
        out.add(
            path,
            "unsafe-text",
            f"{value!r} contains control, bidirectional or invisible characters "
            f"({', '.join(unsafe)}); write the text without them",
        )
    return not unsafe


def check_semantics(out: Collector, data: dict[str, Any], ctx: Context) -> None:
    _check_deck(out, data, ctx)
    _check_categories(out, data, ctx)
    _check_increasing(out, data, ("ladder", "titles"), key="at", what="ladder step")
    if schema.IS_OWNER_ANTE.test(ctx):
        _check_increasing(out, data, ("betting", "raise_chips"), what="raise chip")
        _check_increasing(out, data, ("owner_ante", "chips"), what="ante chip")
    _check_time_limits(out, data)
    _check_scoring_has_a_training_room(out, data)
    tiers = _get(data, "tiers")
    if isinstance(tiers, list):
        _check_tier_set(out, tiers)
        for index, tier in enumerate(tiers):
            if not isinstance(tier, dict):
                continue
            if schema.IS_CAPPED.test(ctx):
                _check_capped_tier(out, tier, ("tiers", index))
            elif schema.IS_THREE_CARD.test(ctx):
                _check_three_card_tier(out, tier, ("tiers", index))


def _check_deck(out: Collector, data: dict[str, Any], ctx: Context) -> None:
    sizes = []
    for key, parse in (("ranks", parse_ranks), ("suits", parse_suits)):
        text = _resolved(data, ctx, "deck", key)
        if not isinstance(text, str):
            return
        try:
            sizes.append(len(parse(text)))
        except DeckSpecError as error:
            out.add(("deck", key), "bad-deck", str(error))
    if len(sizes) != 2:
        return
    seats = _int(_resolved(data, ctx, "table", "seats"))
    seats_spec = schema.TABLE.fields["seats"]
    low, high = cast(int, seats_spec.minimum), cast(int, seats_spec.maximum)  # it has both
    if seats is None or not low <= seats <= high:
        return  # out of range: the structural walk said so
    deck_size = sizes[0] * sizes[1]
    per_player = schema.CARDS_PER_PLAYER[cast(str, ctx.game)]  # known: see validate_text
    if seats * per_player > deck_size:
        written = [
            p
            for p in (("table", "seats"), ("deck", "ranks"), ("deck", "suits"))
            if _get(data, *p) is not None
        ]  # name a key the file has, seats first
        path = written[0] if written else ("table", "seats")
        out.add(
            path,
            "deck-too-small",
            f"{seats} seats x {per_player} cards = {seats * per_player} cards, "
            f"but the deck has {deck_size}",
        )
    min_players = _int(_resolved(data, ctx, "table", "min_players"))
    if min_players is not None and min_players > seats:
        out.add(
            ("table", "min_players"),
            "out-of-range",
            f"min_players {min_players} is more than the {seats} seats",
        )


def _check_categories(out: Collector, data: dict[str, Any], ctx: Context) -> None:
    categories = _get(data, "ranking", "categories")
    if not isinstance(categories, list) or not all(isinstance(c, str) for c in categories):
        return
    expected = schema.CATEGORIES.get(cast(str, ctx.game), schema.STUD5_CATEGORIES)  # known
    missing = [c for c in expected if c not in categories]
    extra = [c for c in categories if c not in expected]
    repeated = sorted({c for c in categories if categories.count(c) > 1})
    if missing or extra or repeated:
        parts = [
            f"missing {', '.join(missing)}" if missing else "",
            f"unknown {', '.join(extra)}" if extra else "",
            f"repeated {', '.join(repeated)}" if repeated else "",
        ]
        out.add(
            ("ranking", "categories"),
            "bad-categories",
            f"must list each {ctx.game} category exactly once: " + "; ".join(p for p in parts if p),
        )


def _check_increasing(
    out: Collector, data: dict[str, Any], path: Path, what: str, key: str | None = None
) -> None:
    items = _get(data, *path)
    if not isinstance(items, list):
        return
    previous = 0
    for index, item in enumerate(items):
        value = _int(_get(item, key) if key else item)
        if value is None or value < 1:
            return  # not an integer, or not positive: the structural walk said so
        if value <= previous:
            where = path + (index, key) if key else path + (index,)
            out.add(
                where,
                "not-increasing",
                f"{what} {value} must be greater than the one before it ({previous})",
            )
            return
        previous = value


def _check_time_limits(out: Collector, data: dict[str, Any]) -> None:
    low, high = schema.TIME_WARNING_RANGE
    timeouts = _get(data, "timeouts")
    if not isinstance(timeouts, dict):
        return
    for key, value in timeouts.items():
        # Below 1 s is an out-of-range error already; do not warn about it again.
        if (
            key.endswith("_s")
            and _int(value) is not None
            and 1 <= value
            and not low <= value <= high
        ):
            out.add(
                ("timeouts", key),
                "time-limit",
                f"{value} s is outside the usual {low}..{high} s (RULES G1: 15 s in every seed)",
            )


def _check_scoring_has_a_training_room(out: Collector, data: dict[str, Any]) -> None:
    """[scoring] only counts in training rooms (S22): without one it changes nothing."""
    tiers = _get(data, "tiers")
    if (
        "scoring" in data
        and isinstance(tiers, list)
        and not any(isinstance(tier, dict) and tier.get("coins") is False for tier in tiers)
    ):
        out.add(
            ("scoring",),
            "no-effect",
            "[scoring] sets the scores of training rooms "
            "(RULES S22), but no tier here is one (coins = false): it changes nothing",
        )


def _check_tier_set(out: Collector, tiers: list[Any]) -> None:
    seen: set[str] = set()
    for index, tier in enumerate(tiers):
        tier_id = _get(tier, "id")
        if isinstance(tier_id, str):
            if tier_id in seen:
                out.add(
                    ("tiers", index, "id"),
                    "duplicate-tier",
                    f"tier id {tier_id!r} is already used by an earlier tier",
                )
            seen.add(tier_id)
    flags = [_get(tier, "enabled") for tier in tiers]
    if tiers and all(flag is False for flag in flags):
        out.add(
            ("tiers", 0, "enabled"),
            "no-enabled-tier",
            "every tier is disabled, so no room can seat anybody (RULES Q6)",
        )


def _check_capped_tier(out: Collector, tier: dict[str, Any], path: Path) -> None:
    ante, hand_cap = _int(tier.get("ante")), _int(tier.get("hand_cap"))
    caps, min_holding = _ints(tier.get("street_caps")), _int(tier.get("min_holding"))
    if caps is None or len(caps) != 4:
        return
    for street, (before, after) in enumerate(zip(caps, caps[1:]), start=3):
        if after < before:
            out.add(
                path + ("street_caps", street - 2),
                "caps-decrease",
                f"street-{street} cap {after} is below the street-{street - 1} cap {before}",
            )
            break  # one finding per tier; the Q5 checks below still apply
    if hand_cap is not None and caps[-1] != hand_cap:
        out.add(
            path + ("hand_cap",),
            "last-cap",
            f"hand_cap {hand_cap} differs from the street-5 cap {caps[-1]} (RULES Q5)",
        )
    if ante is not None and ante > caps[0]:
        out.add(
            path + ("ante",),
            "ante-above-cap",
            f"ante {ante} is above the street-2 cap {caps[0]} (the ante counts toward it, D-4)",
        )
    coins = tier.get("coins", True) is not False
    if coins and hand_cap is not None and min_holding is not None and min_holding < hand_cap:
        out.add(
            path + ("min_holding",),
            "min-holding",
            f"min_holding {min_holding} is below hand_cap {hand_cap}: a seated player "
            "could not cover the hand cap (RULES Q5)",
        )
    if hand_cap is not None and ante is not None:
        _check_seed_ratios(out, path, ante, caps, hand_cap)


def _check_seed_ratios(
    out: Collector, path: Path, ante: int, caps: list[int], hand_cap: int
) -> None:
    expected = {"ante": Fraction(hand_cap, 10)}
    expected_caps = [Fraction(hand_cap, 5), Fraction(hand_cap, 2), hand_cap, hand_cap]
    if ante != expected["ante"]:
        out.add(
            path + ("ante",),
            "seed-ratio",
            f"ante {ante} is not 1/10 of hand_cap {hand_cap} as in the seeds (RULES Q2)",
        )
    if caps != expected_caps:
        out.add(
            path + ("street_caps",),
            "seed-ratio",
            f"street caps {caps} are not 1/5, 1/2, 1, 1 of hand_cap {hand_cap} "
            "as in the seeds (RULES Q2)",
        )


_FOLLOWS = {  # list: (previous bettor's state, this player's state, minimum multiple)
    "blind_follows_blind": ("blind", "blind", Fraction(1)),
    "seen_follows_seen": ("seen", "seen", Fraction(1)),
    "blind_follows_seen": ("seen", "blind", Fraction(1, 2)),
    "seen_follows_blind": ("blind", "seen", Fraction(2)),
}


def _check_three_card_tier(out: Collector, tier: dict[str, Any], path: Path) -> None:
    ante, cap = _int(tier.get("ante")), _int(tier.get("cap"))
    if ante is not None and cap is not None and ante > cap:
        out.add(path + ("ante",), "out-of-range", f"ante {ante} is above the cap {cap} (RULES H3)")
    min_holding = _int(tier.get("min_holding"))
    if (
        ante is not None
        and cap is not None
        and min_holding is not None
        and tier.get("coins", True) is not False
        and min_holding < ante + cap
    ):
        out.add(
            path + ("min_holding",),
            "min-holding",
            f"min_holding {min_holding} is below the ante {ante} plus one follow at the "
            f"cap {cap} ({ante + cap}): a player seated with less could only look or pass "
            "(RULES H12)",
        )
    tables = {name: _ints(tier.get(name)) for name in _FOLLOWS}
    sound = True  # each table is checked on its own; the H5 minimums need all four sound
    for name, amounts in tables.items():
        if amounts is None:
            sound = False
            continue
        for index, (before, after) in enumerate(zip(amounts, amounts[1:]), start=1):
            if after <= before:
                out.add(
                    path + (name, index),
                    "not-increasing",
                    f"{name} amounts must be strictly increasing ({before}, {after})",
                )
                sound = False
                break
        else:
            if cap is not None and amounts[-1] > cap:
                out.add(
                    path + (name,),
                    "follow-table",
                    f"{name} allows {amounts[-1]}, above the room cap {cap} (RULES H3, H5)",
                )
                sound = False
    if not sound:
        return
    follows = cast("dict[str, list[int]]", tables)  # all four sound: none is None
    # What each state can have bet before: its follow amounts (the ante is not a bet to
    # follow, H5: the first speaker bets any amount of their own state).
    bets = {
        "blind": set(follows["blind_follows_blind"]) | set(follows["blind_follows_seen"]),
        "seen": set(follows["seen_follows_seen"]) | set(follows["seen_follows_blind"]),
    }
    for name, (previous, _, multiple) in _FOLLOWS.items():
        amounts = follows[name]
        low, high = min(bets[previous]), max(bets[previous])
        if min(amounts) < multiple * low:
            out.add(
                path + (name,),
                "follow-table",
                f"{name} allows {min(amounts)}, below {_times(multiple)}a {previous} bet "
                f"of {low} (RULES H5)",
            )
        elif cap is not None and max(amounts) < min(multiple * high, Fraction(cap)):
            out.add(
                path + (name,),
                "follow-table",
                f"{name} has no amount of at least {_times(multiple)}a {previous} bet "
                f"of {high} (RULES H5)",
            )


def _times(multiple: Fraction) -> str:
    return {Fraction(1): "", Fraction(2): "twice ", Fraction(1, 2): "half "}[multiple]
