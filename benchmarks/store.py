"""Store and host benchmarks (issue 5): each figure against a baseline of the same run.

    python benchmarks/store.py                      # both sections
    python benchmarks/store.py write --hands 400 --repeat 5
    python benchmarks/store.py host --tables 10,50,100,200,400 --duration 40

``write``: events written per second through the store's real write path (the host's
``Recorder``: ``begin_hand``, one ``TableLog.append`` transaction per input, one durable
``settle_hand`` transaction with the ledger rows) for real engine hands played by the
house bots, against a bare ``executemany`` of the very same rows into the same SQLite
file (one transaction, same pragmas). Hands are played in memory before timing, so only
the store is measured.

``host``: how many tables one host process sustains at the profiles' real pace (speed 1,
the profiles' 15 s action limits, bots thinking 0.5-4 s) with action latency under
100 ms at the 99th percentile. The latency of an action is the delay between the moment
it was due (the wake-up the table scheduled) and the moment its events were committed.
The real ``Host`` runs in a child process per table count; ``HostedTable.sleep`` and
``HostedTable.record`` are wrapped here (gmtool itself is not changed) to take the two
timestamps. The first seconds (tables sitting down and starting their first hands
together) are a warm-up and are not counted; the measured ``--duration`` starts at the
first action after it (a busy machine may take longer to warm up: the window waits for
it, up to ``GIVE_UP_S``, rather than measuring nothing). The bots' percentile tables of
every hosted room's ranking are built before the host runs (``warm_bots``): gmtool builds
each at the ranking's first bot decision, blocking the host's event loop for 1-3 s once,
which would otherwise land in the window at random.

``--speed`` runs the host faster than the real pace (the smoke test's tiny runs); the
target is stated for speed 1.

``--fixed-bots`` is kept so that the commands recorded in benchmarks/README.md still
run, and changes nothing: it once swapped in a ``choose`` that built only the four
amounts the bots picked from, where ``gmtool.house.bots.choose`` built every concrete
action of the verb (one ``Action`` per coin for an owner-ante bet). Bots now decide with
``gmtool.bots.policies.decide``, which makes only the one action it takes, so the host
as installed is what the flag measured.

Stores are made and profiles deployed through the console (``gmtool db init``, ``gmtool
deploy``), as an operator would; the store has no operator, so no GM key is needed.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import platform
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from gmtool.engine.hand import Seat
from gmtool.engine.play import seeded_source, start_hand
from gmtool.house import seeds
from gmtool.house.bots import STYLE_NAMES, choose
from gmtool.house.recorder import Recorder
from gmtool.store import ledger
from gmtool.store import tables as table_store
from gmtool.store.db import connect

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "rules"
SHIPPED = ("lequ-showhand", "qq-showhand", "straight-flush", "suihua-three-card", "video-showhand")
ROOMS = (
    ("qq-showhand", "junior"),
    ("video-showhand", "junior"),
    ("suihua-three-card", "chips-5"),
    ("suihua-three-card", "chips-10"),
)
PLAYERS = tuple(f"p{n:02d}" for n in range(12))
DEFAULT_SEED = 20_261_130
TARGET_P99_MS = 100.0


# -- write: the real write path against a bare executemany ------------------------------------


OPENING = 10**11  # a hand starts only if each player's balance covers their seat (stakes.cover)


def play_hands(configs: dict[str, dict], count: int, seed: int) -> list[tuple]:
    """Hands played in memory by the house bots: (profile, tier, number, seed, batches),
    where batches are the engine's events per input, as the host hands them over."""
    rng = random.Random(seed)
    key = seeds.seed_key(f"bench-{seed}")
    hands, numbers = [], {}
    for _ in range(count):
        profile, tier = rng.choice(ROOMS)
        config = configs[profile]
        table_id = f"{profile}-{tier}"
        numbers[table_id] = number = numbers.get(table_id, 0) + 1
        hand_seed = seeds.hand_seed(key, table_id, number)
        seated = rng.sample(PLAYERS, rng.randint(2, config["table"]["seats"]))
        hand = start_hand(
            config,
            tier,
            [Seat(p, 10_000_000) for p in seated],
            seated[0],
            seeded_source(config, hand_seed),
        )
        batches = [list(hand.events)]
        while not hand.is_over:
            actor = hand.to_act
            before = len(hand.events)
            hand.apply(choose(rng.choice(STYLE_NAMES), hand.legal_actions(), actor, rng, hand=hand))
            batches.append(list(hand.events[before:]))
        hands.append((table_id, number, hand_seed, batches))
    return hands


