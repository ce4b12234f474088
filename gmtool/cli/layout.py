"""How a table fits the screen it is printed on (`Console.table`, `tables watch`).

A table that fits is shown as it is. One that does not first loses its empty columns (a
kept one too: an empty column has nothing to keep), then the columns its command names
as least important, in that order. Then long text wraps: between words or after a "/"
(a `table/player` target), never inside a word; a kept column (an id, a key) only
between words, so an id is never broken. When that cannot fit, or would leave prose too
narrow to read, every row is printed as a record, one "column: value" line a field.
Nothing is ever cut short with an ellipsis, and the record layout loses no column at all.

Widths are terminal cells (a CJK character takes two), measured with rich's `cell_len`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

BORDER = 3  # a column's rule and its padding on either side; the table adds 1 more
READABLE = 16  # a table whose prose would wrap narrower than this is shown as records
RECORD_INDENT = 2

_PIECES = re.compile(r"\s+|[^\s/]*/|[^\s/]+")  # words, and word parts ending "/" (table/player)
_WORDS = re.compile(r"\s+|\S+")  # a kept column breaks only between words


def cells(text: str) -> int:
    """The width of `text` on a terminal."""
    from rich.cells import cell_len

    return cell_len(text)


@dataclass(frozen=True)
class Fit:
    """The columns a table shows and the width of each; `widths` is None when the rows are
    printed as records instead (then every column is shown)."""

    shown: tuple[int, ...]
    widths: tuple[int, ...] | None


def fit(
    columns: Sequence[str],
    rows: Sequence[Sequence[str]],
    width: int,
    keep: Sequence[str] = (),
    drop: Sequence[str] = (),
) -> Fit:
    """How `rows` under `columns` fit in `width` cells (see the module's doc)."""
    natural = [
        max([_widest_line(column), *(_widest_line(row[i]) for row in rows)])
        for i, column in enumerate(columns)
    ]
    shown = list(range(len(columns)))

    def fits(widths: Sequence[int]) -> bool:
        return sum(widths[i] + BORDER for i in shown) + 1 <= width

    empty = [i for i in shown if not any(r[i].strip() for r in rows)]  # kept ones too
    least_important = empty + [columns.index(c) for c in drop if c in columns and c not in keep]
    for index in [None, *least_important]:
        if index is not None and index in shown and len(shown) > 1:
            shown.remove(index)
        if fits(natural):
            return Fit(tuple(shown), tuple(natural[i] for i in shown))
    least = [
        max([_widest_piece(column), *(_widest_piece(row[i], column in keep) for row in rows)])
        for i, column in enumerate(columns)
    ]
    readable = [  # prose (a cell of three words or more) must not be squeezed thinner
        max(least[i], min(natural[i], READABLE)) if _prose(column, rows, i, keep) else least[i]
        for i, column in enumerate(columns)
    ]
    if not fits(readable):
        return Fit(tuple(range(len(columns))), None)
    widths = {i: least[i] for i in shown}
    spare = width - 1 - sum(widths[i] + BORDER for i in shown)
    # The spare cells: first to the columns that are not prose, the least wanting first, so
    # a date or an id shows on one line; then shared fairly among the prose columns (one
    # that needs less than its share gets all it needs, the others split what is left).
    prose = {i for i in shown if _prose(columns[i], rows, i, keep)}
    pending = sorted(
        (i for i in shown if widths[i] < natural[i]),
        key=lambda i: (i in prose, natural[i] - widths[i]),
    )
    while pending and spare > 0:
        share, extra = divmod(spare, len(pending))
        need = natural[pending[0]] - widths[pending[0]]
        if pending[0] not in prose or need <= share:
            given = min(need, spare)
            widths[pending.pop(0)] += given
            spare -= given
            continue
        for n, index in enumerate(pending):
            widths[index] += share + (n < extra)
        break
    return Fit(tuple(shown), tuple(widths[i] for i in shown))


def wrap(text: str, width: int, whole: bool = False) -> list[str]:
    """`text` in lines of at most `width` cells, broken between words and, unless `whole`,
    after a "/"; a piece wider than `width` stays whole on a line of its own."""
    lines: list[str] = []
    for paragraph in text.split("\n"):
        line, gap = "", ""
        for piece in (_WORDS if whole else _PIECES).findall(paragraph):
            if piece.isspace():
                gap = piece if line else ""
                continue
            if line and cells(line + gap + piece) > width:
                lines.append(line)
                line = piece
            else:
                line += gap + piece
            gap = ""
        lines.append(line)
    return lines


def records(
    columns: Sequence[str], rows: Sequence[Sequence[str]], width: int, keep: Sequence[str] = ()
) -> list[str]:
    """Every row as a record: its first column's name and value on a line, then an
    indented "column: value" line for each other cell that is not empty, wrapped."""
    label_width = max([0, *(cells(column) + 1 for column in columns[1:])])
    value_width = max(10, width - RECORD_INDENT - label_width - 1)
    pad = " " * (RECORD_INDENT + label_width + 1)
    out = []
    for row in rows:
        out.append(f"{columns[0]} {row[0]}".rstrip())
        for column, value in zip(columns[1:], row[1:], strict=True):
            if not value.strip():
                continue
            label = " " * RECORD_INDENT + f"{column}:".ljust(label_width) + " "
            for n, line in enumerate(wrap(value, value_width, whole=column in keep)):
                out.append((label if n == 0 else pad) + line)
    return out


def _prose(column: str, rows: Sequence[Sequence[str]], index: int, keep: Sequence[str]) -> bool:
    return column not in keep and any(len(row[index].split()) > 2 for row in rows)


def _widest_line(text: str) -> int:
    return max(cells(line) for line in text.split("\n"))


def _widest_piece(text: str, whole: bool = False) -> int:
    """The widest part of `text` that `wrap` never breaks."""
    pieces = (_WORDS if whole else _PIECES).findall(text)
    return max([0, *(cells(piece) for piece in pieces if not piece.isspace())])
