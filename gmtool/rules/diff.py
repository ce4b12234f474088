"""What changes for players between two compiled configurations, in their words.

`diff_configs(old, new)` compares two compiled profiles key by key (tiers matched by
id, not by position) and describes each change the way an operator would announce it:
"junior: street-3 cap 500 -> 600 (+20%)", not as a text diff.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

_LABELS = {
    "ante": "ante",
    "bet_unit": "bet unit",
    "hand_cap": "hand cap",
    "min_holding": "minimum holding to sit",
    "cap": "bet cap (封顶)",
    "title": "name",
    "blind_follows_blind": "blind follows blind",
    "seen_follows_seen": "seen follows seen",
    "blind_follows_seen": "blind follows seen",
    "seen_follows_blind": "seen follows blind",
    "timeouts.action_s": "time to act",
    "timeouts.continue_s": "time to start again",
    "timeouts.reconnect_min": "reconnect window",
    "timeouts.set_ante_s": "time to set the ante",
    "timeouts.start_countdown_s": "start countdown",
    "betting.allin_from_street": "all-in allowed from street",
    "betting.allin_amount": "all-in brings the hand total to",
    "betting.raises_per_street": "raises per player per street (0 = no limit)",
    "betting.escape_policy": "escape policy",
    "betting.raise_chips": "raise chips",
    "betting.open_min_antes": "opening bet, in antes",
    "betting.style": "betting style",
    "owner_ante.chips": "ante chips",
    "owner_ante.max_divisor": "ante limit divisor (coins / n)",
    "owner_ante.min_holding_antes": "minimum holding, in antes",
    "table.seats": "seats per table",
    "table.min_players": "players needed to start",
    "table.first_banker": "first banker",
    "ranking.tie_break": "tie-break policy",
    "ranking.categories": "hand ranking order",
    "ranking.wrap_straights": "wrap-around straights",
    "ranking.low_ace_straight": "A-2-3 straight",
    "three_card.buy_multiplier": "buy price multiple",
    "three_card.max_rounds": "round limit (0 = none)",
    "ladder.metric": "title ladder measures",
}
_UNITS = {
    "timeouts.action_s": " s",
    "timeouts.continue_s": " s",
    "timeouts.set_ante_s": " s",
    "timeouts.start_countdown_s": " s",
    "timeouts.reconnect_min": " min",
}
_WORDS = {
    "forfeit_to_banker": "the escapee pays the whole pot to the banker",
    "fold": "the escapee is folded and forfeits their stake",
    "hand_cap": "the hand cap",
    "smallest_stack": "the smallest stack",
}
_IGNORED = {"config_id", "schema_version", "game", "deck", "profile"}


@dataclass(frozen=True)
class Change:
    """One change a player would notice, with the raw values for scripts."""

    path: str
    old: Any
    new: Any
    message: str

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def diff_configs(old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    """Every player-visible difference between two compiled configs, tiers first; a
    change of game before everything, since then every rule below changes with it."""
    changes = _game_change(old.get("game"), new.get("game"))
    changes += _tier_changes(old.get("tiers", []), new.get("tiers", []))
    deck_old, deck_new = old.get("deck") or {}, new.get("deck") or {}
    if deck_old.get("cards") != deck_new.get("cards"):
        changes.append(
            Change(
                "deck.cards",
                len(deck_old.get("cards", [])),
                len(deck_new.get("cards", [])),
                f"deck: {' '.join(deck_old.get('ranks', []))} -> "
                f"{' '.join(deck_new.get('ranks', []))} "
                f"({len(deck_old.get('cards', []))} -> "
                f"{len(deck_new.get('cards', []))} cards)",
            )
        )
    for section in sorted(set(old) | set(new)):
        if section in _IGNORED or section == "tiers":
            continue
        changes.extend(_section_changes(section, old.get(section), new.get(section)))
    return changes


_GAMES = {"stud5": "stud5 (five-card stud)"}


def _game_change(old: Any, new: Any) -> list[Change]:
    if old == new:
        return []
    shown = f"{_GAMES.get(old, old)} -> {_GAMES.get(new, new)}"
    return [
        Change(
            "game", old, new, f"game: {shown}: a different game; every rule below changes with it"
        )
    ]


def _tier_changes(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[Change]:
    old_by_id = {t["id"]: t for t in old}
    new_by_id = {t["id"]: t for t in new}
    changes: list[Change] = []
    for tier_id, tier in new_by_id.items():
        if tier_id not in old_by_id:
            changes.append(
                Change(
                    f"tiers.{tier_id}",
                    None,
                    tier,
                    f"{tier_id}: new room {tier.get('title', tier_id)!r}",
                )
            )
            continue
        before = old_by_id[tier_id]
        for key in sorted(set(before) | set(tier)):
            if key != "id" and before.get(key) != tier.get(key):
                changes.extend(_tier_field_change(tier_id, key, before.get(key), tier.get(key)))
    for tier_id, tier in old_by_id.items():
        if tier_id not in new_by_id:
            changes.append(
                Change(
                    f"tiers.{tier_id}",
                    tier,
                    None,
                    f"{tier_id}: room {tier.get('title', tier_id)!r} removed",
                )
            )
    return changes


def _tier_field_change(tier_id: str, key: str, old: Any, new: Any) -> list[Change]:
    path = f"tiers.{tier_id}.{key}"
    if (
        key == "street_caps"
        and isinstance(old, list)
        and isinstance(new, list)
        and len(old) == len(new)
    ):
        return [
            Change(f"{path}[{i}]", a, b, f"{tier_id}: street-{i + 2} cap {_amount_change(a, b)}")
            for i, (a, b) in enumerate(zip(old, new))
            if a != b
        ]
    if key == "enabled":
        return [Change(path, old, new, f"{tier_id}: room {'opens' if new else 'closes'}")]
    if key == "coins":
        words = "now plays for coins" if new else "becomes a training room: no coins move"
        return [Change(path, old, new, f"{tier_id}: {words}")]
    label = _LABELS.get(key, key.replace("_", " "))
    return [Change(path, old, new, f"{tier_id}: {label} {_amount_change(old, new)}")]


def _section_changes(section: str, old: Any, new: Any) -> list[Change]:
    if old == new:
        return []
    if not isinstance(old, dict) or not isinstance(new, dict):
        what = "added" if old is None else "removed" if new is None else "changed"
        return [Change(section, old, new, f"{section.replace('_', ' ')} {what}")]
    changes = []
    a: Any  # values of the compiled JSON, of any kind
    b: Any
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        if a == b:
            continue
        path = f"{section}.{key}"
        if isinstance(a, dict) and isinstance(b, dict):
            changes.extend(_section_changes(path, a, b))
        elif path == "ranking.categories":
            changes.append(Change(path, a, b, f"hand ranking order: {_order_change(a, b)}"))
        elif path == "ladder.titles":
            changes.append(Change(path, a, b, _ladder_change(a or [], b or [])))
        else:
            label = _LABELS.get(path, path.replace("_", " "))
            changes.append(
                Change(path, a, b, f"{label}: {_amount_change(a, b, _UNITS.get(path, ''))}")
            )
    return changes


def _amount_change(old: Any, new: Any, unit: str = "") -> str:
    def shown(value: Any) -> str:
        if isinstance(value, list):
            return " or ".join(shown(v) for v in value)
        if isinstance(value, bool):
            return "yes" if value else "no"
        if isinstance(value, int):
            return f"{value:,}{unit}"
        return f"{_WORDS.get(value, value)}{unit}" if value is not None else "(none)"

    text = f"{shown(old)} -> {shown(new)}"
    if isinstance(old, int) and isinstance(new, int) and not isinstance(old, bool) and old:
        text += f" ({(new - old) / old:+.0%})"
    return text


def _order_change(old: list[str], new: list[str]) -> str:
    moved = [
        f"{name.replace('_', ' ')} {old.index(name) + 1} -> {new.index(name) + 1}"
        for name in new
        if name in old and old.index(name) != new.index(name)
    ]
    return "; ".join(moved) if moved else f"{old} -> {new}"


def _ladder_change(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> str:
    old_at = {t["title"]: t["at"] for t in old}
    parts = []
    for step in new:
        if step["title"] not in old_at:
            parts.append(f"new title {step['title']} at {step['at']}")
        elif old_at[step["title"]] != step["at"]:
            parts.append(f"{step['title']} {_amount_change(old_at[step['title']], step['at'])}")
    parts += [f"title {t} removed" for t in old_at if t not in {s["title"] for s in new}]
    return "title ladder: " + ("; ".join(parts) if parts else "order changed")
