"""Audit from a checkpoint, and audit in two processes: each against the full audit, timed
in the same process, interleaved.

    python benchmarks/audit_incremental.py                  # 100,000 hands + 1,000 (cached)
    python benchmarks/audit_incremental.py --size 100000 --more 1000 --repeat 3
    python benchmarks/audit_incremental.py --check          # exit 1 if a target is missed
    python benchmarks/audit_incremental.py --store DB CHECKPOINT   # a store built before

The store of `--size` hands is `benchmarks/audit.py`'s (built the same way, cached under
the same folder and fingerprint). A copy of it gets the host's checkpoint key, a signed
checkpoint of its log (as `gmtool checkpoint export` signs it) and then `--more` hands
more, played and recorded as the first were; that store is cached beside the first.
Then, in one fresh interpreter:

- full: `run_audit` of the whole store, checked against the signed checkpoint;
- incremental: `run_audit` from that checkpoint (`gmtool audit --from-checkpoint`): the
  stored tree at the checkpoint against its signed root, then only the records, rows and
  hands after it;
- jobs: the full audit with `jobs=2` (`gmtool audit --jobs 2`).

Each is run `--repeat` times, interleaved (full, incremental, jobs 2, full, ...), after one
incremental audit to warm the interpreter up, and the best of each is reported, in wall
seconds and in CPU seconds (this process and its workers: what the work costs, whatever
else the machine runs). Every audit must find no problem, and the reports of jobs 1 and 2
must be equal.

Targets (issue 14): incremental / full below 0.02 (1,000 new hands on 100,000); the
speed-up of `--jobs 2` is recorded (it cannot exceed the cores the machine has free).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import audit as base_bench  # noqa: E402  (benchmarks/audit.py: the store and its builder)

TARGET_RATIO = 0.02


def store_with_more(cache: Path, size: int, more: int) -> tuple[Path, Path]:
    """(store, checkpoint file): `size` hands, a checkpoint signed, then `more` hands."""
    from gmtool.house.notary import Notary
    from gmtool.store.db import connect

    first = base_bench.database(cache, size)
    folder = first.parent / "audit-incremental"
    path = folder / f"store-{size}-{more}.db"
    mark = folder / f"store-{size}-{more}.checkpoint"  # the file's name says which one
    if path.exists() and mark.exists():
        return path, Path(mark.read_text().strip())
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    work = folder / "building.db"
    base_bench._copy_store(first, work)
    with connect(work) as store:  # (a writer: brings an older schema up to date)
        (signed,) = Notary(store).sign()  # its one witness, `<db>.witness/`
    builder = base_bench.Builder(work)
    print(
        f"building {path.name}: {size:,} -> {size + more:,} hands after a checkpoint ...",
        flush=True,
    )
    builder.build(size + more, lambda n: None)
    builder.store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    builder.store.close()
    for suffix in ("", ".checkpoint.key", ".checkpoint.pub", ".witness"):
        os.rename(f"{work}{suffix}", f"{path}{suffix}")
    checkpoint = Path(f"{path}.witness") / signed.name
    mark.write_text(str(checkpoint))
    return path, checkpoint


def measure(path: Path, checkpoint_file: Path, repeat: int) -> dict:
    """The three audits of one store, interleaved, best of `repeat` each (seconds)."""
    from gmtool.audit.run import run_audit
    from gmtool.evidence import witness
    from gmtool.store.db import connect
    from gmtool.store.log_append import origin_of

    verifier = witness.load_verifier(witness.public_key_path(path))
    checkpoint = witness.read(checkpoint_file, verifier)
    signed = [(checkpoint_file.name, checkpoint)]

    def cpu() -> float:  # this process and its finished workers, user and system
        own, workers = (
            resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
        )
        return own.ru_utime + own.ru_stime + workers.ru_utime + workers.ru_stime

    def audit(**options) -> tuple[float, float, dict]:
        with connect(path, write=False) as store:
            origin = origin_of(store)
            started, used = time.perf_counter(), cpu()
            report = run_audit(store, checkpoints=signed, origin=origin, **options)
            elapsed, used = time.perf_counter() - started, cpu() - used
        if report.problems:
            raise SystemExit(f"the audit found problems: {report.problems[:3]}")
        return elapsed, used, report.as_json()

    runs = {"full": [], "incremental": [], "jobs2": []}
    cpus = {"full": [], "incremental": [], "jobs2": []}
    reports = {}
    audit(base=signed[0])  # warm-up: imports, ranking tables
    for _ in range(repeat):
        for name, options in (
            ("full", {}),
            ("incremental", {"base": signed[0]}),
            ("jobs2", {"jobs": 2}),
        ):
            elapsed, used, reports[name] = audit(**options)
            runs[name].append(elapsed)
            cpus[name].append(used)
    if reports["full"] != reports["jobs2"]:
        raise SystemExit("the reports of --jobs 1 and --jobs 2 differ")
    return {
        "hands": reports["full"]["hands_checked"],
        "incremental_hands": reports["incremental"]["hands_checked"],
        "size": checkpoint.size,
        "records": reports["full"]["checkpoint"]["records"],
        **{f"{name}_s": min(times) for name, times in runs.items()},
        **{f"{name}_all": times for name, times in runs.items()},
        **{f"{name}_cpu": min(times) for name, times in cpus.items()},
    }


def load() -> str:
    """The load averages (1, 5, 15 minutes): how busy the machine was."""
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def report(result: dict) -> bool:
    ratio = result["incremental_s"] / result["full_s"]
    speedup = result["full_s"] / result["jobs2_s"]
    print(
        f"\nmachine: {base_bench.machine()}; load average before the runs "
        f"{result['load_before']}, after {result['load_after']}"
    )
    print(
        "| store | audit | hands checked | seconds (best) | all runs | CPU seconds (best) | "
        "against full |"
    )
    print("|---|---|---:|---:|---|---:|---:|")
    where = (
        f"{result['hands']:,} hands, checkpoint at {result['size']:,} of "
        f"{result['records']:,} records"
    )
    for name, label, hands, against in (
        ("full", "full (jobs 1)", result["hands"], "1"),
        ("incremental", "from the checkpoint", result["incremental_hands"], f"**{ratio:.4f}**"),
        ("jobs2", "full, --jobs 2", result["hands"], f"**x{speedup:.2f}** faster"),
    ):
        runs = ", ".join(f"{t:.2f}" for t in result[f"{name}_all"])
        print(
            f"| {where} | {label} | {hands:,} | {result[f'{name}_s']:.3f} | {runs} | "
            f"{result[f'{name}_cpu']:.1f} | {against} |"
        )
    met = ratio < TARGET_RATIO
    print(
        f"\nincremental / full: {ratio:.4f} (target < {TARGET_RATIO}): "
        f"{'met' if met else 'MISSED'}; by CPU time "
        f"{result['incremental_cpu'] / result['full_cpu']:.4f}; --jobs 2 speed-up: "
        f"x{speedup:.2f} on {os.cpu_count()} CPUs (CPU time, jobs 2 / jobs 1: "
        f"{result['jobs2_cpu'] / result['full_cpu']:.2f})"
    )
    return met


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=100_000, help="Hands before the checkpoint.")
    parser.add_argument("--more", type=int, default=1_000, help="Hands after it.")
    parser.add_argument("--repeat", type=int, default=3, help="Best of N runs of each.")
    parser.add_argument(
        "--cache", type=Path, default=Path(tempfile.gettempdir()) / "gmtool-bench-audit"
    )
    parser.add_argument("--rebuild", action="store_true", help="Build the stores again.")
    parser.add_argument("--check", action="store_true", help="Exit 1 if the ratio is missed.")
    parser.add_argument(
        "--store",
        nargs=2,
        type=Path,
        metavar=("DB", "CHECKPOINT"),
        help="Measure this store from this checkpoint (no building).",
    )
    parser.add_argument("--measure", nargs=2, type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.measure:  # the child: a fresh interpreter
        print(json.dumps(measure(*args.measure, args.repeat)))
        return 0
    if args.rebuild and args.cache.exists():
        shutil.rmtree(args.cache)
    path, checkpoint = args.store or store_with_more(args.cache, args.size, args.more)
    print(f"measuring {path.name} (best of {args.repeat}, interleaved) ...", flush=True)
    before = load()
    run = subprocess.run(
        [
            sys.executable,
            __file__,
            "--measure",
            str(path),
            str(checkpoint),
            "--repeat",
            str(args.repeat),
        ],
        capture_output=True,
        text=True,
    )
    if run.returncode != 0:
        print(run.stderr[-3000:], file=sys.stderr)
        return 2
    result = json.loads(run.stdout.strip().splitlines()[-1])
    result.update(load_before=before, load_after=load())
    met = report(result)
    return 1 if args.check and not met else 0


if __name__ == "__main__":
    sys.exit(main())
