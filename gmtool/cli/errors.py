"""Where errors become user messages: the single place an exception is turned into text.

Bad input of any kind ends with one line on stderr and exit code 2 (usage or
environment) or 1 (a finding); a traceback appears only with --debug or GMTOOL_DEBUG=1.
"""

from __future__ import annotations

import os

import typer

from gmtool.cli.console import Abort, console

# Domain errors that mean "the environment or the input is wrong" (exit 2), by class name,
# so this module need not import the layers that define them.
_USAGE_ERRORS = {"ProfileFileError", "DeckSpecError", "CardError", "KeyPathError",
                 "ScenarioError", "StoreError"}
_FINDING_ERRORS = {"InvalidProfile", "IllegalAction"}


def run(app: typer.Typer) -> int:
    """Run the app; click reports usage errors itself (exit 2), the rest is reported here."""
    try:
        app()
    except SystemExit as done:
        return done.code if isinstance(done.code, int) else (0 if done.code is None else 2)
    except Abort as error:
        if error.message:
            console.error(error.message)
        return error.code
    except KeyboardInterrupt:
        console.error("interrupted")
        return 130
    except Exception as error:  # noqa: BLE001 - the one place errors become messages
        return _report(error)
    return 0


def _report(error: Exception) -> int:
    name = type(error).__name__
    if os.environ.get("GMTOOL_DEBUG") == "1":
        raise error
    if name in _FINDING_ERRORS:
        console.error(str(error))
        return 1
    if name in _USAGE_ERRORS or isinstance(error, OSError):
        console.error(str(error))
        return 2
    console.error(f"internal error: {name}: {error} (rerun with --debug for the traceback)")
    return 2
