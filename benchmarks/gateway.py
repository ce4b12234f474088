"""The player gateway under load (issue 25): N bot clients over loopback, real pace.

    python benchmarks/gateway.py                          # N = 50 200 500 1000 2000
    python benchmarks/gateway.py --players 20 --duration 5 --think 0.5

For each N, on a new store with the QQ profile deployed:

- **network bots**: a host (`gmtool house run --listen 127.0.0.1:0`, a subprocess on the
  real clock, speed 1) with enough QQ tables for N players (as many of each room, the
  host planning its tables over the rooms in turn); N `NetworkBot`s
  (gmtool/gateway/client.py, what `gmtool bots --connect` runs) in this process, one event
  loop, each with a token minted from the store and coins granted by a logged GM
  adjustment, sit and play for `--duration` seconds, thinking `--think` seconds (mean) a
  turn as a person would. Measured: the **action round trip**, from the `your_turn` frame
  received to the event of the bot's own action received, less the thinking (so: the
  decision, the frame to the host, the engine, the recorder's turn, the event back),
  p50/p99 over every action; the host's **memory per connection** (its RSS with the N
  connected, less its RSS hosting the same tables before any connected, over N); the
  host's CPU share over the run;
- **in-process bots** (today's), side by side in the same run: the same tables hosted in
  this process with the host's own bots (`gmtool/house/table.py` calling
  `house/bots.choose`) for the same seconds; measured: each decision's latency p50/p99,
  which is all an in-process bot's round trip is (no socket).

The figure: the largest N whose round trip p99 stays under 100 ms (issue 25's target:
2,000 on a 2-core machine). Nothing is asserted; tests/test_benchmarks_run.py runs it at
a tiny size.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "rules"
PROFILE = "qq-showhand"
TARGET_MS = 100.0


def gmtool_command() -> list[str]:
    script = Path(sys.executable).with_name("gmtool")
    return [str(script)] if script.exists() else [sys.executable, "-m", "gmtool"]


def env() -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if k not in ("GMTOOL_DB", "GMTOOL_WITNESS")}
    out.update(GMTOOL_USER=os.environ.get("GMTOOL_USER", "bench"), PYTHONUNBUFFERED="1")
    return out


def gmtool(*args: str) -> None:
    run = subprocess.run(
        [*gmtool_command(), *args], env=env(), capture_output=True, text=True, check=False
    )
    if run.returncode != 0:
        raise SystemExit(f"gmtool {' '.join(args)}: exit {run.returncode}\n{run.stderr}")


def new_store(folder: Path) -> Path:
    db = folder / "gateway.db"
    gmtool("db", "init", "--db", str(db))
    gmtool("deploy", str(RULES / f"{PROFILE}.toml"), "--db", str(db))
    return db


def rooms(db: Path) -> tuple[list[tuple[str, str]], int]:
    """The profile's open rooms (the host plans its tables over them in turn) and the
    seats of a table."""
    from gmtool.engine.config import EngineConfig
    from gmtool.store import configs
    from gmtool.store.db import connect

    with connect(db) as store:
        compiled = configs.load_config(store, configs.latest_config_id(store, PROFILE))
    tiers = [(PROFILE, tier["id"]) for tier in compiled["tiers"] if tier["enabled"]]
    return tiers, EngineConfig.of(compiled).table.seats


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def prepare_bots(db: Path, count: int) -> dict:
    from gmtool.cli.common import acting_user
    from gmtool.ops import netbots
    from gmtool.store.db import connect

    with connect(db) as store:
        made = netbots.prepare(
            store,
            acting_user(env()["GMTOOL_USER"]),
            netbots.bot_names("load", count),
            10**9,
            86_400,
        )
    return made


def start_host(db: Path, tables: int, log: Path) -> tuple[subprocess.Popen, str]:
    out = open(log, "w")
    host = subprocess.Popen(
        [*gmtool_command(), "house", "run", "--db", str(db), "--system", PROFILE,
         "--tables", str(tables), "--listen", "127.0.0.1:0", "--grace", "5"],
        stdout=out, stderr=subprocess.STDOUT, env=env(),
    )  # fmt: skip
    out.close()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        text = log.read_text()
        if "players connect at ws://" in text:
            return host, text.split("players connect at ", 1)[1].split()[0]
        if host.poll() is not None:
            raise SystemExit(f"the host stopped:\n{text}")
        time.sleep(0.05)
    host.kill()
    raise SystemExit("the host did not start listening within 120 s")


async def seated(bots: list, task: asyncio.Future, within: float = 120.0) -> None:
    """Until every bot has been dealt into a hand (the host's own bots stood up for them
    as their hands ended), or `within` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline and not task.done():
        if all(bot.name in bot.told.dealt or bot.stats.hands for bot in bots):
            return
        await asyncio.sleep(0.1)


def warm(db: Path) -> None:
    """The strength tables of the room's ranking, built before anything is timed (both
    kinds of bot build them once per process, on their first decision)."""
    from gmtool.bots.strength import percentiles
    from gmtool.engine.games import ranking_for
    from gmtool.store import configs
    from gmtool.store.db import connect

    with connect(db) as store:
        percentiles(ranking_for(configs.load_config(store, configs.latest_config_id(
            store, PROFILE))))  # fmt: skip


