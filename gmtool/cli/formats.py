"""How text output writes values that appear on many screens: coins and moments.

One coin format in every text output: thousands separated by commas (`248,000`), a
change with its sign (`+1,000,000,000,000`, `-250`, `+0`). JSON keeps plain integers.
"""

from __future__ import annotations


def coins(amount: int) -> str:
    """An amount of coins: `1,000,000`."""
    return f"{amount:,}"


def signed_coins(amount: int) -> str:
    """A change of coins: `+1,000`, `-250`, `+0`."""
    return f"{amount:+,}"


def moment(stamp: str | None) -> str:
    """A stored time (ISO 8601, UTC) to the second, with a space between date and time so
    a narrow column can put them on two lines: `2026-12-02 05:47:13`."""
    return (stamp or "")[:19].replace("T", " ")