def gmtool_command() -> list[str]:
    script = Path(sys.executable).with_name("gmtool")
    return [str(script)] if script.exists() else [sys.executable, "-m", "gmtool"]


def deployed_store(path: Path, profiles) -> None:
    """A new store at `path` with `profiles` deployed, through the console as an operator
    would (no operator registered: the deploys need no GM key)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("GMTOOL_DB", "GMTOOL_DEBUG", "GMTOOL_WITNESS")
    }
    env["GMTOOL_USER"] = "bench"
    for args in (["db", "init"], *(["deploy", str(RULES / f"{p}.toml")] for p in profiles)):
        run = subprocess.run(
            [*gmtool_command(), *args, "--db", str(path)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        if run.returncode != 0:
            raise SystemExit(
                f"gmtool {' '.join(args)} exited {run.returncode}:\n{run.stdout}{run.stderr}"
            )


def fresh_store(folder: Path, configs: dict[str, dict]):
    path = folder / f"write-{time.monotonic_ns()}.db"
    deployed_store(path, configs)
    store = connect(path)
    for profile, tier in ROOMS:
        table_store.open_table(store, f"{profile}-{tier}", profile, tier, "", os.getpid())
    for player in PLAYERS:  # every seat brings 10,000,000: a balance that covers any run
        ledger.grant(store, player, OPENING, "opening_balance", kind="bot")
    return store


def record_all(store, hands: list[tuple]) -> int:
    """The host's write path: a Recorder per table, fed one input's events at a time."""
    recorders: dict[str, Recorder] = {}
    for table_id, number, hand_seed, batches in hands:
        recorder = recorders.setdefault(table_id, Recorder(store, table_id))
        recorder.record(batches[0], seed=hand_seed, number=number)
        for batch in batches[1:]:
            recorder.record(batch)
    return store.one("SELECT COUNT(*) FROM events")[0]


def bare_executemany(store, rows: list[tuple]) -> None:
    """The same rows, into a table of the same shape and indexes in the same file, at once."""
    conn = store.conn
    if store.one("SELECT 1 FROM sqlite_master WHERE name = 'bare_events'") is None:
        for (sql,) in store.all(
            "SELECT sql FROM sqlite_master WHERE tbl_name = 'events' AND "
            "type IN ('table', 'index') AND sql IS NOT NULL"
        ):
            conn.execute(
                sql.replace("[events]", "bare_events")
                .replace('"events"', "bare_events")
                .replace("idx_events_", "idx_bare_events_")
            )
    conn.execute("DELETE FROM bare_events")
    conn.commit()
    start = time.perf_counter()
    conn.execute("BEGIN")
    conn.executemany(
        "INSERT INTO bare_events (id, table_id, hand_id, seq, type, payload, "
        "created_at, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        rows,
    )
    conn.execute("COMMIT")
    return time.perf_counter() - start


def bench_write(hands_count: int, repeat: int, seed: int) -> dict:
    from gmtool.rules.compile import compile_file

    configs = {p: compile_file(RULES / f"{p}.toml") for p in {p for p, _ in ROOMS}}
    hands = play_hands(configs, hands_count, seed)
    inputs = sum(len(b) - 1 for _, _, _, b in hands)
    ours, bare, per_tx = [], [], []
    folder = Path(tempfile.mkdtemp(prefix="gmtool-bench-"))
    try:
        for _ in range(repeat):
            with fresh_store(folder, configs) as store:
                start = time.perf_counter()
                events = record_all(store, hands)
                ours.append(events / (time.perf_counter() - start))
                rows = [
                    tuple(r)
                    for r in store.all(
                        "SELECT id, table_id, hand_id, seq, type, "
                        "payload, created_at, prev_hash, hash "
                        "FROM events ORDER BY id"
                    )
                ]
                bare.append(len(rows) / bare_executemany(store, rows))
                per_tx.append(len(rows) / per_batch_transactions(store, hands, rows))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return {
        "hands": len(hands),
        "inputs": inputs,
        "events": events,
        "ours": statistics.median(ours),
        "bare": statistics.median(bare),
        "per_tx": statistics.median(per_tx),
    }


def per_batch_transactions(store, hands: list[tuple], rows: list[tuple]) -> float:
    """A middle figure: the same rows, one plain transaction per input's batch (no chain,
    no hand or ledger rows): how much of the gap is transactions, not gmtool's work."""
    conn = store.conn
    conn.execute("DELETE FROM bare_events")
    conn.commit()
    sizes = [len(b) for _, _, _, batches in hands for b in batches]
    start = time.perf_counter()
    at = 0
    for size in sizes:
        if not size:
            continue
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany(
            "INSERT INTO bare_events (id, table_id, hand_id, seq, type, payload, "
            "created_at, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows[at : at + size],
        )
        conn.execute("COMMIT")
        at += size
    return time.perf_counter() - start


