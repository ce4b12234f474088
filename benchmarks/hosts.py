"""Hosts on SQLite and PostgreSQL, side by side in one run (issue 26, the last item).

    python benchmarks/hosts.py                                   # sqlite-1, pg-1, pg-3
    python benchmarks/hosts.py --tables 50,100,200,400,800 --duration 30
    python benchmarks/hosts.py --configs pg-3 --pg-admin postgresql://postgres@127.0.0.1/postgres

Three configurations, each on a store of its own with every shipped profile deployed
through the console (`gmtool db init`, `gmtool deploy`; on PostgreSQL then `gmtool db
copy` into a new database, as tests/test_hosts_postgres.py makes one): `sqlite-1`, one
host on SQLite; `pg-1`, one host on PostgreSQL; `pg-3`, three hosts on one PostgreSQL
store sharing one home folder (keys, witness), each host its own process, started one at
a time as `gmtool house run --db URL --home DIR` starts them (`PgStore.one_at_a_time`),
then let go together.

For each configuration, the table counts of `--tables` (the total over its hosts, each
host taking its share) are stepped through on that one store, stopping at the first
count whose p99 action latency misses 100 ms. Each step runs benchmarks/store.py's host
measurement (`host_samples`: the real `Host`, `HostedTable.sleep` and `.record` wrapped
to time each action from when it was due to when its events were committed, a warm-up
not counted, then `--duration` seconds from each host's first action after it); the
latencies of all hosts are pooled for the p50 and p99. Also per step: the evidence
appended a second (the rows the step added to the store's `log`, over the seconds from
the hosts' start to their stop), the settled hands, and on PostgreSQL how often the
writers' advisory lock (store/pg.py: every write transaction takes it) was held, and
waited for, in `pg_locks` sampled every 20 ms. The load average is printed with each step.

Then each configuration's store (every step's hands) is audited with the real command,
`gmtool audit --db WHERE [--key HOME/<db>.checkpoint.pub] --jobs N --json` at `--jobs`
1 and 2: audited hands a second of the command's wall time (start-up included).
PostgreSQL databases are made on the server `--pg-admin` names (a role that may create
databases; `$GMTOOL_TEST_PG` else the local server with trust authentication) and dropped
afterwards. `--speed` above 1 runs the hosts faster (the smoke test); the target is for 1.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import FIRST_EXCEPTION, ProcessPoolExecutor, wait
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import store as bench  # noqa: E402  (benchmarks/store.py: the host measurement)

DEFAULT_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"
CONFIGS = {"sqlite-1": ("sqlite", 1), "pg-1": ("pg", 1), "pg-3": ("pg", 3)}
SAMPLE_S = 0.02  # pg_locks sampled this often


# -- one host (a child process) -----------------------------------------------------------


def one_host(
    where: str, home: Path | None, n: int, tables: int, args: argparse.Namespace, folder: Path
) -> dict:
    """One host of a step: prepared (one at a time on PostgreSQL, as `house run` starts),
    says it is ready, waits for the go, then plays its share: store.py's measurement."""
    from gmtool.house.host import HostOptions, prepare_host
    from gmtool.store.db import open_location

    options = HostOptions(
        tables=tables,
        speed=args.speed,
        duration=None,
        seed=f"bench-{args.seed}",
        grace=0.1,
        lease=args.lease,
    )

    def prepare(store, options):
        if home is None:
            return prepare_host(store, options)
        store.at_home(home)
        with store.one_at_a_time():
            return prepare_host(store, options)

    def go() -> None:
        (folder / f"ready-{n}").touch()
        while not (folder / "go").exists():
            time.sleep(0.005)

    with open_location(where, write=True, postgres=True) as store:
        return bench.host_samples(store, options, args.duration, args.warmup, prepare, go)


# -- a step: every host of a configuration at one table count -------------------------------


def counts(where: str) -> tuple[int, int]:
    """(evidence log records, settled hands) in the store now."""
    from gmtool.store.db import open_location

    with open_location(where, postgres=True) as store:
        log = store.one("SELECT COUNT(*) FROM log")[0]
        hands = store.one("SELECT COUNT(*) FROM hands WHERE outcome = 'settled'")[0]
    return int(log), int(hands)


