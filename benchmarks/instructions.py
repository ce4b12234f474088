"""Instructions a hand, counted by valgrind: this checkout against another, in one command.

    python benchmarks/instructions.py --baseline /path/to/other/checkout
    python benchmarks/instructions.py --baseline ../before --hands 400 --only qq lequ

On a shared machine wall-clock rates swing by 30% from one minute to the next (another
tenant's load moves gmtool and pokerkit differently), so a before/after comparison of a
few percent cannot be read from `engine.py` or `audit.py`. Callgrind counts the CPU
instructions executed, which do not depend on what else the machine is doing. Each
workload runs twice per checkout under `valgrind --tool=callgrind`: once doing only its
set-up (imports, compiling the profile, building the ranking table, five warm-up hands,
opening the store)
and once doing the set-up and then the work; the difference, divided by the hands, is
the cost of a hand. The workloads come from each checkout's own `benchmarks/engine.py`
(stud5 hands exactly as `engine.py hands` plays them) and its own audit of the recorded
test store `tests/data/stores/engine-2.sqlite` (311 hands of every shipped profile), so
each side runs its own code. Printed: instructions a hand for each side and the ratio
(this checkout / baseline; below 1 is faster).

Every run has PYTHONHASHSEED=0 (unless the environment sets another), so that a count
repeats exactly: with a random hash seed the same run varies by about a million
instructions (set and dict layouts), which a run of few hands cannot absorb. A baseline
that is this checkout itself (`--baseline .`, a smoke run) is measured once: its ratio
is 1 by construction.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
THIS = HERE.parent
SEED = 20_240_601
STORE = Path("tests/data/stores/engine-2.sqlite")
WORKLOADS = ("qq", "lequ", "audit")
WARM_UP = 5  # stud5 hands played in the set-up of both runs


def inner(workload: str, hands: int) -> None:
    """What runs under valgrind, in the checkout given by the working folder."""
    import importlib.util
    import random

    tree = Path.cwd()
    if workload == "audit":
        from gmtool.audit.run import run_audit
        from gmtool.store.db import connect

        with tempfile.TemporaryDirectory() as folder:
            copy = Path(folder) / "audit.sqlite"
            shutil.copy(tree / STORE, copy)
            with connect(copy) as store:
                if hands:
                    report = run_audit(store)
                    if report.problems:
                        raise SystemExit(f"the audit found problems: {report.problems[:3]}")
        return
    spec = importlib.util.spec_from_file_location("engine_bench", tree / "benchmarks/engine.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    profile, tier = {"qq": ("qq-showhand", "junior"), "lequ": ("lequ-showhand", "table")}[workload]
    table = module.Stud5Table(profile, tier)
    warm_up = random.Random(SEED + 1)
    for _ in range(WARM_UP):  # lazy imports and caches belong to the set-up
        table.play(warm_up)
    rng = random.Random(SEED)
    for _ in range(hands):
        table.play(rng)


def instructions(tree: Path, workload: str, hands: int) -> int:
    """Instructions of one run of `inner` under callgrind, in `tree`."""
    env = {
        **os.environ,
        "PYTHONPATH": str(tree),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONHASHSEED": os.environ.get("PYTHONHASHSEED", "0"),
    }
    run = subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            "--callgrind-out-file=/dev/null",
            sys.executable,
            str(Path(__file__).resolve()),
            "--inner",
            workload,
            str(hands),
        ],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    found = re.search(r"Collected : (\d+)", run.stderr)
    if run.returncode != 0 or not found:
        raise SystemExit(
            f"{workload} in {tree} failed (exit {run.returncode}):\n{run.stderr[-2000:]}"
        )
    return int(found.group(1))


def per_hand(tree: Path, workload: str, hands: int) -> float:
    return (instructions(tree, workload, hands) - instructions(tree, workload, 0)) / hands


def audit_hands(tree: Path) -> int:
    import sqlite3

    with sqlite3.connect(tree / STORE) as conn:
        return conn.execute("SELECT COUNT(*) FROM hands").fetchone()[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", type=Path, help="another checkout of gmtool")
    parser.add_argument("--hands", type=int, default=300, help="stud5 hands a workload")
    parser.add_argument("--only", nargs="+", choices=WORKLOADS, default=list(WORKLOADS))
    parser.add_argument("--inner", nargs=2, metavar=("WORKLOAD", "HANDS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.inner:
        inner(args.inner[0], int(args.inner[1]))
        return 0
    if args.baseline is None:
        parser.error("--baseline CHECKOUT is required")
    if shutil.which("valgrind") is None:
        parser.error("valgrind is not installed (Debian: apt-get install valgrind)")
    if args.hands < 1:
        parser.error("--hands must be at least 1")
    baseline = args.baseline.resolve()
    if not (baseline / "gmtool").is_dir():
        parser.error(f"--baseline {args.baseline}: not a gmtool checkout (no gmtool/)")
    if "audit" in (args.only or WORKLOADS) and not (baseline / STORE).is_file():
        parser.error(
            f"--baseline {args.baseline}: it has no {STORE} to audit (before "
            "issue 12): measure it with --only qq lequ"
        )
    same = baseline == THIS
    print(
        f"instructions a hand (valgrind callgrind): {THIS} / baseline {baseline}"
        + (" (this checkout: measured once, ratio 1 by construction)" if same else "")
    )
    for workload in args.only:
        hands = audit_hands(baseline) if workload == "audit" else args.hands
        ours = per_hand(THIS, workload, hands)
        theirs = ours if same else per_hand(baseline, workload, hands)
        print(
            f"  {workload:6} {ours:14,.0f} / {theirs:14,.0f}   ratio {ours / theirs:.3f}"
            f"   ({hands} hands)",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
