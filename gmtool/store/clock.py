"""The clock the store and the host are given: how long something took, and what time it is.

Nothing in the store or the host reads `time` itself. A `Clock` answers `monotonic()`
(seconds that only move forward: turns, deadlines, durations) and `wall()` (seconds since
the epoch, UTC: stored timestamps and the deadlines the console reads). Production uses
`SYSTEM`; tests and simulations run the host on virtual time (gmtool/house/virtual_time.py), so
an hour of play passes in a moment and a run is the same however busy the machine is.
The engine never sees a clock at all: time reaches it as `wait N` inputs.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Protocol


class Clock(Protocol):
    def monotonic(self) -> float:
        """Seconds from an arbitrary start; never goes back."""

    def wall(self) -> float:
        """Seconds since the Unix epoch (UTC)."""


class SystemClock:
    """The machine's clocks."""

    def monotonic(self) -> float:
        return time.monotonic()

    def wall(self) -> float:
        return time.time()


SYSTEM = SystemClock()


def iso(seconds: float) -> str:
    """Epoch seconds as ISO 8601 UTC with microseconds: sorts as text, parses back exactly."""
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="microseconds")


def now(clock: Clock = SYSTEM) -> str:
    """The clock's time now, as stored timestamps write it."""
    return iso(clock.wall())
