"""Audit benchmark: audited hands per second against a plain read of the same event rows.

    python benchmarks/audit.py                       # 20,000 and 100,000 hands (cached)
    python benchmarks/audit.py --sizes 20000 100000 --repeat 3
    python benchmarks/audit.py --profile             # cProfile of one audit: the hotspots
    python benchmarks/audit.py --parts               # what each part of an audit costs
    python benchmarks/audit.py --check               # exit 1 below 7,000 audited hands/s
    python benchmarks/audit.py --rebuild             # build the databases again

The databases are built by driving the engine and the store directly, not at real pace:
every shipped profile is deployed by the benchmark's operator (`deploy_profile`, signed),
ten tables of all five systems play random legal actions (and now and then a timeout,
or a disconnect and a reconnect inside the window) from `gmtool.engine.play.start_hand`
under seeded decks, and `gmtool.house.recorder.Recorder` writes every hand into the
store exactly as the host does: its commitment at the start, its chained events, its
settlement with ledger rows and the seed at the end. As on a real host's store, each seed
is the RSA signature of the store's seed key (`<db>.seed.key`) over the hand's slot, the
key registered in the evidence log and signed by the host's checkpoint key (fixed here),
which also signs every opening balance; the audit is given that key's verifier, so it
checks every one of those signatures (gmtool audit beside `<db>.checkpoint.pub`). The
play is deterministic (the seed key is made once per cache, so the decks differ between
caches); the stores are cached under --cache, in a folder named by a fingerprint of the
engine and store code (so a changed format is rebuilt, never measured stale); the
smaller database is a prefix of the larger one.

Each size is then measured in a fresh interpreter, one core:

- audit: `gmtool.audit.run.run_audit` over the whole store with the host's verifier key
  (chains, commitments, replays, zero-sum settlements, ledgers, balances, GM log, the
  evidence log, every seed's RSA signature); it must find no problem;
- read: the baseline, a plain read of the same event rows (`SELECT hand_id, seq, type,
  payload FROM events`, fetched in batches), and read + `json.loads` of every payload
  (parse only, what a hand-history parser does);
- peak memory: the process's maximum resident set (`resource`) after the audits (they
  run before the read baselines), and with --tracemalloc the peak of Python allocations
  during one more audit (slower).

Target (issue 6): at least 7,000 audited hands per second on one core, faster than the
published parse-only speed of the PHH hand-history format (6,801 hands/s), with a peak
memory that does not grow with the number of hands.
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import io
import json
import os
import platform
import pstats
import random
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RULES = HERE.parent / "rules"
PROFILES = ("lequ-showhand", "qq-showhand", "video-showhand", "straight-flush", "suihua-three-card")
# (profile, room): every system, coin rooms and training rooms, two owner-ante tables.
TABLES = (
    ("qq-showhand", "junior"),
    ("qq-showhand", "middle"),
    ("qq-showhand", "training"),
    ("video-showhand", "junior"),
    ("video-showhand", "training"),
    ("straight-flush", "normal"),
    ("lequ-showhand", "table"),
    ("lequ-showhand", "table"),
    ("suihua-three-card", "chips-5"),
    ("suihua-three-card", "chips-10"),
)
PLAYERS_PER_TABLE = 5
OPENING = 10_000_000
TARGET = 7_000
PHH_PARSE = 6_801  # hands/s, published parse-only speed of the PHH format
BUILD_BATCH = 1_000
BUILD_VERSION = "5"  # bump when the way stores are built changes (part of the cache key)
GM_USER = "benchmark"  # the operator whose adjustments top up players who ran dry


def host_signer(store):
    """The benchmark host's checkpoint key (fixed; named by the store's log origin): it
    signs the seed key's registration and every opening balance, as a real host's does."""
    from gmtool.evidence.note import Signer
    from gmtool.store.log_append import origin_of

    return Signer(origin_of(store), hashlib.sha256(b"gmtool audit benchmark host").digest())


def seed_key(path: Path) -> Path:
    """The benchmark host's RSA seed key, beside its store as the host keeps it
    (`<db>.seed.key`, made on first use); a store's copy takes it along (`_copy_store`)."""
    from gmtool.house.seeds import seed_key_path

    return seed_key_path(path)


