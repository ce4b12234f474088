"""Events and actions: the hand's log and the inputs that produce it.

Every change of a hand yields frozen `Event` records; the list of them is the hand's
log. An event that carries no `cause` is an *input* (a player's action, or time and
connection news from the host) and can be turned back into the `Action` that made it,
so replay is: start the same hand, apply the inputs again, compare the events.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from gmtool.engine.versions import ENGINE_VERSION  # noqa: F401  (recorded by hand_started)
from gmtool.errors import UsageError

STUD5_VERBS = ("bet", "raise", "call", "check", "fold", "allin")
THREE_CARD_VERBS = ("follow", "look", "buy", "open", "pass")
HOST_VERBS = ("timeout", "disconnect", "reconnect", "wait", "escape", "kick")
TABLE_VERBS = ("join", "leave", "ante", "agree", "reject", "start")
INPUT_TYPES = frozenset(STUD5_VERBS + THREE_CARD_VERBS + HOST_VERBS)
_VERBS = INPUT_TYPES | frozenset(TABLE_VERBS)
_WITH_AMOUNT = frozenset({"bet", "raise", "follow"})
AMOUNT_VERBS = _WITH_AMOUNT  # verbs whose action line carries an amount
_TIMED_OR_AMOUNT = _WITH_AMOUNT | {"wait"}  # verbs whose event's "amount" is the input's


class Event(NamedTuple):
    """One thing that happened in a hand, as JSON-ready fields (immutable: a tuple, which is
    also the cheapest record Python can make, and a hand makes a few dozen)."""

    type: str
    fields: Mapping[str, Any]

    def as_json(self) -> dict[str, Any]:
        return {"type": self.type, **self.fields}

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> Event:
        fields = dict(value)
        return cls(fields.pop("type"), fields)

    def get(self, name: str, default: Any = None) -> Any:
        return self.fields.get(name, default)


new_event = tuple.__new__  # new_event(Event, (type_, fields)): an Event without the
# Python-level __new__ of a NamedTuple (the engine makes a few dozen a hand)


def event(type_: str, **fields: Any) -> Event:
    return Event(type_, fields)


class ActionSyntaxError(UsageError, ValueError):
    """An action line that cannot be read ("ann bet", "ann dance")."""


class Action(NamedTuple):
    """One input to a hand: `player verb [amount | target | seconds]` (a named tuple:
    immutable, and cheap, as replay makes one for every recorded input)."""

    verb: str
    player: str | None = None
    amount: int | None = None
    target: str | None = None
    reason: str | None = None

    @classmethod
    def parse(cls, text: str) -> Action:
        """Read a scenario line: "ann bet 100", "bob buy carl", "wait 30", "kick bob"."""
        words = text.split()
        if not words:
            raise ActionSyntaxError("empty action")
        if words[0] == "wait":
            return cls("wait", amount=_number(words, 1, text))
        if words[0] == "kick" and len(words) >= 2:
            return cls("kick", words[1], reason=" ".join(words[2:]) or None)
        if len(words) < 2 or words[1] not in _VERBS:
            raise ActionSyntaxError(
                f"{text!r}: expected 'PLAYER VERB [N]' with VERB one of {', '.join(sorted(_VERBS))}"
            )
        player, verb = words[0], words[1]
        if verb in _WITH_AMOUNT:
            return cls(verb, player, amount=_number(words, 2, text))
        if verb == "ante" and len(words) == 3 and words[2] in ("max", "clear"):
            return cls(verb, player, target=words[2])
        if verb in ("ante", "join"):
            return cls(verb, player, amount=_number(words, 2, text))
        if verb == "buy":
            if len(words) != 3:
                raise ActionSyntaxError(f"{text!r}: expected 'PLAYER buy TARGET'")
            return cls(verb, player, target=words[2])
        if len(words) != 2:
            raise ActionSyntaxError(f"{text!r}: {verb!r} takes no argument")
        return cls(verb, player)

    def as_fields(self) -> dict[str, Any]:
        fields = {
            "player": self.player,
            "amount": self.amount,
            "target": self.target,
            "reason": self.reason,
        }
        return {k: v for k, v in fields.items() if v is not None}

    @classmethod
    def from_event(cls, recorded: Event) -> Action | None:
        """The input that produced `recorded`, or None for a derived event."""
        if recorded.type not in INPUT_TYPES or "cause" in recorded.fields:
            return None
        return cls.from_fields(recorded.type, recorded.fields)

    @classmethod
    def from_fields(cls, verb: str, f: Mapping[str, Any]) -> Action:
        """The action an input event of type `verb` with fields `f` records."""
        return _new_action(
            cls,
            (
                verb,
                f.get("player"),
                f.get("amount") if verb in _TIMED_OR_AMOUNT else None,
                f.get("target"),
                f.get("reason"),
            ),
        )  # cls(...), sooner

    def __str__(self) -> str:
        parts = [self.player or "", self.verb] if self.verb != "wait" else ["wait"]
        parts += [str(v) for v in (self.amount, self.target, self.reason) if v is not None]
        return " ".join(p for p in parts if p)


_new_action = tuple.__new__  # replay makes an Action per recorded input: skip NamedTuple's __new__


def _number(words: list[str], index: int, text: str) -> int:
    try:
        value = int(words[index])
    except (IndexError, ValueError):
        raise ActionSyntaxError(
            f"{text!r}: expected a whole number after {words[index - 1]!r}"
        ) from None
    if len(words) > index + 1:
        raise ActionSyntaxError(f"{text!r}: unexpected {' '.join(words[index + 1 :])!r}")
    return value


def inputs_of(events: list[Event]) -> list[Action]:
    """The actions that, applied to the same starting hand, reproduce `events`."""
    return [action for action in map(Action.from_event, events) if action is not None]
