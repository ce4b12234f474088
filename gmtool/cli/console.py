"""The one console facade every command writes through.

Commands never call print, rich.print or sys.exit: they hand text, tables or JSON to
this facade and raise `Abort` (or a domain error) to stop. Plain text goes straight to
the stream; rich is imported only when a table or a progress display is drawn, which
keeps start-up fast for the commands that never draw one.
"""

from __future__ import annotations

import contextlib
import json
import sys
from typing import Any, Iterable, Sequence, TextIO

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
        self.out.write(text + "\n")

    def lines(self, texts: Iterable[str]) -> None:
        for text in texts:
            self.line(text)

    def json(self, value: Any) -> None:
        self.out.write(json.dumps(value, ensure_ascii=False, indent=2) + "\n")

    def raw(self, text: str) -> None:
        self.out.write(text)

    def error(self, message: str) -> None:
        self.err.write(f"error: {message}\n")

    def diagnostic(self, text: str) -> None:
        """A line on stderr that carries its own severity (a validation finding)."""
        self.err.write(text + "\n")

    def warning(self, message: str) -> None:
        self.err.write(f"warning: {message}\n")

    def success(self, message: str) -> None:
        self.line(message)

    def table(self, title: str, columns: Sequence[str], rows: Iterable[Sequence[Any]],
              right_align: Sequence[int] = ()) -> None:
        """A rich table on a terminal; the same table in plain aligned text elsewhere."""
        from rich.console import Console as RichConsole
        from rich.table import Table

        self.line(title)  # a plain line: a rich title would wrap at the table's width
        table = Table(show_lines=False)
        for index, column in enumerate(columns):
            table.add_column(column, justify="right" if index in right_align else "left",
                             no_wrap=True)
        for row in rows:
            table.add_row(*(str(cell) for cell in row))
        RichConsole(file=self.out, width=_width(self.out), highlight=False).print(table)


    @contextlib.contextmanager
    def progress(self, description: str, total: float):
        """A progress bar on a terminal (nothing elsewhere); yields advance(count)."""
        import time

        if not self.out.isatty():
            yield lambda count: None
            return
        from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

        started = time.monotonic()
        with Progress(TextColumn("{task.description}"), BarColumn(),
                      TextColumn("{task.fields[count]} hands"), TimeRemainingColumn(),
                      transient=True) as bar:
            task = bar.add_task(description, total=total, count=0)

            def advance(count: int) -> None:
                bar.update(task, completed=min(total, time.monotonic() - started), count=count)

            yield advance


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
