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
import os
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TextIO

from gmtool.errors import GmtoolError


def reader_gone() -> int:
    """The reader of stdout went away (`gmtool ... | head -1`): what it read was all it
    wanted. Further output goes nowhere, so nothing fails again when Python flushes stdout
    at exit; the command goes on to its own exit code (1 for a finding, as without the
    pipe). Returns 0, the code of a command stopped by it mid-listing."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # stdout has no file descriptor (a test's buffer)
        pass
    return 0


def flush_stdout() -> None:
    """Write what is still buffered now, where a reader that went away is noticed (and
    quietly ignored), rather than at interpreter exit (a warning and exit 120)."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        reader_gone()
    except (OSError, ValueError):
        pass  # a closed or odd stdout: nothing more can be shown on it


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
        self.reader_left = False  # stdout's reader went away: output goes nowhere now

    @property
    def out(self) -> TextIO:
        return self._out or sys.stdout

    @property
    def err(self) -> TextIO:
        return self._err or sys.stderr

    def write(self, text: str) -> None:
        """`text` on stdout; a reader gone away (`| head -1`) ends the output quietly, not
        the command: what it goes on to decide (its exit code, its stderr) still counts."""
        try:
            self.out.write(text)
        except BrokenPipeError:
            self.gone()

    def flush(self) -> None:
        """What stdout still buffers written now (a reader gone: as in `write`)."""
        try:
            self.out.flush()
        except BrokenPipeError:
            self.gone()

    def gone(self) -> None:
        """The reader of stdout went away: output goes nowhere from now on."""
        self.reader_left = True
        reader_gone()

    def line(self, text: str = "") -> None:
        self.write(printable(text) + "\n")

    def lines(self, texts: Iterable[str]) -> None:
        for text in texts:
            self.line(text)

    def json(self, value: Any) -> None:
        from gmtool.canonical import pretty_json  # (hashlib and json: not for --help)

        self.write(pretty_json(value))

    def raw(self, text: str) -> None:
        """Text as it is, newlines and tabs kept, other control characters escaped."""
        self.write(printable(text))

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
        """A table fitted to the output's width (cli/layout.py): on a terminal, its width;
        in a file or a pipe, $COLUMNS, else wide enough for any table.

        When it does not fit, its empty columns and then the columns named in `drop`
        go first, in that order; long text wraps; the columns named in `keep` (ids, keys)
        are never broken. A table that still cannot fit is printed as records, one
        "column: value" line a field. Nothing is ever cut short.
        """
        width = output_width(self.out)
        self.lines(_wrap_title(title, width))  # plain lines: a rich title would be cut
        shown = fitted_table(columns, rows, width, right_align, keep, drop)
        if isinstance(shown, list):
            self.lines(shown)  # records: plain lines, never wrapped again by rich
        else:
            _rich_console(self.out, width, self.gone).print(shown)

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
    """A rich renderable of `rows` fitted to `width` (see `Console.table`), for a live
    display: a table, or the rows as records in one text."""
    from rich.text import Text

    shown = fitted_table(columns, rows, width, right_align, keep, drop, title)
    if isinstance(shown, list):
        return Text("\n".join(([title] if title else []) + shown))
    return shown


def fitted_table(
    columns: Sequence[str],
    rows: Iterable[Sequence[Any]],
    width: int,
    right_align: Sequence[int] = (),
    keep: Sequence[str] = (),
    drop: Sequence[str] = (),
    title: str | None = None,
):
    """A rich Table of `rows` fitted to `width` (cli/layout.py), or, where no table fits,
    the rows as record lines. Cells are plain text, control characters escaped, never rich
    markup."""
    from rich.table import Table
    from rich.text import Text

    from gmtool.cli import layout

    columns = [printable(str(column)) for column in columns]
    cells = [[printable(str(cell)) for cell in row] for row in rows]
    fitted = layout.fit(columns, cells, width, keep, drop)
    if fitted.widths is None:
        return layout.records(columns, cells, width, keep)
    table = Table(show_lines=False, title=title)
    for index, column_width in zip(fitted.shown, fitted.widths, strict=True):
        table.add_column(
            Text("\n".join(layout.wrap(columns[index], column_width))),
            justify="right" if index in right_align else "left",
            width=column_width,
            no_wrap=True,  # wrapped already, by layout.wrap
            overflow="fold",
        )
    for row in cells:
        table.add_row(  # no markup, ever
            *(
                Text("\n".join(layout.wrap(row[i], w, whole=columns[i] in keep)))
                for i, w in zip(fitted.shown, fitted.widths, strict=True)
            )
        )
    return table


def _rich_console(stream: TextIO, width: int, gone: Callable[[], None] = reader_gone):
    from rich.console import Console as RichConsole

    class Quiet(RichConsole):
        def on_broken_pipe(self) -> None:  # rich exits 1 (a finding); the command goes on
            self.quiet = True
            gone()

    return Quiet(file=stream, width=width, highlight=False)


def _wrap_title(title: str, width: int) -> list[str]:
    from gmtool.cli.layout import wrap

    return wrap(title, width, whole=True)


MAX_WIDTH = 10_000  # the widest $COLUMNS taken

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
    if not is_unsafe_character(character):
        return character
    shown = repr(character)[1:-1]  # `\x1b`, `\u202e`; a Hangul filler repr() keeps as is
    if shown != character:
        return shown
    code = ord(character)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def output_width(stream: TextIO) -> int:
    """The terminal's width; in a file or a pipe $COLUMNS, else wide enough for any table."""
    import os

    try:
        if stream.isatty():
            return os.get_terminal_size(stream.fileno()).columns
    except (OSError, ValueError, AttributeError):
        pass
    columns = os.environ.get("COLUMNS", "")
    if columns.isascii() and columns.isdigit() and 0 < int(columns) <= MAX_WIDTH:
        return int(columns)
    return 200


console = Console()
