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
| 4 | (RULES corrected 2026-12-02) S7 ties between showing cards follow the profile's S6
      policy; S14 a street at the hand cap still gives every player the turn to check or
      fold; S18 the reconnect window runs from the disconnect, whoever is to act; L10 the
      opening is the opener's raise of the street; H5 the first bet is any of the first
      speaker's own amounts (the ante is not a bet to follow); H12 a three-card player
      needs the ante plus one follow at the cap to sit |

Some corrections need no flag: H4 (looking out of turn) only allows what no earlier hand
could record, and the unit of L10's raise chips is the compiled config's
(`betting.raise_chip_unit`, absent from configs compiled before it: coins).
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
    showing_by_policy: bool  # S7: showing-card ties follow the profile's S6 policy
    street_at_hand_cap: bool  # S14: a street nobody can bet on is still played (check/fold)
    window_from_disconnect: bool  # S18: the window runs from the disconnect, on any turn
    opening_is_raise: bool  # L10: the L9 opening is the opener's raise of the street
    first_bet_own_state: bool  # H5: the first speaker bets any amount of their own state
    seat_for_a_follow: bool  # H12: a three-card seat needs the ante plus a follow at the cap


REVISIONS = {
    "2": Revision("2", *[False] * 10),
    "3": Revision("3", *[True] * 4, *[False] * 6),
    "4": Revision("4", *[True] * 10),
}
ENGINE_VERSION = "4"  # what new hands are played by
CURRENT = REVISIONS[ENGINE_VERSION]


def revision(version: str | None) -> Revision:
    """The rules of engine `version` (SetupError naming G4 for a version this gmtool lacks)."""
    found = REVISIONS.get(version) if isinstance(version, str) else None
    if found is None:
        raise SetupError(
            "G4",
            f"engine version {version!r} is not one this gmtool replays "
            f"(versions {', '.join(REVISIONS)}); use the release that recorded it",
        )
    return found
