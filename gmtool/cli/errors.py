"""Where errors become user messages: the single place an exception is turned into text.

Every error gmtool raises for a user derives from `gmtool.errors.GmtoolError` and carries
its exit code (1 = a finding, 2 = usage or environment); this module prints its one
message on stderr and exits with that code. Anything else is an internal error: one line
naming it, and a traceback only with --debug or GMTOOL_DEBUG=1. The conversion sits in
the root command group, so the console script and tests that invoke the app directly
(typer's CliRunner) behave the same.
"""

from __future__ import annotations

import errno
import os

import typer
from typer.core import TyperGroup

from gmtool.cli.console import console, flush_stdout, reader_gone
from gmtool.errors import GmtoolError


def expected(error: Exception) -> bool:
    """Whether `error` is one gmtool reports to users as it is (with or without --debug): our
    own errors and a file that cannot be read or written; anything else is internal."""
    return isinstance(error, (GmtoolError, OSError))


def exit_code_for(error: Exception) -> int:
    """Print the one message for `error` and return its exit code."""
    if isinstance(error, GmtoolError):
        if str(error):
            console.error(str(error))
        return error.exit_code
    if isinstance(error, OSError):  # a file the user named cannot be read or written
        console.error(str(error))
        return 2
    console.error(
        f"internal error: {type(error).__name__}: {error} (rerun with --debug for the traceback)"
    )
    return 2


class GmtoolGroup(TyperGroup):
    """The root group: runs the command and turns our exceptions into exit codes."""

    def main(self, *args, **kwargs):  # noqa: ANN002, ANN003 - click's signature
        try:
            return super().main(*args, **kwargs)
        except SystemExit as stop:
            # click's own output (--help, usage) met a reader that went away: click exits 1
            if isinstance(stop.__context__, OSError) and stop.__context__.errno == errno.EPIPE:
                raise SystemExit(reader_gone()) from None
            raise

    def invoke(self, ctx):  # noqa: ANN001 - click's signature
        try:
            result = super().invoke(ctx)
        except KeyboardInterrupt:
            console.error("interrupted")
            raise typer.Exit(130) from None
        except BrokenPipeError:
            raise typer.Exit(reader_gone()) from None
        except SystemExit as stop:
            if isinstance(stop.__context__, BrokenPipeError):  # rich's own broken-pipe exit
                raise typer.Exit(reader_gone()) from None
            raise
        except Exception as error:  # noqa: BLE001 - the one place errors become messages
            if type(error).__module__.split(".")[0] in ("typer", "click"):
                flush_stdout()  # an exit code the command chose stays, reader or not
                raise  # usage errors and exits: click reports them itself (exit 2)
            debug = ctx.params.get("debug") or os.environ.get("GMTOOL_DEBUG") == "1"
            if debug and not expected(error):
                raise  # --debug: the traceback of an internal error, never of bad input
            raise typer.Exit(exit_code_for(error)) from None
        flush_stdout()
        return result
