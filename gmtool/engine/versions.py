"""Engine versions: which rule fixes each one carries, so every hand replays by its own rules.

A hand records the engine version it was played by (`hand_started.engine`). When a rule
is corrected, the same inputs give other events, so the version goes up and the fix is a
flag here; replay starts a recorded hand with the flags of its version. History is never
rewritten: a hand dealt before a fix audits clean under every later engine, and one
dealt after it is held to the fix.

| version | what changed (RULES, corrected 2026-12-01) |
|---|---|
| 2 | the rules as first built |
| 3 | S18 a reconnect exactly n minutes after the disconnect is in time; S19 D-10 a banker
      who folded does not win an escape; H5 a follow is any of the follower's own amounts
      that meets the minimum; L10 a raise beyond the call is a sum of raise chips |
"""

from __future__ import annotations

from typing import NamedTuple

from gmtool.engine.errors import SetupError


class Revision(NamedTuple):
    """The rule fixes in force for a hand (a named tuple: one per version, shared)."""

    version: str
    reconnect_in_time_at_window: bool  # S18: only more than n minutes is an escape
    escape_winner_still_in_hand: bool  # S19 D-10: a folded banker does not win an escape
    follows_by_own_state: bool  # H5: the follower's own amounts, filtered by the minimum
    raise_chips: bool  # L10: the raise above the call is a sum of the profile's raise chips


REVISIONS = {
    "2": Revision("2", False, False, False, False),
    "3": Revision("3", True, True, True, True),
}
ENGINE_VERSION = "3"  # what new hands are played by
CURRENT = REVISIONS[ENGINE_VERSION]


def revision(version: str | None) -> Revision:
    """The rules of engine `version` (SetupError naming G4 for a version this gmtool lacks)."""
    found = REVISIONS.get(version) if isinstance(version, str) else None
    if found is None:
        raise SetupError("G4", f"engine version {version!r} is not one this gmtool replays "
                         f"(versions {', '.join(REVISIONS)}); use the release that recorded it")
    return found
