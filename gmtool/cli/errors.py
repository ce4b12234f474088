"""Where errors become user messages: the single place an exception is turned into text.

Bad input of any kind ends with one message on stderr and exit code 2 (usage or
environment) or 1 (a finding); a traceback appears only with --debug or GMTOOL_DEBUG=1.
The conversion sits in the root command group, so the console script and tests that
invoke the app directly (typer's CliRunner) behave the same.
"""

from __future__ import annotations

import os
import sys

import typer
from typer.core import TyperGroup

from gmtool.cli.console import Abort, console

# Domain errors by class name, so this module need not import the layers defining them.
_USAGE_ERRORS = {"ProfileFileError", "DeckSpecError", "CardError", "KeyPathError",
                 "ScenarioError", "StoreError"}
_FINDING_ERRORS = {"InvalidProfile", "IllegalAction", "Refused"}


def exit_code_for(error: Exception) -> int:
    """Print the one message for `error` and return its exit code."""
    if isinstance(error, Abort):
        if error.message:
            console.error(error.message)
        return error.code
    name = type(error).__name__
    if name in _FINDING_ERRORS:
        console.error(str(error))
        return 1
    if name in _USAGE_ERRORS or isinstance(error, OSError):
        console.error(str(error))
        return 2
    console.error(f"internal error: {name}: {error} (rerun with --debug for the traceback)")
    return 2


class GmtoolGroup(TyperGroup):
    """The root group: runs the command and turns our exceptions into exit codes."""

    def invoke(self, ctx):  # noqa: ANN001 - click's signature
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            console.error("interrupted")
            raise typer.Exit(130) from None
        except BrokenPipeError:
            # The reader went away (`gmtool ... | head`): stop quietly, as Unix tools do.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            raise typer.Exit(141) from None
        except Exception as error:  # noqa: BLE001 - the one place errors become messages
            if type(error).__module__.split(".")[0] in ("typer", "click"):
                raise  # usage errors and exits: click reports them itself (exit 2)
            if os.environ.get("GMTOOL_DEBUG") == "1":
                raise
            raise typer.Exit(exit_code_for(error)) from None