class LockSampler:
    """How often the writers' advisory lock is held, and waited for (pg_locks)."""

    def __init__(self, url: str) -> None:
        import psycopg

        from gmtool.store.pg import WRITE_LOCK

        self.conn = psycopg.connect(url, autocommit=True)
        self.key = (WRITE_LOCK >> 32, WRITE_LOCK & 0xFFFFFFFF)
        self.samples = self.held = self.waited = self.waiters = 0

    def sample(self) -> None:
        held, waiting = self.conn.execute(
            "SELECT count(*) FILTER (WHERE granted), count(*) FILTER (WHERE NOT granted) "
            "FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 1 AND classid = %s "
            "AND objid = %s AND database = "
            "(SELECT oid FROM pg_database WHERE datname = current_database())",
            self.key,
        ).fetchone()
        self.samples += 1
        self.held += bool(held)
        self.waited += bool(waiting)
        self.waiters += waiting

    def figures(self) -> dict:
        self.conn.close()
        n = max(1, self.samples)
        return {"held": self.held / n, "waited": self.waited / n, "waiters": self.waiters / n}


def step(where: str, home: Path | None, hosts: int, total: int, args, folder: Path) -> dict:
    shares = [total // hosts + (1 if i < total % hosts else 0) for i in range(hosts)]
    for flag in [*folder.glob("ready-*"), folder / "go"]:
        flag.unlink(missing_ok=True)
    load = os.getloadavg()[0]
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(hosts, mp_context=context) as pool:  # (a dead child fails it)
        futures = [
            pool.submit(one_host, where, home, n, share, args, folder)
            for n, share in enumerate(shares)
        ]
        while not all((folder / f"ready-{n}").exists() for n in range(hosts)):
            done, _ = wait(futures, timeout=0.05, return_when=FIRST_EXCEPTION)
            for future in done:
                future.result()  # a host that failed to start: its error, here
        before = counts(where)
        sampler = LockSampler(where) if home is not None else None
        (folder / "go").touch()
        started = time.monotonic()
        while not all(f.done() for f in futures):
            wait(futures, timeout=SAMPLE_S, return_when=FIRST_EXCEPTION)
            if sampler is not None:
                sampler.sample()
        seconds = time.monotonic() - started
        results = [f.result() for f in futures]
    after = counts(where)
    samples = sorted(s for r in results for s in r["samples"])
    figures = bench.summary(
        total, args.duration, samples, after[1] - before[1], max(r["cpu"] for r in results)
    )
    figures.update(
        appends=(after[0] - before[0]) / seconds, load=load, shares=shares, seconds=seconds
    )
    if sampler is not None:
        figures["lock"] = sampler.figures()
    return figures


def render(name: str, r: dict) -> str:
    line = f"  {name} {bench.render_host(r).strip()} | evidence {r['appends']:,.1f} appends/s"
    if "lock" in r:
        lock = r["lock"]
        line += (
            f" | write lock held {lock['held']:.0%}, waited for {lock['waited']:.0%} "
            f"({lock['waiters']:.2f} waiting on average)"
        )
    return line + f" | load {r['load']:.2f}"


# -- the stores and their audits ----------------------------------------------------------


def clean_env() -> dict:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("GMTOOL_DB", "GMTOOL_DEBUG", "GMTOOL_WITNESS", "GMTOOL_HOME")
    }
    env["GMTOOL_USER"] = "bench"
    return env


def pg_store(admin: str, folder: Path, name: str) -> str:
    """A new database with the shipped profiles deployed: a SQLite store deployed through
    the console, then `gmtool db copy` into it."""
    import psycopg
    from psycopg import sql

    seed = folder / f"{name}-seed.db"
    bench.deployed_store(seed, bench.SHIPPED)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    url = f"{admin.rsplit('/', 1)[0]}/{name}"
    copy = ["db", "copy", "--from", str(seed), "--to", url]
    run = subprocess.run(
        [*bench.gmtool_command(), *copy], env=clean_env(), capture_output=True, text=True
    )
    if run.returncode != 0:
        raise SystemExit(f"gmtool db copy exited {run.returncode}:\n{run.stdout}{run.stderr}")
    return url


def drop(admin: str, name: str) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )


