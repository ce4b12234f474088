"""Start-up time of the gmtool console script, against baselines measured in the same run.

Runs four commands many times, interleaved so that a slow moment of the machine hits
every command alike, and prints the median wall time of each as a ratio to a bare
`python -c pass` and (for the two gmtool commands) to `python -c 'import typer'`, the
cost any typer CLI pays before doing anything:

    python benchmarks/startup.py            # 15 rounds
    python benchmarks/startup.py --runs 31 --check
    python benchmarks/startup.py --baseline OTHER/bin/gmtool --baseline-rules OTHER_REPO/rules

With --baseline, the two gmtool commands of another installation (a commit to compare
with, installed in its own venv) run in the same interleaved rounds.

Targets (benchmarks/README.md, "Budgets"): `gmtool --help` within 1.3x of `import typer`,
`gmtool rules validate rules/` within 2x of it. With --check the script exits 1 when a
target is missed. Run it with the Python of the environment gmtool is installed in: the
console script is looked up next to sys.executable unless --gmtool names it.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PASS = "python -c pass"
TYPER = "python -c 'import typer'"
HELP = "gmtool --help"
VALIDATE = "gmtool rules validate rules/"
TARGETS = {HELP: 1.3, VALIDATE: 2.0}  # as a ratio to TYPER


def find_gmtool(explicit: str | None) -> str:
    """The gmtool console script of this environment (next to sys.executable)."""
    if explicit:
        return explicit
    here = Path(sys.executable).parent
    found = shutil.which("gmtool", path=str(here))
    if found is None:
        sys.exit(f"no gmtool console script next to {sys.executable}; pass --gmtool PATH")
    return found


def commands(
    gmtool: str, rules: Path, baseline: str | None = None, baseline_rules: Path | None = None
) -> dict[str, list[str]]:
    argvs = {
        PASS: [sys.executable, "-c", "pass"],
        TYPER: [sys.executable, "-c", "import typer"],
        HELP: [gmtool, "--help"],
        VALIDATE: [gmtool, "rules", "validate", str(rules)],
    }
    if baseline:
        argvs[f"baseline: {HELP}"] = [baseline, "--help"]
        argvs[f"baseline: {VALIDATE}"] = [
            baseline,
            "rules",
            "validate",
            str(baseline_rules or rules),
        ]
    return argvs


def time_once(argv: list[str]) -> float:
    """Wall time of one run in seconds; a failing command makes the figures meaningless."""
    start = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(
            f"{' '.join(argv)} exited {done.returncode}: {done.stderr.decode(errors='replace')}"
        )
    return elapsed


def measure(argvs: dict[str, list[str]], runs: int) -> dict[str, list[float]]:
    """`runs` rounds; each round runs every command once, starting at a rotating offset."""
    names = list(argvs)
    for name in names:  # warm the OS file cache; not counted
        time_once(argvs[name])
    times: dict[str, list[float]] = {name: [] for name in names}
    for round_no in range(runs):
        offset = round_no % len(names)
        for name in names[offset:] + names[:offset]:
            times[name].append(time_once(argvs[name]))
    return times


def report(times: dict[str, list[float]]) -> list[str]:
    """Lines of the result table; the last column says whether a target is met."""
    median = {name: statistics.median(values) for name, values in times.items()}
    lines = [f"{'command':<42} {'median':>9} {'x pass':>7} {'x typer':>8}  target", "-" * 82]
    for name, value in median.items():
        vs_pass = value / median[PASS]
        vs_typer = f"{value / median[TYPER]:7.2f}x" if name not in (PASS, TYPER) else ""
        target = ""
        if name in TARGETS:
            met = value / median[TYPER] <= TARGETS[name]
            target = f"<= {TARGETS[name]}x typer: {'met' if met else 'MISSED'}"
        lines.append(f"{name:<42} {value * 1000:7.1f}ms {vs_pass:6.2f}x {vs_typer:>8}  {target}")
    return lines


def missed(times: dict[str, list[float]]) -> list[str]:
    median = {name: statistics.median(values) for name, values in times.items()}
    return [name for name, limit in TARGETS.items() if median[name] / median[TYPER] > limit]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="rounds (default 15)")
    parser.add_argument("--gmtool", help="the console script (default: next to sys.executable)")
    parser.add_argument(
        "--rules",
        type=Path,
        default=REPO / "rules",
        help="profile folder for validate (default: the repo's rules/)",
    )
    parser.add_argument(
        "--baseline", help="another installation's gmtool console script, timed alongside"
    )
    parser.add_argument(
        "--baseline-rules", type=Path, help="profile folder for the baseline (default: --rules)"
    )
    parser.add_argument("--check", action="store_true", help="exit 1 if a target is missed")
    args = parser.parse_args(argv)

    gmtool = find_gmtool(args.gmtool)
    argvs = commands(gmtool, args.rules, args.baseline, args.baseline_rules)
    times = measure(argvs, args.runs)
    print(
        f"{args.runs} interleaved rounds; python {sys.version.split()[0]} ({sys.executable}); "
        f"gmtool {gmtool}"
    )
    for line in report(times):
        print(line)
    return 1 if args.check and missed(times) else 0


if __name__ == "__main__":
    sys.exit(main())
