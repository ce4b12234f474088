"""The benchmark scripts still run against today's code (a smoke run each, smallest
sizes): a script that broke with a refactoring would otherwise go unnoticed until the
next measurement. No timing is asserted."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("args", [  # (engine.py needs treys and pokerkit, not installed here)
    ["audit.py", "--sizes", "120", "--repeat", "1", "--rebuild"],
    ["audit_incremental.py", "--size", "120", "--more", "30", "--repeat", "1"],
], ids=lambda args: args[0])
def test_the_benchmark_runs(args: list[str], tmp_path: Path) -> None:
    extra = ["--cache", str(tmp_path)] if args[0].startswith("audit") else []
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / args[0]), *args[1:], *extra],
                         capture_output=True, text=True, cwd=ROOT, timeout=900, check=False)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "Traceback" not in run.stderr and "|" in run.stdout
