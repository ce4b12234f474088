"""What a 1 s checkpoint interval costs the host (issue 24, point 4), against 30 s.

    python benchmarks/checkpoints.py                        # 32 tables, 20 s, 3 runs each
    python benchmarks/checkpoints.py --tables 64 --duration 30 --repeat 5

The host signs a checkpoint at most `--checkpoint-every` seconds after any append (1 s by
default since issue 24; 30 s before), so a host killed with SIGKILL leaves at most that
much play unsigned. Each checkpoint is an Ed25519 signature and one file written and
fsynced into each witness folder. The script runs `gmtool house run` (the console script
beside this Python) with the new interval and with the old one, alternately, each on a
fresh copy of one prepared store (every shipped system deployed, keys made, the witness
recorded), for `--duration` seconds at `--speed` (10,000 by default: as fast as the host
plays), and prints, median over `--repeat` runs:

- settlements per second (hands settled / the seconds asked for);
- checkpoint files written per second (each one fsync beside the store's own), and the
  hands one checkpoint covers;
- the ratio of the new interval's settlements per second to the old one's;
- what one checkpoint costs alone: signed and saved as the notary does, 50 times.

`--against PYTHON` compares two hosts instead of two intervals: this checkout's and the
one installed beside PYTHON (another checkout's venv), both at `--interval`, alternately
on copies of the same store (prepared by this checkout):

    python benchmarks/checkpoints.py --against /path/to/other/venv/bin/python
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sqlite3
import statistics
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from _console import env, gmtool_command

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "rules"
SHIPPED = ("lequ-showhand", "qq-showhand", "straight-flush", "suihua-three-card", "video-showhand")
OLD_INTERVAL_S = 30.0  # the host's interval before issue 24


def gmtool(args: Sequence[str], keys: Path, command: Sequence[str] | None = None) -> str:
    run = subprocess.run(
        [*(command or gmtool_command()), *args],
        env={**env(), "GMTOOL_KEYS": str(keys)},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if run.returncode != 0:
        raise SystemExit(
            f"gmtool {' '.join(args)} exited {run.returncode}:\n{run.stdout}{run.stderr}"
        )
    return run.stdout + run.stderr


def prepared(folder: Path, keys: Path) -> Path:
    """A store with every shipped system deployed and one host start behind it (its keys
    made and its witness recorded), in a folder of its own."""
    db = folder / "prepared" / "live.db"
    db.parent.mkdir(parents=True)
    gmtool(["db", "init", "--db", str(db)], keys)
    for profile in SHIPPED:
        gmtool(["deploy", str(RULES / f"{profile}.toml"), "--db", str(db)], keys)
    gmtool(["house", "run", "--db", str(db), "--hands", "1", "--speed", "10000"], keys)
    return db


def one_run(
    source: Path,
    folder: Path,
    keys: Path,
    interval: float,
    args: argparse.Namespace,
    command: Sequence[str] | None = None,
) -> dict:
    target = folder / f"run-{interval:g}-{time.monotonic_ns()}"
    shutil.copytree(source.parent, target)
    db = target / source.name
    witness = db.with_name(db.name + ".witness")
    hands_before, files_before = settled(db), len(list(witness.iterdir()))
    gmtool(
        [
            "house", "run", "--db", str(db), "--tables", str(args.tables),
            "--speed", str(args.speed), "--duration", str(args.duration),
            "--checkpoint-every", f"{interval:g}",
        ],
        keys,
        command,
    )  # fmt: skip
    hands = settled(db) - hands_before
    files = len(list(witness.iterdir())) - files_before
    shutil.rmtree(target, ignore_errors=True)
    return {
        "hands_per_s": hands / args.duration,
        "checkpoints_per_s": files / args.duration,
        "hands": hands,
        "checkpoints": files,
    }


def one_checkpoint_ms(folder: Path, count: int = 50) -> float:
    """Milliseconds to sign and save one checkpoint (Ed25519, a file written and fsynced),
    as the notary does, median of `count`."""
    from gmtool.evidence import witness
    from gmtool.evidence.note import Checkpoint, Signer, sign_checkpoint

    signer, place, times = Signer.generate("bench"), folder / "witness", []
    for size in range(1, count + 1):
        started = time.perf_counter()
        note = sign_checkpoint(Checkpoint("bench", size, bytes(32)), signer)
        witness.save(place, note, size)
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def settled(db: Path) -> int:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT COUNT(*) FROM hands WHERE outcome = 'settled'").fetchone()[0]
    finally:
        conn.close()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=32)
    parser.add_argument("--duration", type=float, default=20.0, help="seconds a run plays")
    parser.add_argument("--speed", type=float, default=10_000.0)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each interval")
    parser.add_argument("--interval", type=float, default=1.0, help="the new interval (s)")
    parser.add_argument("--old", type=float, default=OLD_INTERVAL_S, help="the old one (s)")
    parser.add_argument(
        "--against", type=Path, help="another checkout's Python: its host against this one's"
    )
    args = parser.parse_args(argv)
    sides: dict[str, tuple[float, list[str] | None]] = {
        f"--checkpoint-every {args.interval:g}": (args.interval, None),
        f"--checkpoint-every {args.old:g}": (args.old, None),
    }
    if args.against is not None:
        other = args.against.with_name("gmtool")
        sides = {
            "this checkout": (args.interval, None),
            f"{args.against.parent.parent.name}": (args.interval, [str(other)]),
        }
    folder = Path(tempfile.mkdtemp(prefix="gmtool-bench-checkpoints-"))
    keys = folder / "keys"
    try:
        cost = one_checkpoint_ms(folder)
        source = prepared(folder, keys)
        runs: dict[str, list[dict]] = {name: [] for name in sides}
        for _ in range(args.repeat):
            for name, (interval, command) in sides.items():  # alternately: the same machine
                runs[name].append(one_run(source, folder, keys, interval, args, command))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(
        f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, CPython "
        f"{platform.python_version()}, SQLite {sqlite3.sqlite_version}"
    )
    print(
        f"house run: {args.tables} tables, --speed {args.speed:g}, {args.duration:g} s a run, "
        f"median of {args.repeat}"
    )
    medians = {}
    for name, results in runs.items():
        rate = statistics.median(r["hands_per_s"] for r in results)
        files = statistics.median(r["checkpoints_per_s"] for r in results)
        per = statistics.median(r["hands"] / max(1, r["checkpoints"]) for r in results)
        medians[name] = rate
        print(
            f"  {name}: {rate:,.1f} settlements/s, "
            f"{files:.2f} checkpoint writes (fsyncs)/s, {per:,.1f} hands a checkpoint"
        )
    print(f"  one checkpoint signed and saved (Ed25519, write, fsync): {cost:.2f} ms")
    new, old = list(medians)
    ratio = medians[new] / medians[old] if medians[old] else float("nan")
    said = f"{new} / {old}" if args.against else f"{args.interval:g} s / {args.old:g} s"
    print(f"  ratio settlements/s {said}: {ratio:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