def audit_options(store) -> dict:
    """`run_audit`'s options as `gmtool audit` sets them beside a host's verifier key:
    every check, with the seed key's registration and every opening balance held to the
    host's signature."""
    return {"host_key": host_signer(store).verifier}


def operator():
    """The benchmark's operator with a fixed key (a resumed build signs with it again)."""
    from gmtool.evidence.note import Signer
    from gmtool.evidence.request import Gm

    return Gm(GM_USER, Signer(GM_USER, hashlib.sha256(b"gmtool audit benchmark").digest()))


# -- building ---------------------------------------------------------------------------


class Builder:
    """Plays and records hands into one store; resumable (a store is a prefix of a larger)."""

    def __init__(self, path: Path) -> None:
        from gmtool.engine.games import ranking_for
        from gmtool.evidence import hand_seeds, opening
        from gmtool.evidence.hand_seeds import RSA
        from gmtool.house.recorder import Recorder
        from gmtool.house.seeds import load_seed_signer
        from gmtool.ops import gm as gm_ops
        from gmtool.ops.deploy import deploy_profile
        from gmtool.store import configs, ledger, seed_keys
        from gmtool.store import tables as table_store
        from gmtool.store.db import connect
        from gmtool.store.log_append import origin_of

        self.store = connect(path, create=True)
        self.operator = operator()
        self.host = host_signer(self.store)
        self.seeds = load_seed_signer(path)
        self.origin = origin_of(self.store)
        fresh = not self.store.one("SELECT 1 FROM deployments LIMIT 1")
        if fresh:
            gm_ops.bootstrap(self.store, self.operator)  # the first operator, with their key
            for profile in PROFILES:  # each deployment with its signed GM action
                deploy_profile(self.store, RULES / f"{profile}.toml", None, self.operator)
            # Seeds are the seed key's RSA signatures, its registration signed by the host's
            # checkpoint key (house/seed_source.py): the audit verifies one a hand.
            seed_keys.register(
                self.store,
                RSA,
                self.seeds.public,
                lambda first, scheme, key, at: hand_seeds.sign_key(
                    self.host, first, scheme, key, at
                ),
            )
        self.tables = []
        counts: dict[tuple[str, str], int] = {}
        for profile, room in TABLES:
            counts[(profile, room)] = counts.get((profile, room), 0) + 1
            table_id = f"{profile}-{room}-{counts[(profile, room)]}"
            config = configs.load_config(
                self.store, configs.active_config_id(self.store, profile, room)
            )
            players = [f"{table_id}-p{i}" for i in range(PLAYERS_PER_TABLE)]
            if fresh:
                table_store.open_table(self.store, table_id, profile, room, config["game"], 0)
                for name in players:  # signed by the host, as house/pool.py opens them
                    ledger.open_account(
                        self.store,
                        name,
                        OPENING,
                        "bot",
                        lambda ledger_id, player, amount: opening.sign(
                            self.host, ledger_id, player, amount
                        ),
                    )
            self.tables.append(
                {
                    "id": table_id,
                    "room": room,
                    "config": config,
                    "ranking": ranking_for(config),
                    "players": players,
                    "recorder": Recorder(self.store, table_id),
                    "banker": None,
                }
            )
        self.coins = {
            r["name"]: r["coins"] for r in self.store.all("SELECT name, coins FROM players")
        }
        self.numbers = {
            r["table_id"]: r["n"]
            for r in self.store.all(
                "SELECT table_id, MAX(number) AS n FROM hands GROUP BY table_id"
            )
        }

    def hands(self) -> int:
        return self.store.one("SELECT COUNT(*) FROM hands")[0]

    def build(self, target: int, progress) -> None:
        done = self.hands()
        while done < target:
            for table in self.tables:
                if done >= target:
                    break
                self.play(table)
                done += 1
                if done % BUILD_BATCH == 0:
                    progress(done)

    def play(self, table: dict) -> None:
        from gmtool.engine.hand import Seat
        from gmtool.engine.play import seeded_source, start_hand
        from gmtool.ops.gm import adjust

        config, room = table["config"], table["room"]
        number = self.numbers.get(table["id"], 0) + 1
        self.numbers[table["id"]] = number
        rng = random.Random(f"{table['id']}#{number}")
        tier = next(t for t in config["tiers"] if t["id"] == room)
        ante = None
        if config["betting"].get("style") == "owner_ante":
            ante = rng.choice(config["owner_ante"]["chips"][:4])
            need = config["owner_ante"]["min_holding_antes"] * ante
        else:
            need = tier.get("min_holding") or 0
        seats = rng.sample(
            table["players"], rng.randint(2, min(PLAYERS_PER_TABLE, config["table"]["seats"]))
        )
        for name in seats:  # a player run dry (a lequ show-hand) is topped up by a GM
            if self.coins[name] < 2 * max(need, tier.get("hand_cap") or 0, 1000):
                adjust(self.store, self.operator, name, OPENING, "benchmark top-up")
                self.coins[name] += OPENING
        banker = table["banker"] if table["banker"] in seats else seats[0]
        seed = self.seeds.seed(self.origin, table["id"], number)
        hand = start_hand(
            config,
            room,
            [Seat(name, self.coins[name]) for name in seats],
            banker,
            seeded_source(config, seed),
            ante=ante,
            ranking=table["ranking"],
        )
        play_randomly(hand, rng)
        settlement = table["recorder"].record(hand.events, seed=seed, number=number)
        if settlement and tier.get("coins", True):
            for entry in settlement["entries"]:
                self.coins[entry["player"]] += entry["delta"]
        table["banker"] = (
            settlement["winners"][0] if settlement and settlement["winners"] else banker
        )


