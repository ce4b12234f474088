"""`gmtool --help` stays light: it imports no store, audit, evidence or cryptography module.

Every command imports what it needs inside its own body, so asking for help (and every
command that does not need them) never pays for SQLite repositories, the audit, the
evidence log's crypto or rich's heavy renderers. `benchmarks/startup.py` measures the
time; this test keeps the imports from creeping back, whatever the machine's speed.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = (
    "gmtool.store",
    "gmtool.audit",
    "gmtool.evidence",
    "gmtool.ops",
    "gmtool.house",
    "gmtool.engine",
    "gmtool.simulate",
    "gmtool.sandbox",
    "cryptography",
    "sqlite_utils",
    "sqlite3",
    "orjson",
)

PROBE = r"""
import json, sys
sys.argv = ["gmtool", *json.loads(sys.argv[1])]
from gmtool.cli import main
try:
    main()
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def _modules(*args: str) -> list[str]:
    run = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(list(args))],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return json.loads(run.stderr.strip().splitlines()[-1])


@pytest.mark.parametrize("args", [("--help",), ("audit", "--help"), ("rules", "--help")])
def test_help_imports_no_heavy_module(args: tuple[str, ...]) -> None:
    loaded = [m for m in _modules(*args) if m.startswith(HEAVY)]
    assert not loaded, f"gmtool {' '.join(args)} imports {loaded}"
