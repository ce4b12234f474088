"""What the commands share: the options every group uses, the store, and how data is shown.

A command parses its arguments, calls one function of a lower layer, and hands the
result to `emit`, which prints it as JSON (`--json`, the contract scripts rely on) or
renders it as text.
"""

from __future__ import annotations

import getpass
import os
from typing import Any, Callable, Optional, TypeVar

import typer

from gmtool.cli.console import console

T = TypeVar("T")

DB_OPTION = typer.Option(None, "--db", help="Database file (default: $GMTOOL_DB, else ./gmtool.db).")
AS_OPTION = typer.Option(None, "--as", help="Acting GM user (default: $GMTOOL_USER).")
JSON_OPTION = typer.Option(False, "--json", help="Print JSON (the contract for scripts) "
                           "instead of text.")


def open_store(db: Optional[str], create: bool = False):
    from gmtool.store.db import connect, resolve_path

    return connect(resolve_path(db), create=create)


def with_store(db: Optional[str], action: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Open the store, run `action(store, *args, **kwargs)` on it, close it: its result."""
    with open_store(db) as store:
        return action(store, *args, **kwargs)


def emit(value: Any, as_json: bool, render: Callable[[Any], None]) -> None:
    """Print `value` as JSON, or hand it to `render` for text."""
    if as_json:
        console.json(value)
    else:
        render(value)


def acting_user(name: Optional[str]) -> str:
    """`--as`, else $GMTOOL_USER, else the login name (recorded, never trusted for roles)."""
    if name:
        return name
    if os.environ.get("GMTOOL_USER"):
        return os.environ["GMTOOL_USER"]
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"