def play_randomly(hand, rng: random.Random) -> None:
    """Random legal actions until the hand ends, with the host's time and connection news."""
    from gmtool.engine.events import Action

    timeouts = hand.config.timeouts  # the hand's typed config (engine/config.py)
    actions = 0
    while not hand.is_over:
        actor = hand.to_act
        roll = rng.random()
        if roll < 0.02:  # the clock runs out (S17)
            hand.apply(Action("wait", amount=timeouts.action_s))
            continue
        if roll < 0.03 and hand.players[actor].connected:  # away, back inside the window
            hand.apply(Action("disconnect", actor))
            hand.apply(Action("wait", amount=rng.randint(1, timeouts.reconnect_min * 30)))
            if not hand.is_over and not hand.players[actor].connected:
                hand.apply(Action("reconnect", actor))
            continue
        legal = hand.legal_actions()
        if actions > 40:  # three-card has no round limit: bring it to an end
            legal = [c for c in legal if c.verb in ("open", "pass", "fold", "allin")] or legal
        elif any(c.verb == "check" for c in legal):
            legal = [c for c in legal if c.verb != "fold"]
        choice = rng.choice(legal)
        if choice.verb in ("bet", "raise") and not choice.amounts:
            steps = min((choice.max_amount - choice.min_amount) // choice.step + 1, 20)
            action = Action(
                choice.verb, actor, choice.min_amount + rng.randrange(steps) * choice.step
            )
        else:
            action = rng.choice(choice.actions(actor))
        hand.apply(action)
        actions += 1


def fingerprint() -> str:
    """Of the code that decides what is stored (engine, store, recorder): a cached store
    written by other code is never measured (its hashes or events could differ)."""
    import gmtool

    package = Path(gmtool.__file__).resolve().parent
    digest = hashlib.sha256(BUILD_VERSION.encode())
    for path in sorted(
        [
            *package.glob("engine/*.py"),
            *package.glob("store/*.py"),
            package / "house" / "recorder.py",
            package / "canonical.py",
        ]
    ):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:12]


