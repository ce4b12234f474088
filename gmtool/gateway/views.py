"""What one connection may see of a running hand (RULES G3, issue 25 item 4).

The host records every event whole; a player's socket gets each one through a `TableView`
of that player (or of a spectator: `viewer=None`), which hides every card the viewer may not
see yet:

- a face-up card is seen by everyone;
- a face-down card is seen by its owner: in five-card stud from the deal; in three-card only
  once its owner has looked (H4), since a player who has not looked plays blind and pays a
  blind player's prices; the `look` event then brings the viewer's own cards;
- a three-card buy (H7) compares two players' cards: the buyer and the player bought see
  both hands and the explanation; everyone else sees who won and who leaves;
- a showdown shows the hands it names to everyone: that is what a showdown is.

Any other event that carries a `card`, `cards` or `hole` field has them hidden unless they
are face up, so an event the engine adds later leaks nothing before this module learns it.
"""

from __future__ import annotations

from typing import Any

from gmtool.engine.games import GAMES
from gmtool.engine.view import HIDDEN, redact_events

_PUBLIC = frozenset({"showdown"})  # events whose cards are shown to the whole table


class TableView:
    """One connection's view of a table's hands: `see` each event in order."""

    def __init__(self, viewer: str | None) -> None:
        self.viewer = viewer
        self.blind = True  # whether the viewer's face-down cards wait for a look (H4)
        self.own: list[Any] = []  # the viewer's face-down cards in this hand
        self.looked = False

    def see(self, event: dict[str, Any]) -> dict[str, Any]:
        """`event` (a JSON event with its "type") as this viewer may see it."""
        kind = event.get("type")
        if kind == "hand_started":
            game = GAMES.get(event.get("game"))  # type: ignore[arg-type]
            self.blind = game is None or game.blind_until_look  # an unknown game: blind
            self.own, self.looked = [], False
            return event
        if kind == "deal":
            return {**event, "cards": [self._card(card) for card in event.get("cards", [])]}
        if kind == "look" and event.get("player") == self.viewer and self.viewer is not None:
            self.looked = True
            return {**event, "cards": list(self.own)}
        if kind == "buy_result":
            if self.viewer is not None and self.viewer in (event.get("buyer"), event.get("target")):
                return event
            keep = ("type", "buyer", "target", "winner", "loser", "rule")
            return {key: event[key] for key in keep if key in event}
        if kind in _PUBLIC:
            return event
        return redact_events([event], running=True)[0]

    def _card(self, card: Any) -> Any:
        if not isinstance(card, dict):
            return HIDDEN  # not the engine's shape: show nothing of it
        if card.get("face") == "up":
            return card
        if self.viewer is None or card.get("player") != self.viewer:
            return {**card, "card": HIDDEN}
        self.own.append(card.get("card"))
        if self.blind and not self.looked:
            return {**card, "card": HIDDEN}  # blind until the viewer looks (H4)
        return card
