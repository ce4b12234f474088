"""Chip buttons: which amounts clicks of a set of chips add up to (RULES L10).

Seed 000's raise is "the chosen amount plus the previous player's bet", where the chosen
amount is made by clicking chip buttons, each any number of times ("此加注是可以累加的").
With the seed's chips (1, 5, 10, 50, 100) that is any whole number; with chips such as
(50, 100) only multiples of 50; with (10, 25) every multiple of 5 but 5 and 15.
"""

from __future__ import annotations

from functools import lru_cache
from math import gcd


def chip_sum(amount: int, chips: tuple[int, ...]) -> bool:
    """Whether `amount` (> 0) is a sum of one or more clicks of `chips` (each > 0).

    >>> chip_sum(35, (10, 25)), chip_sum(15, (10, 25))
    (True, False)
    """
    if amount <= 0 or not chips:
        return False
    step, reachable, frobenius_bound = _sums(chips)
    if amount % step:
        return False
    units = amount // step
    return units >= frobenius_bound or reachable[units]


def chip_step(chips: tuple[int, ...]) -> int:
    """The greatest common divisor of the chips: every sum is a multiple of it."""
    return _sums(chips)[0]


@lru_cache(maxsize=64)
def _sums(chips: tuple[int, ...]) -> tuple[int, list[bool], int]:
    """The chips' step, which small totals (in steps) they reach, and a bound past which
    every total is reached: worked out once per set of chips.

    For coprime chips every total of at least (smallest - 1) x (largest - 1) is a sum
    (a bound on the Frobenius number of two or more coprime values), so only the totals
    below it need the table.
    """
    step = 0
    for chip in chips:
        step = gcd(step, chip)
    units = [chip // step for chip in chips]
    bound = (min(units) - 1) * (max(units) - 1) + 1
    reachable = [False] * (bound + 1)
    reachable[0] = True
    for total in range(1, bound + 1):
        reachable[total] = any(total >= chip and reachable[total - chip] for chip in units)
    return step, reachable, bound