def database(cache: Path, size: int) -> Path:
    """The cached store of `size` hands, built (from the largest smaller one) if missing."""
    current = fingerprint()
    if cache.is_dir():  # stores built by other code are never measured again: drop them
        for stale in cache.iterdir():
            if (
                stale.is_dir()
                and stale.name != current
                and all(f.name.startswith("audit-") for f in stale.iterdir())
            ):
                shutil.rmtree(stale)
    cache = cache / current
    cache.mkdir(parents=True, exist_ok=True)
    path = cache / f"audit-{size}.db"
    if path.exists():
        return path
    smaller = sorted(
        (int(p.stem.split("-")[1]), p)
        for p in cache.glob("audit-*.db")
        if int(p.stem.split("-")[1]) < size and p != path
    )
    work = path.with_name(path.name + ".building")
    for suffix in ("", "-wal", "-shm"):
        Path(f"{work}{suffix}").unlink(missing_ok=True)
    seed_key(work).unlink(missing_ok=True)
    if smaller:
        _copy_store(smaller[-1][1], work)
    builder = Builder(work)
    started, first = time.perf_counter(), builder.hands()
    print(f"building {path.name}: {first:,} -> {size:,} hands ...", flush=True)
    builder.build(size, lambda n: print(f"  {n:,} hands", flush=True) if n % 10_000 == 0 else None)
    builder.store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    builder.store.close()
    elapsed = time.perf_counter() - started
    print(
        f"  built {size - first:,} hands in {elapsed:.0f} s "
        f"({(size - first) / elapsed:,.0f} hands/s)",
        flush=True,
    )
    work.rename(path)
    seed_key(work).rename(seed_key(path))
    return path


def _copy_store(source: Path, target: Path) -> None:
    conn = sqlite3.connect(source)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    shutil.copyfile(source, target)
    shutil.copyfile(seed_key(source), seed_key(target))  # the key its later hands are dealt from


# -- measuring (in a fresh interpreter per size) --------------------------------------------


def measure(path: Path, repeat: int, with_tracemalloc: bool) -> dict:
    """Audit and plain-read rates of one store, and the process's peak memory."""
    from gmtool.audit.run import run_audit
    from gmtool.store.db import connect

    with connect(path) as store:
        options = audit_options(store)
    hands = sqlite3.connect(path).execute("SELECT COUNT(*) FROM hands").fetchone()[0]
    out = {
        "hands": hands,
        "events": sqlite3.connect(path).execute("SELECT COUNT(*) FROM events").fetchone()[0],
    }
    audit_s = []
    for _ in range(repeat):  # the audits first: the peak memory below is theirs alone
        with connect(path) as store:
            started = time.perf_counter()
            report = run_audit(store, **options)
            audit_s.append(time.perf_counter() - started)
        if report.problems or report.hands_checked != hands:
            raise SystemExit(f"audit found problems in the benchmark store: {report.problems[:3]}")
    out.update(
        audit_s=min(audit_s), maxrss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    )
    if with_tracemalloc:
        import tracemalloc

        tracemalloc.start()
        with connect(path) as store:
            run_audit(store, **options)
        out["tracemalloc_peak_mb"] = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    out.update(
        read_s=min(_plain_read(path, parse=False) for _ in range(repeat)),
        parse_s=min(_plain_read(path, parse=True) for _ in range(repeat)),
    )
    return out


def _plain_read(path: Path, parse: bool) -> float:
    conn = sqlite3.connect(path)
    started = time.perf_counter()
    cursor = conn.execute("SELECT hand_id, seq, type, payload FROM events")
    loads = json.loads
    while rows := cursor.fetchmany(5000):
        for _hand_id, _seq, _type, payload in rows:
            if parse:
                loads(payload)
    elapsed = time.perf_counter() - started
    conn.close()
    return elapsed


