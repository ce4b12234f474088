"""The audit on both backends, side by side (issue 26): audited hands per second of one
store on SQLite and of its copy on PostgreSQL (`gmtool db copy`).

    python benchmarks/audit_postgres.py --size 20000
    python benchmarks/audit_postgres.py --size 20000 --pg postgresql://postgres@127.0.0.1/postgres

The store is benchmarks/audit.py's (built the same way, cached in the same folder); it is
copied into a new database on the server `--pg` names (a role that may create databases;
the database is dropped at the end). Each backend is then audited in a fresh
interpreter, one core, with the host's verifier key (every check, as benchmarks/audit.py
runs it); both audits must find no problem and give the same report. Printed: the copy's
rate, and per backend the audit's seconds, hands/s and the process's peak resident
memory (`resource`). PostgreSQL runs on the same machine: its own processes' CPU is not
in the figure but takes from the same cores.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import secrets
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import audit as bench  # noqa: E402  (benchmarks/audit.py: the store and the audit's options)

# the server's maintenance database, as a role that may create databases (the tests'
# server by default: $GMTOOL_TEST_PG, as tests/postgres.py reads it)
ADMIN = os.environ.get("GMTOOL_TEST_PG", "postgresql://postgres@127.0.0.1:5432/postgres")


def measure(where: str, repeat: int) -> dict:
    """One backend's audit, best of `repeat`, in this (fresh) process."""
    from gmtool.audit.run import run_audit
    from gmtool.store.db import open_location

    best, report = float("inf"), None
    for _ in range(repeat):
        with open_location(where, write=False, postgres=True) as store:
            options = bench.audit_options(store)
            started = time.perf_counter()
            report = run_audit(store, **options)
            best = min(best, time.perf_counter() - started)
    assert report is not None
    if report.problems:
        raise SystemExit(f"the audit found problems in the benchmark store: {report.problems[:3]}")
    return {
        "hands": report.hands_checked,
        "audit_s": best,
        "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "report": report.as_json(),
    }


def measure_in_subprocess(where: str, repeat: int) -> dict:
    command = [sys.executable, __file__, "--measure", where, "--repeat", str(repeat)]
    run = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(run.stdout.strip().splitlines()[-1])


def url_of(admin: str, database: str) -> str:
    base, _, _ = admin.rpartition("/")
    return f"{base}/{database}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=20_000, help="Hands in the store.")
    parser.add_argument("--pg", default=ADMIN, help="A URL of the server's maintenance db.")
    parser.add_argument("--repeat", type=int, default=1, help="Best of N audits.")
    parser.add_argument(
        "--cache", type=Path, default=Path(tempfile.gettempdir()) / "gmtool-bench-audit"
    )
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.measure:
        print(json.dumps(measure(args.measure, args.repeat)))
        return 0
    import psycopg

    from gmtool.store import copy as copying
    from gmtool.store.db import connect, open_location

    path = bench.database(args.cache, args.size)
    name = f"gmtool_bench_audit_{secrets.token_hex(4)}"
    with psycopg.connect(args.pg, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
        try:
            url = url_of(args.pg, name)
            with (
                connect(path, write=False) as source,
                open_location(url, create=True, postgres=True) as dest,
            ):
                started = time.perf_counter()
                copied = copying.copy_store(source, dest)  # type: ignore[arg-type]
                copy_s = time.perf_counter() - started
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute("VACUUM ANALYZE")  # as an operator would after a bulk load
            results = {
                "SQLite": measure_in_subprocess(str(path), args.repeat),
                "PostgreSQL": measure_in_subprocess(url, args.repeat),
            }
        finally:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    print(
        f"db copy: {copied.total:,} rows in {copy_s:.1f} s "
        f"({copied.total / copy_s:,.0f} rows/s; {args.size:,} hands)"
    )
    print("| backend | hands | audit s | audit hands/s | peak RSS |")
    print("|---|---|---|---|---|")
    for backend, out in results.items():
        print(
            f"| {backend} | {out['hands']:,} | {out['audit_s']:.3f} | "
            f"{out['hands'] / out['audit_s']:,.0f} | {out['maxrss_mb']:.0f} MB |"
        )
    same = results["SQLite"]["report"] == results["PostgreSQL"]["report"]
    print(f"same report on both: {'yes' if same else 'NO'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
