"""How large a number gmtool accepts anywhere it enters: a profile, a flag, an argument.

Every amount, id and count is bounded where it enters (profile validation and CLI
parsing), so nothing downstream meets a number SQLite cannot store in 64 bits, or a
float where an int belongs. The bounds are generous for any real game and far below
what the store can hold even summed over every player.
"""

from __future__ import annotations

MAX_COINS = 10**12  # one amount: an ante, a cap, a chip, an adjustment (a trillion coins)
MAX_BALANCE = 10**15  # what one player may hold after an adjustment
MAX_ID = 2**63 - 1  # a hand or GM action id (SQLite's largest integer)
MAX_COUNT = 10**6  # a count: --limit, rounds, antes, multiples, a score change
MAX_VERSION = 2**31 - 1  # a profile's version
MAX_SECONDS = 86_400  # a time limit in seconds (a day)
MAX_JOBS = 64  # worker processes of `audit --jobs` and `rules simulate --jobs`
