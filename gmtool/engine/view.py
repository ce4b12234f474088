"""What anyone may see of a running hand (RULES G3): never a hole card.

The console and the host's live snapshot are built from this view only, so no code
path that shows a running table can reach a card that is face down.
"""

from __future__ import annotations

from gmtool.engine.hand import Hand


def face_up(hand: Hand, name: str) -> list[str]:
    """The cards of `name` that lie face up: stud5 shows all but the hole card, three-card none."""
    if hand.game != "stud5":
        return []
    return [str(card) for card in hand.players[name].cards[1:]]


def public_view(hand: Hand) -> dict:
    """Players, totals, pot, street and turn, with face-up cards only."""
    players = []
    for name in hand.order:
        player = hand.players[name]
        players.append({
            "name": name, "total": player.total, "folded": player.folded,
            "connected": player.connected, "showing": face_up(hand, name),
            "seen": getattr(player, "seen", None),
        })
    return {
        "game": hand.game, "street": getattr(hand, "street", None), "pot": hand.pot,
        "to_act": hand.to_act, "over": hand.is_over, "players": players,
        "legal": [legal.as_json() for legal in hand.legal_actions()] if not hand.is_over else [],
    }