# -- host: tables sustained at the real pace ----------------------------------------------------


GIVE_UP_S = 120.0  # no action this long after the warm-up: the run reports none


class Timings:
    """Due times of scheduled wake-ups and the commit times of the events that follow."""

    def __init__(self) -> None:
        self.due: dict[int, float] = {}
        self.latencies: list[tuple[float, float]] = []  # (when, latency s)
        self.counting_from = float("inf")

    def install(self) -> None:
        from gmtool.house import table as table_module

        cls = table_module.HostedTable
        original_sleep, original_record = cls.sleep, cls.record
        timings = self

        async def sleep(self, game_seconds: float, *args, **kwargs) -> None:
            due = time.monotonic() + game_seconds / self.host.speed
            await original_sleep(self, game_seconds, *args, **kwargs)
            timings.due[id(self)] = due

        def record(self, events):
            due = timings.due.pop(id(self), None)
            result = original_record(self, events)
            done = time.monotonic()
            if due is not None and done >= timings.counting_from:
                timings.latencies.append((done, max(0.0, done - due)))
            return result

        cls.sleep, cls.record = sleep, record


def run_host(
    folder: Path, tables: int, duration: float, warmup: float, seed: str, speed: float = 1.0
) -> dict:
    from gmtool.house.host import HostOptions

    path = folder / f"host-{tables}.db"  # made and deployed by the parent
    with connect(path) as store:
        options = HostOptions(tables=tables, speed=speed, duration=None, seed=seed, grace=0.1)
        measured = host_samples(store, options, duration, warmup)
        hands = store.one("SELECT COUNT(*) FROM hands WHERE outcome = 'settled'")[0]
    return summary(tables, duration, measured["samples"], hands, measured["cpu"])


def host_samples(store, options, duration: float, warmup: float, prepare=None, go=None) -> dict:
    """Run a host on `store` (`prepare(store, options)`, by default `prepare_host`), then,
    once `go()` returns, play until `duration` seconds after its first action past the
    warm-up: the latencies (s, sorted) of the actions in that window, and the host's CPU
    share. (benchmarks/hosts.py runs several of these over one PostgreSQL store.)"""
    from gmtool.house.host import prepare_host

    timings = Timings()
    timings.install()
    host = (prepare or prepare_host)(store, options)
    warm_bots(host)
    if go is not None:
        go()
    started = time.monotonic()
    timings.counting_from = started + warmup

    def window_over(running) -> None:  # the host's progress callback, every 0.1 s
        now = time.monotonic()
        first = timings.latencies[0][0] if timings.latencies else None
        if (first is not None and now >= first + duration) or (
            first is None and now >= timings.counting_from + GIVE_UP_S
        ):
            running.request_stop()

    cpu = time.process_time()
    asyncio.run(host.run(window_over, signals=False))
    wall = time.monotonic() - started
    cpu = time.process_time() - cpu
    window_end = timings.latencies[0][0] + duration if timings.latencies else 0.0
    samples = sorted(latency for when, latency in timings.latencies if when <= window_end)
    return {"samples": samples, "cpu": cpu / wall, "wall": wall}


def warm_bots(host) -> None:
    """Build the bots' percentile tables of every hosted room's ranking now, as part of the
    start. gmtool built them at a ranking's first bot decision (`gmtool.bots.strength`),
    on the host's event loop: one to three seconds during which every table waited, once
    per ranking, which fell into the measured window at random. Since 2026-12-03 the host
    builds them as it opens a table (`Host.open_table`), so this finds them built; it
    stays for the benchmark's runs against an older gmtool (a baseline commit)."""
    from gmtool.bots.strength import percentiles

    for table in host.tables.values():
        percentiles(host.room(table.profile_id, table.tier).ranking)