def network_run(db: Path, count: int, duration: float, think: float, folder: Path) -> dict:
    from gmtool.ops import netbots

    tiers, seats = rooms(db)
    tables = len(tiers) * math.ceil(count / (seats * len(tiers)))  # as many of each room
    made = prepare_bots(db, count)
    host, url = start_host(db, tables, folder / f"host-{count}.log")
    try:
        time.sleep(1.0)  # the tables' first hands under way
        before = rss_kib(host.pid)
        bots = netbots.make_bots(
            url, made["tokens"], made["rules"], netbots.policies([]), None, 0, think,
            seed="bench",
        )  # fmt: skip
        for index, bot in enumerate(bots):  # each room's tables filled evenly
            bot.room = tiers[index % len(tiers)]

        async def load() -> tuple[netbots.Report, int, float]:
            stop = asyncio.Event()
            task = asyncio.ensure_future(netbots.play(bots, stop))
            waited = time.monotonic()
            await seated(bots, task)
            dealt = sum(1 for bot in bots if bot.name in bot.told.dealt or bot.stats.hands)
            print(f"  (N={count}: {dealt} bots dealt in after {time.monotonic() - waited:.1f} s)",
                  file=sys.stderr)  # fmt: skip
            gc.collect()  # the bots' own full collections (0.5 s with 2,000 bots) would
            gc.freeze()  # count as round trips: their state so far is never scanned again
            await asyncio.sleep(1.0)  # the round trips this collection held up end first
            for bot in bots:  # measured from here: every bot plays
                bot.stats.round_trips.clear()
            cpu0 = cpu_s(host.pid)
            await asyncio.sleep(duration)
            during, cpu = rss_kib(host.pid), (cpu_s(host.pid) - cpu0) / duration
            stop.set()
            return await task, during, cpu

        report, during, cpu = asyncio.run(load())
    finally:
        host.terminate()
        host.wait(timeout=120)
    summary = report.summary()
    connected = sum(1 for bot in bots if bot.name)
    return {
        "tables": tables,
        "connected": connected,
        "actions": summary["actions"],
        "p50": summary["round_trip_ms"]["p50"],
        "p99": summary["round_trip_ms"]["p99"],
        "kib_per_connection": (during - before) / max(connected, 1),
        "host_cpu": cpu,
        "refused": len(summary["refused"]),
        "errors": summary["errors"],
    }


def in_process_run(db: Path, tables: int, duration: float) -> dict:
    """Today's bots: the same tables hosted here on the real clock; each decision timed."""
    from gmtool.house import table as hosted
    from gmtool.house.host import HostOptions, prepare_host
    from gmtool.house.lock import HostLock
    from gmtool.ops.netbots import quantile
    from gmtool.store.db import connect

    timings: list[float] = []
    choose = hosted.choose

    def timed(*args, **kwargs):  # noqa: ANN002, ANN003 - house/bots.choose's own
        started = time.perf_counter()
        try:
            return choose(*args, **kwargs)
        finally:
            timings.append(time.perf_counter() - started)

    hosted.choose = timed
    try:
        with HostLock(db), connect(db) as store:
            options = HostOptions(tables=tables, systems=[PROFILE], duration=duration, grace=5)
            host = prepare_host(store, options)
            asyncio.run(host.run(signals=False))
    finally:
        hosted.choose = choose
    timings.sort()
    return {
        "actions": len(timings),
        "p50": quantile(timings, 0.5) * 1000,
        "p99": quantile(timings, 0.99) * 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--players", type=int, nargs="+", default=[50, 200, 500, 1000, 2000])
    parser.add_argument("--duration", type=float, default=30.0, help="seconds of play per N")
    parser.add_argument("--think", type=float, default=2.0, help="mean thinking seconds a turn")
    args = parser.parse_args()
    print(
        f"gateway load: {PROFILE} (every room), {args.duration:g} s per N, think {args.think:g} s; "
        f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}"
    )
    print(
        "| N | tables | connected | actions | round trip p50 | p99 | host KiB/connection "
        "| host CPU | in-process actions | decision p50 | p99 |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    best = 0
    for count in args.players:
        with tempfile.TemporaryDirectory(prefix="gmtool-gateway-") as folder:
            db = new_store(Path(folder))
            warm(db)
            net = network_run(db, count, args.duration, args.think, Path(folder))
            local = in_process_run(db, net["tables"], args.duration)
        print(
            f"| {count:,} | {net['tables']} | {net['connected']:,} | {net['actions']:,} "
            f"| {net['p50']:.2f} ms | {net['p99']:.2f} ms | {net['kib_per_connection']:.1f} "
            f"| {net['host_cpu']:.0%} | {local['actions']:,} | {local['p50']:.3f} ms "
            f"| {local['p99']:.3f} ms |",
            flush=True,
        )
        if net["refused"] or net["errors"]:
            print(f"  note: {net['refused']} bots refused, {net['errors']} error frames")
        if net["p99"] < TARGET_MS and net["connected"] == count:
            best = max(best, count)
    print(f"largest N with round trip p99 < {TARGET_MS:g} ms: {best:,} (target 2,000)")


if __name__ == "__main__":
    main()
