"""Reading `--since` / `--until`: a moment in time, as the store's timestamps write it.

Accepted: ISO 8601 dates and times, with a `T` or a space, with an offset (`+08:00`, `Z`)
or without one (then UTC, the store's zone); `today`, `yesterday` (midnight UTC) and
`now`; and a span back from now: `30m`, `2h`, `3d`, `1w` (also `90s`). Everything is
turned into UTC ISO 8601 with microseconds, the form stored rows carry, so comparing
the text compares the moments. Anything else is refused (exit 2) with the forms above.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from gmtool.errors import UsageError

_SPAN = re.compile(r"^(\d{1,6})\s*([smhdw])$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
FORMS = (
    "2026-11-30, 2026-11-30T08:00, 2026-11-30 08:00:00+08:00, ...Z, today, "
    "yesterday, now, or a span back from now: 90s, 30m, 2h, 3d, 1w"
)


def parse_when(text: str, flag: str, now: datetime | None = None) -> str:
    """`text` as the UTC ISO timestamp stored rows use; UsageError naming `flag` if it is
    not a moment gmtool can read."""
    now = now or datetime.now(UTC)
    word = text.strip().lower()
    try:
        moment = _named(word, now) or _span(word, now) or _iso(text.strip())
        if moment is not None:
            return moment.astimezone(UTC).isoformat(timespec="microseconds")
    except (OverflowError, ValueError):  # a moment outside the calendar Python knows
        pass
    raise UsageError(f"{flag} {text!r} is not a time gmtool reads; use {FORMS}")


def check_window(since: str | None, until: str | None) -> None:
    """UsageError unless `until` is after `since` (both as `parse_when` returns them, so
    comparing the text compares the moments): an empty window is a mistake, not a search."""
    if since is not None and until is not None and until <= since:
        raise UsageError(
            f"--until {until} is not after --since {since}: nothing can lie between them "
            "(--since is the first moment of the window, --until the first moment after it)"
        )


def _named(word: str, now: datetime) -> datetime | None:
    midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
    return {"now": now, "today": midnight, "yesterday": midnight - timedelta(days=1)}.get(word)


def _span(word: str, now: datetime) -> datetime | None:
    match = _SPAN.match(word)
    if not match:
        return None
    return now - timedelta(**{_UNITS[match.group(2)]: int(match.group(1))})


def _iso(text: str) -> datetime | None:
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)  # the store's zone
    return moment