def measure_in_subprocess(path: Path, repeat: int, with_tracemalloc: bool) -> dict:
    command = [sys.executable, __file__, "--measure", str(path), "--repeat", str(repeat)]
    command += ["--tracemalloc"] if with_tracemalloc else []
    run = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(run.stdout.strip().splitlines()[-1])


def profile(path: Path, top: int) -> None:
    """cProfile one audit: where the time goes, by own time and by cumulative time."""
    from gmtool.audit.run import run_audit
    from gmtool.store.db import connect

    with connect(path) as store:
        options = audit_options(store)
        profiler = cProfile.Profile()
        profiler.enable()
        run_audit(store, **options)
        profiler.disable()
    for order in ("tottime", "cumulative"):
        text = io.StringIO()
        pstats.Stats(profiler, stream=text).strip_dirs().sort_stats(order).print_stats(top)
        print(f"\n== audit of {path.name}, top {top} by {order} ==")
        print("\n".join(text.getvalue().splitlines()[4:]))


def parts(path: Path, repeat: int) -> None:
    """Where an audit's time goes without a profiler's distortion: the audit is timed
    (CPU time, best of `repeat`) with one more part taken away each time, in this
    process (the parts are replaced by stand-ins here; gmtool is not changed), and each
    part is the difference. The stand-ins make the audit wrong on purpose, so their
    findings are not counted."""
    import gmtool.audit.log_check as log_check
    import gmtool.audit.replay as replay
    import gmtool.audit.run as audit_run
    import gmtool.audit.tables as audit_tables
    from gmtool.store.db import connect

    checks = audit_run.GLOBAL_CHECKS  # (a list the audit reads: emptied in place, then back)
    saved_checks = list(checks)

    def without(*taken) -> None:
        checks[:] = [check for check in checks if check not in taken]

    def cost() -> float:
        best = float("inf")
        for _ in range(repeat):
            with connect(path) as store:
                options = audit_options(store)
                start = time.process_time()
                report = audit_run.run_audit(store, **options)
                best = min(best, time.process_time() - start)
        return best * 1e6 / report.hands_checked

    steps = [
        (
            "the evidence log's check (its walk, tree, batches and rows against records)",
            lambda: setattr(log_check.LogCheck, "run", lambda self, sizes=frozenset(): []),
        ),
        ("the seed check (a hand's seed: an RSA signature)", lambda: without(audit_run._seeds)),
        ("the other global checks", lambda: without(*saved_checks)),
        (
            "engine: the recorded inputs applied, and the comparison",
            lambda: (
                setattr(replay, "_fast_compare", lambda hand, events, values: len(events)),
                setattr(replay, "_row_agrees", lambda *args: None),
            ),
        ),
        (
            "engine: start_hand (the hand's set-up and first deal)",
            lambda: setattr(replay, "start_hand", lambda *args, **kwargs: None),
        ),
        ("engine: the shuffle", lambda: setattr(replay, "shuffled_source", lambda *args: None)),
        (
            "replay's own work (commitment, seats, config)",
            lambda: setattr(
                audit_tables,
                "replay_loaded",
                lambda hand, *args, **kwargs: replay.ReplayResult(hand["id"]),
            ),
        ),
        (
            "decoding the payloads, settlement and ledger checks",
            lambda: setattr(audit_tables, "_check_hand", lambda *args: None),
        ),
    ]
    saved = {
        (module, name): getattr(module, name)
        for module, name in [
            (log_check.LogCheck, "run"),
            (replay, "_fast_compare"),
            (replay, "_row_agrees"),
            (replay, "start_hand"),
            (replay, "shuffled_source"),
            (audit_tables, "replay_loaded"),
            (audit_tables, "_check_hand"),
        ]
    }
    try:
        whole = before = cost()
        print(
            f"\n== where the audit of {path.name} spends its time (CPU µs a hand, best of "
            f"{repeat}) ==\n"
        )
        print("| part | µs | share |\n|---|---:|---:|")
        for name, take_away in steps:
            take_away()
            after = cost()
            print(f"| {name} | {before - after:.0f} | {(before - after) / whole:.0%} |")
            before = after
        print(
            f"| the rest: the table passes' chain (SQLite rows, `event_hash` of every event, "
            f"hand rows, ledger stream), tallies | {before:.0f} | {before / whole:.0%} |"
        )
        print(f"| **whole audit** | **{whole:.0f}** | |")
    finally:
        for (module, name), value in saved.items():
            setattr(module, name, value)
        checks[:] = saved_checks


