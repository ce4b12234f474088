"""cli/layout.py `fit`: a column that holds nothing goes first when a table does not fit,
a kept one too (an outside probe of issue 23 found `tables list --closed` at 60 columns
keeping an empty "pot" column, kept because a live table's pot must never be cut short,
while it printed the closed tables as records)."""

from __future__ import annotations

from gmtool.cli.layout import fit
from gmtool.cli.render_tables import KEEP

COLUMNS = ["table", "system", "room", "pot", "to act", "host"]
CLOSED = [
    ["qq-showhand-training-1", "stud5", "training", "", "closed", "closed"],
    ["qq-showhand-junior-2", "stud5", "junior", "", "closed", "closed"],
]


def test_an_empty_kept_column_is_dropped_before_the_table_becomes_records() -> None:
    shown = fit(COLUMNS, CLOSED, 60, keep=KEEP, drop=("system", "room"))
    assert shown.widths is not None  # still a table
    assert COLUMNS.index("pot") not in shown.shown
    assert COLUMNS.index("table") in shown.shown and COLUMNS.index("host") in shown.shown


def test_a_kept_column_with_something_in_it_stays() -> None:
    live = [[*row[:3], "1,200", "bot-001", "live"] for row in CLOSED]
    shown = fit(COLUMNS, live, 60, keep=KEEP, drop=("system", "room"))
    assert COLUMNS.index("pot") in shown.shown


def test_a_table_that_fits_keeps_its_empty_columns() -> None:
    assert fit(COLUMNS, CLOSED, 300, keep=KEEP).shown == tuple(range(len(COLUMNS)))