def summary(tables: int, duration: float, samples: list[float], hands: int, cpu: float) -> dict:
    """The figures of one table count from its sorted latencies (s)."""
    if not samples:
        return {"tables": tables, "actions": 0}

    def pct(p: float) -> float:
        return samples[min(len(samples) - 1, int(p / 100 * len(samples)))] * 1000

    return {
        "tables": tables,
        "actions": len(samples),
        "per_s": len(samples) / duration,
        "p50": pct(50),
        "p99": pct(99),
        "max": samples[-1] * 1000,
        "hands": hands,
        "cpu": cpu,
    }


def bench_host(
    counts: Sequence[int], duration: float, warmup: float, seed: str, speed: float = 1.0
) -> list[dict]:
    folder = Path(tempfile.mkdtemp(prefix="gmtool-bench-host-"))
    results = []
    try:
        for count in counts:
            deployed_store(folder / f"host-{count}.db", SHIPPED)
            # each run in a child process: a fresh interpreter and event loop per table count
            # (an executor, not a Pool: a child that dies fails the run instead of hanging it)
            with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork")) as pool:
                result = pool.submit(
                    run_host, folder, count, duration, warmup, seed, speed
                ).result()
            results.append(result)
            print(render_host(result), flush=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return results


# -- output ---------------------------------------------------------------------------------


def render_host(r: dict) -> str:
    if not r.get("actions"):
        return f"  {r['tables']:>5} tables: no actions measured"
    verdict = "ok" if r["p99"] < TARGET_P99_MS else "MISSED"
    return (
        f"  {r['tables']:>5} tables: {r['actions']:>6} actions ({r['per_s']:6.1f}/s), "
        f"latency p50 {r['p50']:7.1f} ms, p99 {r['p99']:8.1f} ms, max {r['max']:8.1f} ms, "
        f"host CPU {r['cpu']:4.0%}, {r['hands']} hands settled: {verdict}"
    )


def environment() -> str:
    return (
        f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, CPython "
        f"{platform.python_version()}, SQLite {sqlite3.sqlite_version}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("section", nargs="?", choices=("write", "host", "all"), default="all")
    parser.add_argument("--hands", type=int, default=300, help="hands recorded (write)")
    parser.add_argument("--repeat", type=int, default=5, help="runs, median kept (write)")
    parser.add_argument(
        "--tables", default="10,50,100,200,400", help="table counts, comma separated (host)"
    )
    parser.add_argument(
        "--duration", type=float, default=40.0, help="measured seconds per table count (host)"
    )
    parser.add_argument("--warmup", type=float, default=8.0, help="uncounted seconds (host)")
    parser.add_argument(
        "--speed",
        type=float,
        default=1.0,
        help="host: game speed (1, the default, is the real pace)",
    )
    parser.add_argument(
        "--fixed-bots",
        action="store_true",
        help="obsolete, changes nothing: the bots as installed make only the action they take",
    )
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    args = parser.parse_args(argv)
    print(environment())
    if args.section in ("write", "all"):
        r = bench_write(args.hands, args.repeat, args.seed)
        print(
            f"write: {r['hands']} hands, {r['inputs']} inputs, {r['events']} events "
            f"(median of {args.repeat} runs)"
        )
        print(f"  store write path (Recorder: begin/append/settle) {r['ours']:>10,.0f} events/s")
        print(
            f"  one transaction per input, plain executemany   {r['per_tx']:>10,.0f} events/s"
            f"  (x{r['per_tx'] / r['bare']:.3f} of bare)"
        )
        print(f"  bare executemany, one transaction              {r['bare']:>10,.0f} events/s")
        print(
            f"  ratio store / bare executemany: {r['ours'] / r['bare']:.3f} "
            f"(store / per-input transactions: {r['ours'] / r['per_tx']:.2f})"
        )
    if args.section in ("host", "all"):
        counts = [int(x) for x in args.tables.split(",")]
        pace = (
            "speed 1 (real limits)"
            if args.speed == 1
            else f"speed {args.speed:g} (the target is for speed 1)"
        )
        print(
            f"host: {pace}, {args.duration:g} s measured after {args.warmup:g} s warm-up "
            f"per table count; target p99 < {TARGET_P99_MS:g} ms"
        )
        if args.fixed_bots:
            print(
                "  (--fixed-bots is obsolete and changes nothing: the bots as installed "
                "make only the action they take)"
            )
        results = bench_host(counts, args.duration, args.warmup, f"bench-{args.seed}", args.speed)
        sustained = [r["tables"] for r in results if r.get("actions") and r["p99"] < TARGET_P99_MS]
        print(
            f"  sustained with p99 < {TARGET_P99_MS:g} ms: "
            f"{max(sustained) if sustained else 'none'} of {counts} tables"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
