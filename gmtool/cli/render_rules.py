"""Rendering of a compiled profile for `gmtool rules show`."""

from __future__ import annotations

from gmtool.cli.console import Console
from gmtool.cli.formats import coins
from gmtool.engine.config import engine_config
from gmtool.engine.games import game_of
from gmtool.engine.seating import coins_to_sit

_CAPPED_COLUMNS = [
    "tier",
    "title",
    "ante",
    "street 2 cap",
    "street 3 cap",
    "street 4 cap",
    "street 5 cap",
    "hand cap",
    "to sit",
    "room",
]
_THREE_CARD_COLUMNS = [
    "room",
    "title",
    "ante",
    "cap",
    "blind follows blind",
    "seen follows seen",
    "blind follows seen",
    "seen follows blind",
    "to sit",
    "open",
]


def render_profile(compiled: dict, console: Console) -> None:
    profile = compiled["profile"]
    console.line(
        f"{profile['title']} ({profile['id']} v{profile['version']}, {compiled['game']})"
        f"  config_id {compiled['config_id'][:12]}"
    )
    console.line(
        f"deck: {len(compiled['deck']['cards'])} cards, ranks "
        f"{' '.join(compiled['deck']['ranks'])}, suits {' > '.join(compiled['deck']['suits'])}"
    )
    spec = engine_config(compiled)
    rooms = _owner_ante if game_of(spec).owner_table(spec) else _ROOMS[spec.game]
    rooms(compiled, console)
    _policies(compiled, console)
    _ladder(compiled, console)


def _room_state(tier: dict) -> str:
    state = "open" if tier["enabled"] else "closed"
    return state + (", training" if not tier["coins"] else "")


def _capped_tiers(compiled: dict, console: Console) -> None:
    rows = [
        [
            t["id"],
            t["title"],
            coins(t["ante"]),
            *(coins(cap) for cap in t["street_caps"]),
            coins(t["hand_cap"]),
            coins(coins_to_sit(compiled, t["id"])),
            _room_state(t),
        ]
        for t in compiled["tiers"]
    ]
    console.table(
        "tiers (RULES Q2: cumulative caps include the ante; to sit: the min holding, "
        "none in training rooms)",
        _CAPPED_COLUMNS,
        rows,
        right_align=range(2, 9),
        keep=("tier",),
    )


def _three_card_tiers(compiled: dict, console: Console) -> None:
    def amounts(values: list[int]) -> str:
        return " or ".join(coins(v) for v in values)

    rows = [
        [
            t["id"],
            t["title"],
            coins(t["ante"]),
            coins(t["cap"]),
            amounts(t["blind_follows_blind"]),
            amounts(t["seen_follows_seen"]),
            amounts(t["blind_follows_seen"]),
            amounts(t["seen_follows_blind"]),
            coins(coins_to_sit(compiled, t["id"])),
            "yes" if t["enabled"] else "no",
        ]
        for t in compiled["tiers"]
    ]
    console.table(
        "rooms (RULES H3, H5; to sit: the min holding, and at least the ante)",
        _THREE_CARD_COLUMNS,
        rows,
        right_align=(2, 3, 8),
        keep=("room",),
    )
    three = compiled["three_card"]
    cost = three["open_cost"]
    console.line(
        f"buy (H7): {three['buy_multiplier']} x the target's current bet; "
        "equal hands: the buyer loses"
    )
    console.line(
        f"open (H8): seen vs blind {cost['seen_vs_blind']}x, seen vs seen "
        f"{cost['seen_vs_seen']}x, blind vs blind {cost['blind_vs_blind']}x, "
        f"blind vs seen {cost['blind_vs_seen']}x; equal hands: the opened player wins"
    )
    console.line(f"round limit (H11): {three['max_rounds'] or 'none'}")


def _owner_ante(compiled: dict, console: Console) -> None:
    owner = compiled["owner_ante"]
    betting = compiled["betting"]
    rows = [[t["id"], t["title"], _room_state(t)] for t in compiled["tiers"]]
    console.table("tables", ["tier", "title", "room"], rows)
    console.line(
        f"ante (L2): set by the owner with chips {_amounts(owner['chips'])} plus max; "
        f"at most the owner's coins / {owner['max_divisor']}"
    )
    console.line(f"minimum holding (L7): {owner['min_holding_antes']} x ante")
    console.line(
        f"opening (L9): at least {betting['open_min_antes']} x ante; "
        f"raise chips (L10): {_amounts(betting['raise_chips'])}"
        + (" antes" if betting.get("raise_chip_unit") == "ante" else " coins")
    )


def _amounts(values: list[int]) -> str:
    return ", ".join(coins(v) for v in values)


_ROOMS = {"stud5": _capped_tiers, "three-card": _three_card_tiers}  # the rooms table by game


def _policies(compiled: dict, console: Console) -> None:
    timeouts = compiled["timeouts"]
    limits = [
        f"act {timeouts['action_s']} s",
        f"continue {timeouts['continue_s']} s",
        f"reconnect window {timeouts['reconnect_min']} min",
    ]
    if "set_ante_s" in timeouts:
        limits[1:1] = [
            f"set ante {timeouts['set_ante_s']} s",
            f"start countdown {timeouts['start_countdown_s']} s",
        ]
    console.line("time limits (G1): " + ", ".join(limits))
    betting = compiled["betting"]
    console.line(f"escape (S19): {betting['escape_policy']}")
    if "allin_from_street" in betting:  # stud5 (S15)
        raises = betting["raises_per_street"] or "no limit"
        console.line(
            f"all-in (S15): from street {betting['allin_from_street']} to "
            f"{betting['allin_amount'].replace('_', ' ')}; raises per street: {raises}"
        )
        console.line(
            f"ranking (S3, S6): {' > '.join(compiled['ranking']['categories'])}; "
            f"tie-break {compiled['ranking']['tie_break']}"
        )
    else:
        console.line(f"ranking (H9): {' > '.join(compiled['ranking']['categories'])}")


def _ladder(compiled: dict, console: Console) -> None:
    ladder = compiled.get("ladder")
    if not ladder:
        return
    rows = [[i + 1, step["title"], f"{step['at']:,}"] for i, step in enumerate(ladder["titles"])]
    console.table(
        f"title ladder (S23) by {ladder['metric']}",
        ["step", "title", "at"],
        rows,
        right_align=(0, 2),
    )
