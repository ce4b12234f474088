"""Raise chips (RULES L10): which amounts clicks of a profile's chips add up to."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from gmtool.engine.chips import chip_step, chip_sum
from gmtool.engine.hand import Legal


def sums_by_brute_force(chips: tuple[int, ...], limit: int) -> set[int]:
    reachable = {0}
    for total in range(1, limit + 1):
        if any(total >= chip and total - chip in reachable for chip in chips):
            reachable.add(total)
    return reachable - {0}


@given(
    chips=st.lists(st.integers(1, 60), min_size=1, max_size=4, unique=True).map(
        lambda values: tuple(sorted(values))
    )
)
def test_l10_chip_sums_are_exactly_the_sums_of_clicks(chips: tuple[int, ...]) -> None:
    """Seed 000 2.6 "此加注是可以累加的": any number of clicks of any chips."""
    limit = 4 * max(chips) ** 2
    expected = sums_by_brute_force(chips, limit)
    assert {amount for amount in range(-3, limit + 1) if chip_sum(amount, chips)} == expected


def test_l10_the_seeds_chips_make_every_amount_and_others_leave_gaps() -> None:
    assert all(chip_sum(n, (1, 5, 10, 50, 100)) for n in range(1, 500))
    assert [n for n in range(1, 200) if chip_sum(n, (50, 100))] == [50, 100, 150]
    assert [n for n in range(1, 40) if chip_sum(n, (10, 25))] == [10, 20, 25, 30, 35]
    assert chip_step((10, 25)) == 5 and not chip_sum(0, (1,))


def test_l10_a_chip_raise_lists_only_amounts_the_chips_make() -> None:
    """Menus and bots pick from `Legal.actions`: every amount offered is a call plus chips."""
    raise_ = Legal("raise", 25, 135, 5, chips=(10, 25), base=15)  # the call 15 + chips
    amounts = [action.amount for action in raise_.actions("ann")]
    assert amounts[:6] == [25, 35, 40, 45, 50, 55]  # 30 would be 15 over the call
    assert [a.amount for a in raise_.actions("ann", limit=3)] == [25, 35, 40]
    assert all(chip_sum(amount - 15, (10, 25)) for amount in amounts)
    assert raise_.allows(40) and not raise_.allows(30) and not raise_.allows(140)
    assert raise_.as_json() == {
        "verb": "raise",
        "min": 25,
        "max": 135,
        "step": 5,
        "call": 15,
        "chips": [10, 25],
    }
