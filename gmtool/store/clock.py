"""Wall-clock timestamps for stored rows (the store and host may read the clock; the engine never)."""

from __future__ import annotations

from datetime import datetime, timezone


def now() -> str:
    """UTC time as ISO 8601 with microseconds: sorts as text, parses back exactly."""
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")