# -- report --------------------------------------------------------------------------------


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"{platform.system()} {platform.release()}, {cpu}, {os.cpu_count()} CPUs, "
        f"CPython {platform.python_version()}, SQLite {sqlite3.sqlite_version}"
    )


def report(results: list[dict]) -> bool:
    print(f"\nmachine: {machine()}")
    print(
        "| hands | events | audit hands/s | read hands/s | audit / read | read+parse hands/s | "
        "audit / parse | peak RSS | tracemalloc peak |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    met = True
    for r in results:
        audit = r["hands"] / r["audit_s"]
        read = r["hands"] / r["read_s"]
        parse = r["hands"] / r["parse_s"]
        met &= audit >= TARGET
        traced = f"{r['tracemalloc_peak_mb']:.1f} MB" if "tracemalloc_peak_mb" in r else "-"
        print(
            f"| {r['hands']:,} | {r['events']:,} | {audit:,.0f} | {read:,.0f} | "
            f"{audit / read:.3f} | {parse:,.0f} | {audit / parse:.3f} | "
            f"{r['maxrss_mb']:.1f} MB | {traced} |"
        )
    best = max(r["hands"] / r["audit_s"] for r in results)
    print(
        f"\ntarget: >= {TARGET:,} audited hands/s (PHH parse-only: {PHH_PARSE:,}/s): "
        f"{'met' if met else 'MISSED'} (best {best:,.0f}/s, {best / PHH_PARSE:.2f}x PHH)"
    )
    if len(results) > 1:
        small, large = results[0], results[-1]
        growth = large["maxrss_mb"] - small["maxrss_mb"]
        print(
            f"peak RSS from {small['hands']:,} to {large['hands']:,} hands: "
            f"{growth:+.1f} MB ({large['hands'] / small['hands']:.0f}x the hands)"
        )
    return met


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[20_000, 100_000])
    parser.add_argument(
        "--cache", type=Path, default=Path(tempfile.gettempdir()) / "gmtool-bench-audit"
    )
    parser.add_argument("--rebuild", action="store_true", help="Build the stores again.")
    parser.add_argument("--repeat", type=int, default=3, help="Best of N runs.")
    parser.add_argument(
        "--tracemalloc",
        action="store_true",
        help="Also trace Python allocations during one more audit (slower).",
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="cProfile one audit of the smallest size and print the hotspots.",
    )
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument(
        "--parts",
        action="store_true",
        help="Time one audit with each part taken away in turn: what each part costs, µs a hand.",
    )
    parser.add_argument("--check", action="store_true", help="Exit 1 if the target is missed.")
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.measure:  # the child: one size, fresh interpreter
        print(json.dumps(measure(args.measure, args.repeat, args.tracemalloc)))
        return 0
    sizes = sorted(set(args.sizes))
    if args.rebuild and args.cache.exists():
        shutil.rmtree(args.cache)
    paths = [database(args.cache, size) for size in sizes]
    if args.profile:
        profile(paths[0], args.top)
        return 0
    if args.parts:
        parts(paths[0], args.repeat)
        return 0
    results = []
    for path in paths:
        print(f"measuring {path.name} (best of {args.repeat}) ...", flush=True)
        results.append(measure_in_subprocess(path, args.repeat, args.tracemalloc))
    met = report(results)
    return 1 if args.check and not met else 0


if __name__ == "__main__":
    sys.exit(main())
