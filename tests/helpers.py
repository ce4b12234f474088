"""Helpers shared by the tests that run the console script or read a store directly."""

from __future__ import annotations

import os
import sqlite3
import sys
from pathlib import Path


def gmtool_command() -> list[str]:
    """The installed console script next to this Python, else `python -m gmtool`."""
    script = Path(sys.executable).with_name("gmtool")
    return [str(script)] if script.exists() else [sys.executable, "-m", "gmtool"]


def clean_env(**extra: str) -> dict[str, str]:
    """The environment without gmtool settings, plus `extra` (e.g. GMTOOL_USER)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("GMTOOL_DB", "GMTOOL_DEBUG", "GMTOOL_USER")}
    env.update(extra)
    return env


def query(db: Path, sql: str, params: tuple = ()) -> list[sqlite3.Row]:
    """Rows of one query on a store, through a connection of its own."""
    conn = sqlite3.connect(db, timeout=10)
    conn.row_factory = sqlite3.Row
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()
