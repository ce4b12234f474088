"""How large a number, and which text, gmtool accepts anywhere it enters: a profile, a
flag, an argument.

Every amount, id and count is bounded where it enters (profile validation and CLI
parsing), so nothing downstream meets a number SQLite cannot store in 64 bits, or a
float where an int belongs. The bounds are generous for any real game and far below
what the store can hold even summed over every player.
"""

from __future__ import annotations

import unicodedata

MAX_COINS = 10**12  # one amount: an ante, a cap, a chip, an adjustment (a trillion coins)
MAX_BALANCE = 10**15  # what one player may hold after an adjustment
MAX_ID = 2**63 - 1  # a hand or GM action id (SQLite's largest integer)
MAX_COUNT = 10**6  # a count: --limit, rounds, antes, multiples, a score change
MAX_VERSION = 2**31 - 1  # a profile's version
MAX_SECONDS = 86_400  # a time limit in seconds (a day)
MAX_JOBS = 64  # worker processes of `audit --jobs` and `rules simulate --jobs`
MAX_TEXT = 500  # the longest name or reason a GM may give, in characters

# Text is bounded too: a name, a reason or a string in a profile is shown to people, so it
# may hold no character that acts on a terminal or on how text reads instead of being
# read: control characters (ESC, BEL, newline...), line and paragraph separators, and
# format characters (Unicode category Cf): bidirectional controls such as U+202E, which
# make `evil \u202egnp.exe` read "evil exe.png", and zero-width or invisible characters
# (U+200B-U+200D, U+2060, U+FEFF...), which make two different names look the same.
_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


def is_unsafe_character(character: str) -> bool:
    """Whether `character` may not appear in a name, a reason or a profile string."""
    return unicodedata.category(character) in _UNSAFE_CATEGORIES


def unsafe_characters(text: str, allowed: str = "") -> list[str]:
    """The characters of `text` it may not hold (see `is_unsafe_character`) but those in
    `allowed`, each once, as people can read them: `U+202E RIGHT-TO-LEFT OVERRIDE`,
    `U+001B (a control character)`."""
    found = dict.fromkeys(c for c in text if c not in allowed and is_unsafe_character(c))
    return [f"U+{ord(c):04X} {unicodedata.name(c, _unnamed(c))}" for c in found]


def _unnamed(character: str) -> str:
    """What a character without a Unicode name is (the control characters, surrogates)."""
    kind = unicodedata.category(character)
    return "(a lone surrogate)" if kind == "Cs" else "(a control character)"
