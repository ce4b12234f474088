"""The one console facade every command writes through.

Commands never call print, rich.print or sys.exit: they hand text, tables or JSON to
this facade and raise `Abort` (or a domain error) to stop. Plain text goes straight to
the stream; rich is imported only when a table or a progress display is drawn, which
keeps start-up fast for the commands that never draw one.

Text carries what users typed (player and GM names, reasons, profile titles), so every
control character in it is shown escaped (`\x1b`), never sent to the terminal, and
rich markup in it is never interpreted. JSON output stays exact.
"""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Iterable, Sequence
from typing import Any, TextIO

from gmtool.errors import GmtoolError


class Abort(GmtoolError):
    """Stop the command with a message and an exit code (1 = finding, 2 = usage)."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.message = message
        self.code = self.exit_code = code


class Console:
    """Writes data to stdout and diagnostics to stderr."""

    def __init__(self, out: TextIO | None = None, err: TextIO | None = None) -> None:
        self._out = out
        self._err = err

    @property
    def out(self) -> TextIO:
        return self._out or sys.stdout

    @property
    def err(self) -> TextIO:
        return self._err or sys.stderr

    def line(self, text: str = "") -> None:
        self.out.write(printable(text) + "\n")

    def lines(self, texts: Iterable[str]) -> None:
        for text in texts:
            self.line(text)

    def json(self, value: Any) -> None:
        from gmtool.canonical import pretty_json  # (hashlib and json: not for --help)

        self.out.write(pretty_json(value))

    def raw(self, text: str) -> None:
        """Text as it is, newlines and tabs kept, other control characters escaped."""
        self.out.write(printable(text))

    def error(self, message: str) -> None:
        self.err.write(f"error: {printable(message)}\n")

    def diagnostic(self, text: str) -> None:
        """A line on stderr that carries its own severity (a validation finding)."""
        self.err.write(printable(text) + "\n")

    def warning(self, message: str) -> None:
        self.err.write(f"warning: {printable(message)}\n")

    def success(self, message: str) -> None:
        self.line(message)

    def table(
        self,
        title: str,
        columns: Sequence[str],
        rows: Iterable[Sequence[Any]],
        right_align: Sequence[int] = (),
        keep: Sequence[str] = (),
        drop: Sequence[str] = (),
    ) -> None:
        """A rich table on a terminal; the same table in plain aligned text elsewhere.

        When the terminal is too narrow, the columns named in `drop` go first, in that
        order; the columns named in `keep` (ids, who is to act, outcomes) are never cut
        short: they wrap instead. Other columns may be shortened with an ellipsis.
        """
        from rich.console import Console as RichConsole

        self.line(title)  # a plain line: a rich title would wrap at the table's width
        width = _width(self.out)
        table = rich_table(columns, rows, width, right_align, keep, drop)
        RichConsole(file=self.out, width=width, highlight=False).print(table)

    @contextlib.contextmanager
    def progress(self, description: str, total: float):
        """A progress bar on a terminal (nothing elsewhere); yields advance(count)."""
        import time

        if not self.out.isatty():
            yield lambda count: None
            return
        from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

        started = time.monotonic()
        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            TextColumn("{task.fields[count]} hands"),
            TimeRemainingColumn(),
            transient=True,
        ) as bar:
            task = bar.add_task(description, total=total, count=0)

            def advance(count: int) -> None:
                bar.update(task, completed=min(total, time.monotonic() - started), count=count)

            yield advance


def rich_table(
    columns: Sequence[str],
    rows: Iterable[Sequence[Any]],
    width: int,
    right_align: Sequence[int] = (),
    keep: Sequence[str] = (),
    drop: Sequence[str] = (),
    title: str | None = None,
):
    """A rich Table of `rows` fitted to `width` (see `Console.table`); cells are plain
    text, control characters escaped, never rich markup."""
    from rich.table import Table
    from rich.text import Text

    rows = [[printable(str(cell)) for cell in row] for row in rows]
    shown = _fit(list(columns), rows, width, drop)
    table = Table(show_lines=False, title=title)
    for index in shown:
        column = columns[index]
        table.add_column(
            column,
            justify="right" if index in right_align else "left",
            no_wrap=column not in keep,
            overflow="fold" if column in keep else "ellipsis",
            min_width=max([len(column), *(len(r[index]) for r in rows)])
            if column in keep
            else None,
        )
    for row in rows:
        table.add_row(*(Text(row[index]) for index in shown))  # no markup, ever
    return table


# Anything that is not plain printable ASCII, a newline or a tab is looked at one by one.
_SUSPECT = re.compile(r"[^\t\n\x20-\x7e]")


def printable(text: str) -> str:
    """`text` with every control character but newline and tab, and every invisible or
    bidirectional formatting character (zero-width spaces, U+202E and the like) shown
    escaped (`\\x1b`, `\\u202e`), so what a user typed can never move the cursor, clear the
    screen, retitle the window or make the rest of a line read backwards."""
    if _SUSPECT.search(text) is None:
        return text
    return _SUSPECT.sub(_escaped, text)


def _escaped(match: re.Match[str]) -> str:
    from gmtool.bounds import is_unsafe_character

    character = match.group()
    return repr(character)[1:-1] if is_unsafe_character(character) else character


def _fit(columns: list[str], rows: list[list[str]], width: int, drop: Sequence[str]) -> list[int]:
    """The indices of the columns to show: all, or without the first columns of `drop`
    until the widest cells fit in `width` (3 characters of border a column, 1 more)."""
    widths = [
        max([len(column), *(len(row[i]) for row in rows)]) for i, column in enumerate(columns)
    ]
    shown = list(range(len(columns)))
    for name in drop:
        if sum(widths[i] + 3 for i in shown) + 1 <= width:
            break
        if name in columns:
            shown.remove(columns.index(name))
    return shown


def _width(stream: TextIO) -> int:
    """The terminal's width; wide enough for any table when writing to a file or pipe."""
    try:
        import os

        if stream.isatty():
            return os.get_terminal_size(stream.fileno()).columns
    except (OSError, ValueError, AttributeError):
        pass
    return 200


console = Console()
