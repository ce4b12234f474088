"""Errors of the engine: each names the rule it enforces."""

from __future__ import annotations

from gmtool.errors import Refused


class IllegalAction(Refused):
    """An action the rules do not allow at this moment; the hand's state is unchanged."""

    def __init__(self, rule: str, player: str | None, reason: str) -> None:
        self.rule = rule
        self.player = player
        self.reason = reason
        who = f"{player}: " if player else ""
        super().__init__(f"RULES {rule}: {who}{reason}")


class SetupError(Refused, ValueError):
    """A hand or table that cannot start as described (seats, coins, cards)."""

    def __init__(self, rule: str, reason: str) -> None:
        self.rule = rule
        self.reason = reason
        super().__init__(f"RULES {rule}: {reason}")