def audit(where: str, home: Path | None, jobs: int) -> dict:
    command = [*bench.gmtool_command(), "audit", "--db", where, "--jobs", str(jobs), "--json"]
    if home is not None:
        command += ["--key", str(home / f"{where.rsplit('/', 1)[1]}.checkpoint.pub")]
    load = os.getloadavg()[0]
    started = time.perf_counter()
    run = subprocess.run(command, env=clean_env(), capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if run.returncode != 0:
        raise SystemExit(f"gmtool audit exited {run.returncode}:\n{run.stdout}{run.stderr}")
    hands = json.loads(run.stdout)["hands_checked"]
    return {
        "jobs": jobs,
        "hands": hands,
        "seconds": seconds,
        "per_s": hands / seconds,
        "load": load,
    }


# -- a configuration ------------------------------------------------------------------------


def configuration(name: str, args, folder: Path) -> dict:
    backend, hosts = CONFIGS[name]
    home: Path | None = None
    database = None
    if backend == "sqlite":
        where = str(folder / f"{name}.db")
        bench.deployed_store(Path(where), bench.SHIPPED)
    else:
        database = f"gmt_bench_hosts_{os.getpid()}_{secrets.token_hex(3)}"
        where = pg_store(args.pg_admin, folder, database)
        home = folder / f"{name}-home"
        home.mkdir(mode=0o700)
    try:
        steps = []
        for total in args.tables:
            if total < hosts:
                print(f"  {name} {total:>5} tables: fewer than its {hosts} hosts, skipped")
                continue
            result = step(where, home, hosts, total, args, folder)
            steps.append(result)
            print(render(name, result), flush=True)
            if not result.get("actions") or result["p99"] >= bench.TARGET_P99_MS:
                break
        audits = [audit(where, home, jobs) for jobs in (1, 2)]
        for a in audits:
            print(
                f"  {name} audit --jobs {a['jobs']}: {a['hands']:,} hands in "
                f"{a['seconds']:.2f} s, {a['per_s']:,.0f} hands/s | load {a['load']:.2f}",
                flush=True,
            )
    finally:
        if database is not None:
            drop(args.pg_admin, database)
    return {"name": name, "hosts": hosts, "steps": steps, "audits": audits}


def table(results: list[dict]) -> None:
    print()
    print(
        "| configuration | tables sustained (p99 < 100 ms) | p99 ms there | actions/s | "
        "evidence appends/s | write lock held / waited | first count missed (p99 ms) | "
        "audit hands/s --jobs 1 | --jobs 2 |"
    )
    print("|---|---:|---:|---:|---:|---|---|---:|---:|")
    for r in results:
        ok = [s for s in r["steps"] if s.get("actions") and s["p99"] < bench.TARGET_P99_MS]
        missed = [s for s in r["steps"] if s not in ok]
        best = ok[-1] if ok else None
        lock = (
            f"{best['lock']['held']:.0%} / {best['lock']['waited']:.0%}"
            if best and "lock" in best
            else "-"
        )
        miss = (
            f"{missed[0]['tables']} ({missed[0].get('p99', float('nan')):,.1f})"
            if missed
            else "none"
        )
        print(
            f"| {r['name']} | {best['tables'] if best else 'none'} | "
            f"{best['p99'] if best else float('nan'):.1f} | "
            f"{best['per_s'] if best else 0:,.1f} | {best['appends'] if best else 0:,.1f} | "
            f"{lock} | {miss} | {r['audits'][0]['per_s']:,.0f} | {r['audits'][1]['per_s']:,.0f} |"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--configs", default=",".join(CONFIGS), help="of " + ", ".join(CONFIGS))
    parser.add_argument(
        "--tables", default="25,50,100,200,400,800", help="total table counts, comma separated"
    )
    parser.add_argument("--duration", type=float, default=30.0, help="measured seconds a step")
    parser.add_argument("--warmup", type=float, default=8.0, help="uncounted seconds a step")
    parser.add_argument("--speed", type=float, default=1.0, help="game speed (1: real pace)")
    parser.add_argument("--lease", type=float, default=60.0, help="hosts' lease, seconds")
    parser.add_argument("--seed", type=int, default=bench.DEFAULT_SEED)
    parser.add_argument("--pg-admin", default=os.environ.get("GMTOOL_TEST_PG", DEFAULT_ADMIN))
    args = parser.parse_args(argv)
    names = args.configs.split(",")
    unknown = [n for n in names if n not in CONFIGS]
    if unknown:
        parser.error(f"unknown configuration(s) {', '.join(unknown)}: of {', '.join(CONFIGS)}")
    args.tables = [int(x) for x in args.tables.split(",")]
    print(bench.environment())
    pace = "speed 1 (real limits)" if args.speed == 1 else f"speed {args.speed:g} (target at 1)"
    print(
        f"hosts: {pace}, {args.duration:g} s measured after {args.warmup:g} s warm-up a step, "
        f"lease {args.lease:g} s; target p99 < {bench.TARGET_P99_MS:g} ms"
    )
    folder = Path(tempfile.mkdtemp(prefix="gmtool-bench-hosts-"))
    try:
        results = [configuration(name, args, folder) for name in names]
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    table(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
