"""What anyone may see of a running hand (RULES G3): never a hole card.

The console and the host's live snapshot are built from this view only, so no code
path that shows a running table can reach a card that is face down.
"""

from __future__ import annotations

from typing import Any

from gmtool.engine.hand import Hand


def public_view(hand: Hand) -> dict[str, Any]:
    """Players, totals, pot, street and turn, with face-up cards only."""
    players = []
    for name in hand.order:
        player = hand.players[name]
        players.append(
            {
                "name": name,
                "total": player.total,
                "folded": player.folded,
                "connected": player.connected,
                "showing": hand.face_up(name),
                "seen": hand.has_looked(name),
            }
        )
    return {
        "game": hand.game,
        "street": getattr(hand, "street", None),
        "pot": hand.pot,
        "to_act": hand.to_act,
        "over": hand.is_over,
        "players": players,
        "legal": [legal.as_json() for legal in hand.legal_actions()] if not hand.is_over else [],
    }


HIDDEN = "??"


def redact_events(events: list[dict[str, Any]], running: bool) -> list[dict[str, Any]]:
    """Events as the console may show them: while the hand runs, no face-down card (G3).

    Every card in a running hand's events is hidden except the face-up cards of stud5
    deals; a finished hand is shown whole. `events` are JSON dicts with a "type".
    """
    if not running:
        return events
    return [_redact(event) for event in events]


def _redact(value: Any) -> Any:  # a JSON value
    if isinstance(value, dict):
        if value.get("face") == "up" and "card" in value:
            return dict(value)
        return {
            key: (_hide(item) if key in ("card", "cards", "hole") else _redact(item))
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_redact(item) for item in value]
    return value


def _hide(value: Any) -> Any:
    if isinstance(value, str):
        return HIDDEN
    if isinstance(value, list):
        return [_redact(item) if isinstance(item, dict) else HIDDEN for item in value]
    if isinstance(value, dict):
        return _redact(value)
    return value
