"""Options and helpers shared by the commands that use the store."""

from __future__ import annotations

import getpass
import os
from typing import Optional

import typer

DB_OPTION = typer.Option(None, "--db", help="Database file (default: $GMTOOL_DB, else ./gmtool.db).")
AS_OPTION = typer.Option(None, "--as", help="Acting GM user (default: $GMTOOL_USER).")


def open_store(db: Optional[str], create: bool = False):
    from gmtool.store.db import connect, resolve_path

    return connect(resolve_path(db), create=create)


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
