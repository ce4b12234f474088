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
# Unicode calls more characters "default ignorable" (drawn as nothing) than category Cf
# holds: the Hangul fillers (U+115F, U+1160, U+3164, U+FFA0), the combining grapheme
# joiner U+034F, the variation selectors (U+180B-U+180F, U+FE00-U+FE0F, U+E0100-U+E01EF)
# and Khmer's invisible vowels U+17B4-U+17B5; they are refused too (so is an emoji's
# U+FE0F: a name or a reason is plain text). So are private-use and unassigned code points
# (Co, Cn), which no font draws the same way twice, and U+2800, the braille pattern
# blank, a favourite of invisible names.
_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
_IGNORABLE = (  # Default_Ignorable_Code_Point (Unicode's DerivedCoreProperties) not in Cf
    (0x034F, 0x034F),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFFA0, 0xFFA0),
    (0xE0100, 0xE01EF),
    (0x2800, 0x2800),  # not default ignorable, but drawn blank: the braille pattern blank
)


def is_unsafe_character(character: str) -> bool:
    """Whether `character` may not appear in a name, a reason or a profile string."""
    if unicodedata.category(character) in _UNSAFE_CATEGORIES:
        return True
    code = ord(character)
    return any(low <= code <= high for low, high in _IGNORABLE)


def unsafe_characters(text: str, allowed: str = "") -> list[str]:
    """The characters of `text` it may not hold (see `is_unsafe_character`) but those in
    `allowed`, each once, as people can read them: `U+202E RIGHT-TO-LEFT OVERRIDE`,
    `U+001B (a control character)`."""
    found = dict.fromkeys(c for c in text if c not in allowed and is_unsafe_character(c))
    return [f"U+{ord(c):04X} {unicodedata.name(c, _unnamed(c))}" for c in found]


def _unnamed(character: str) -> str:
    """What a character without a Unicode name is (the control characters, surrogates)."""
    kind = unicodedata.category(character)
    words = {"Cs": "a lone surrogate", "Co": "a private-use character", "Cn": "unassigned"}
    return f"({words.get(kind, 'a control character')})"


def composed(text: str) -> str:
    """`text` in Unicode's composed form (NFC): "jose" + U+0301 and "josé" are one name. A
    name a person types is composed before it is used (or made); one a machine sends in
    another form is refused, so no two players' names differ only in how an accent is
    encoded."""
    return unicodedata.normalize("NFC", text)
