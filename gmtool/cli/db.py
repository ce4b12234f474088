"""`gmtool db`: create or upgrade the store."""

from __future__ import annotations

from typing import Optional

import typer

from gmtool.cli.common import DB_OPTION, open_store
from gmtool.cli.console import console

app = typer.Typer(help="Create or upgrade the SQLite store.", no_args_is_help=True,
                  rich_markup_mode=None)


@app.command()
def init(db: Optional[str] = DB_OPTION) -> None:
    """Create the database (or bring an older one up to date); safe to run twice."""
    from gmtool.store.schema import SCHEMA_VERSION

    with open_store(db, create=True) as store:
        console.success(f"{store.path}: gmtool store ready (schema version {SCHEMA_VERSION})")
