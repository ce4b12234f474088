"""What the benchmarks that run gmtool as a real subprocess share: the command (the venv's
`gmtool` script, else `python -m gmtool`) and an environment free of the caller's store,
witness and key settings, so a measurement never reads or writes the operator's own."""

from __future__ import annotations

import os
import sys
from pathlib import Path

CALLER_SETTINGS = ("GMTOOL_DB", "GMTOOL_DEBUG", "GMTOOL_WITNESS", "GMTOOL_KEYS")


def gmtool_command() -> list[str]:
    script = Path(sys.executable).with_name("gmtool")
    return [str(script)] if script.exists() else [sys.executable, "-m", "gmtool"]


def env() -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if k not in CALLER_SETTINGS}
    out.update(GMTOOL_USER="bench", PYTHONUNBUFFERED="1")
    return out
