"""Crash recovery under many SIGKILLs (issue 5): more kills than the test suite's 20.

    python benchmarks/crash.py                   # 100 kills
    python benchmarks/crash.py --kills 300 --tables 16 --keep

A host (`gmtool house run`, the console script next to this Python) plays tables of every
shipped system with chaos on, and is killed with SIGKILL at a random moment (from a fixed
`random.Random` seed) after it says it is hosting, then started again, many times; a last start runs
to a clean stop. Start-up must void every hand the previous kill left unfinished (and say
so) before any table plays. Then the checks of the test suite run on the whole store and
their results are printed:

- every player's coins equal the sum of their ledger rows;
- the coins in play equal the coins ever granted (no coin created or lost);
- every event chain and the GM log verify;
- no hand is left running; every voided hand ends with one hand_voided event, moved no
  coin, and (with the key file beside the database) its revealed seed matches its
  commitment, as does every settled hand's.

The figure with a baseline: the host's start-up time (process start to "hosting ...")
when it has unfinished hands to recover, against a start with none, in the same run.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import random
import re
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from _console import env, gmtool_command

from gmtool.audit.chain import verify_event_chains, verify_gm_log
from gmtool.audit.coins import verify_balances
from gmtool.store.db import connect

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "rules"
SHIPPED = ("lequ-showhand", "qq-showhand", "straight-flush", "suihua-three-card", "video-showhand")
HOSTING_WAIT_S = 60.0
RECOVERED = re.compile(r"^recovered: (\d+) unfinished hand\(s\) voided.*: ([\d, ]+)$", re.M)


def gmtool(args: Sequence[str]) -> None:
    """One console command; its output in the error when it fails."""
    run = subprocess.run(
        [*gmtool_command(), *args],
        env=env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if run.returncode != 0:
        raise SystemExit(
            f"gmtool {' '.join(args)} exited {run.returncode}:\n{run.stdout}{run.stderr}"
        )


def running_hands(db: Path) -> set[int]:
    with connect(db) as store:
        return {r[0] for r in store.all("SELECT id FROM hands WHERE outcome = 'running'")}


def recovered_ids(output: str) -> set[int] | None:
    match = RECOVERED.search(output)
    return None if match is None else {int(x) for x in match.group(2).replace(",", " ").split()}


def start_host(db: Path, log: Path, args: Sequence[str]) -> tuple[subprocess.Popen, float]:
    out = open(log, "w")
    started = time.monotonic()
    proc = subprocess.Popen(
        [*gmtool_command(), "house", "run", "--db", str(db), *args],
        stdout=out,
        stderr=subprocess.STDOUT,
        env=env(),
    )
    out.close()
    return proc, started


def time_to_hosting(log: Path, started: float, until: float) -> float | None:
    """Seconds from process start to the "hosting" line, watching until `until`."""
    while time.monotonic() < until:
        if "hosting" in log.read_text():
            return time.monotonic() - started
        time.sleep(0.005)
    return None


def one_kill(db: Path, log: Path, after_s: float, host_args: Sequence[str]) -> dict:
    unfinished = running_hands(db)
    proc, started = start_host(db, log, host_args)
    try:
        # the moment counts from "hosting", so a slow start on a busy machine still gets
        # killed while it plays (a start that never says it within a minute is killed then)
        startup = time_to_hosting(log, started, started + HOSTING_WAIT_S)
        time.sleep(after_s)
        alive = proc.poll() is None
        if alive:
            proc.send_signal(signal.SIGKILL)  # a pid Popen has reaped is never signalled
        code = proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    output = log.read_text()
    said = recovered_ids(output)
    problems = []
    if not alive or code != -signal.SIGKILL:
        problems.append(f"host had exited before the kill (code {code}): {output[-300:]}")
    if "Traceback" in output:
        problems.append("traceback in output")
    if "hosting" in output and (said or set()) != unfinished:
        problems.append(f"recovered {sorted(said or ())} but {sorted(unfinished)} were unfinished")
    if said is not None and said != unfinished:
        problems.append(f"recovered {sorted(said)} != unfinished {sorted(unfinished)}")
    return {
        "unfinished": len(unfinished),
        "recovered": len(said or ()),
        "startup": startup,
        "problems": problems,
    }


def final_checks(db: Path) -> list[tuple[str, bool, str]]:
    """(check, passed, detail) for the whole store."""
    results = []
    with connect(db) as store:
        balances = list(verify_balances(store))
        results.append(
            (
                "coins = ledger, every player",
                not balances,
                f"{len(balances)} problem(s)"
                if balances
                else f"{store.one('SELECT COUNT(*) FROM players')[0]} players",
            )
        )
        granted = store.one(
            "SELECT COALESCE(SUM(delta), 0) FROM ledger WHERE reason = 'opening_balance'"
        )[0]
        in_play = store.one("SELECT COALESCE(SUM(coins), 0) FROM players")[0]
        results.append(
            (
                "coins in play = coins granted",
                in_play == granted,
                f"{in_play:,} in play, {granted:,} granted",
            )
        )
        hands_net = store.one(
            "SELECT COALESCE(SUM(delta), 0) FROM ledger WHERE hand_id IS NOT NULL"
        )[0]
        results.append(("hands' ledger rows sum to 0", hands_net == 0, f"net {hands_net}"))
        chains = list(verify_event_chains(store))
        events = store.one("SELECT COUNT(*) FROM events")[0]
        tables = store.one("SELECT COUNT(DISTINCT table_id) FROM events")[0]
        results.append(
            (
                "every event chain verifies",
                not chains,
                f"{len(chains)} problem(s)" if chains else f"{events:,} events on {tables} tables",
            )
        )
        gm_log = list(verify_gm_log(store))
        results.append(("GM log verifies", not gm_log, f"{len(gm_log)} problem(s)"))
        running = store.one("SELECT COUNT(*) FROM hands WHERE outcome = 'running'")[0]
        results.append(("no hand left running", running == 0, f"{running} running"))
        hands = [dict(r) for r in store.all("SELECT id, outcome, seed, commitment FROM hands")]
        voided = [h for h in hands if h["outcome"] == "voided"]
        bad_void = []
        for hand in voided:
            types = [
                r[0]
                for r in store.all(
                    "SELECT type FROM events WHERE hand_id = ? ORDER BY seq", (hand["id"],)
                )
            ]
            moved = store.one("SELECT COUNT(*) FROM ledger WHERE hand_id = ?", (hand["id"],))[0]
            if types.count("hand_voided") != 1 or types[-1] != "hand_voided" or moved:
                bad_void.append(hand["id"])
        reasons = {
            r[0]: r[1]
            for r in store.all(
                "SELECT json_extract(payload, '$.reason'), COUNT(*) FROM events WHERE type = "
                "'hand_voided' GROUP BY 1"
            )
        }
        results.append(
            (
                "voided hands: one hand_voided event, no coin moved",
                not bad_void,
                f"{len(voided)} voided ({json.dumps(reasons)}); bad: {bad_void[:10]}",
            )
        )
        unrevealed = [h["id"] for h in voided if not h["seed"]]
        mismatched = [
            h["id"]
            for h in hands
            if h["seed"] and hashlib.sha256(bytes.fromhex(h["seed"])).hexdigest() != h["commitment"]
        ]
        results.append(
            (
                "revealed seeds match commitments",
                not mismatched and not unrevealed,
                f"{sum(1 for h in hands if h['seed'])} checked; mismatched "
                f"{mismatched[:10]}; voided without seed {unrevealed[:10]}",
            )
        )
        settled = sum(h["outcome"] == "settled" for h in hands)
        results.append(
            ("hands", True, f"{len(hands)} recorded: {settled} settled, {len(voided)} voided")
        )
    return results


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=100)
    parser.add_argument("--seed", type=int, default=20_261_130, help="seed of the kill moments")
    parser.add_argument("--tables", type=int, default=8)
    parser.add_argument("--speed", type=float, default=100.0)
    parser.add_argument("--chaos", type=float, default=0.2)
    parser.add_argument(
        "--after",
        type=float,
        nargs=2,
        default=(0.3, 1.5),
        metavar=("MIN", "MAX"),
        help="kill between MIN and MAX s after the host says 'hosting'",
    )
    parser.add_argument(
        "--clean",
        type=int,
        default=5,
        help="start-ups with nothing to recover (the baseline), at least 1",
    )
    parser.add_argument("--keep", action="store_true", help="keep the database folder")
    args = parser.parse_args(argv)
    if args.kills < 1 or args.clean < 1:
        parser.error("--kills and --clean must be at least 1")
    host_args = [
        "--tables",
        str(args.tables),
        "--speed",
        str(args.speed),
        "--chaos",
        str(args.chaos),
    ]
    print(
        f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, CPython "
        f"{platform.python_version()}, SQLite {sqlite3.sqlite_version}"
    )
    print(
        f"{args.kills} SIGKILLs {args.after[0]:g}-{args.after[1]:g} s after 'hosting' "
        f"(seed {args.seed}); host {' '.join(host_args)}"
    )

    folder = Path(tempfile.mkdtemp(prefix="gmtool-crash-"))
    db = folder / "crash.db"
    started = time.monotonic()
    try:
        # through the console, as an operator would (a store with no operator yet: the
        # deploys need no GM key)
        gmtool(["db", "init", "--db", str(db)])
        for profile in SHIPPED:
            gmtool(["deploy", str(RULES / f"{profile}.toml"), "--db", str(db)])
        moments = random.Random(args.seed)
        runs, problems = [], []
        for kill in range(args.kills):
            run = one_kill(db, folder / "host.log", moments.uniform(*args.after), host_args)
            runs.append(run)
            problems += [f"kill {kill + 1}: {p}" for p in run["problems"]]
            if (kill + 1) % 10 == 0 or kill + 1 == args.kills:
                print(
                    f"  {kill + 1:>4} kills: {sum(r['recovered'] for r in runs):>5} hands "
                    f"voided by recovery so far, {len(problems)} problem(s)",
                    flush=True,
                )

        # clean start-ups with nothing to recover: the baseline of the start-up figure
        clean = []
        unfinished = running_hands(db)
        final_log = folder / "final.log"
        proc, t0 = start_host(db, final_log, [*host_args, "--duration", "2", "--grace", "1"])
        first_startup = time_to_hosting(final_log, t0, t0 + 30)
        code = proc.wait(timeout=60)
        output = final_log.read_text()
        said = recovered_ids(output) or set()
        final_ok = code == 0 and said == unfinished and "Traceback" not in output
        for _ in range(args.clean):
            proc, t0 = start_host(db, final_log, [*host_args, "--duration", "0.3", "--grace", "0"])
            clean.append(time_to_hosting(final_log, t0, t0 + 30))
            proc.wait(timeout=60)
        checks = final_checks(db)
    finally:
        if args.keep:
            print(f"database kept in {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)

    recovering = [r["startup"] for r in runs if r["unfinished"] and r["startup"]]
    if first_startup and unfinished:
        recovering.append(first_startup)
    clean = [c for c in clean if c]
    print(f"\nafter {args.kills} kills and a clean start ({time.monotonic() - started:.0f} s):")
    print(
        f"  [{'ok' if not problems else 'FAIL'}] recovery at each start voided exactly the "
        f"unfinished hands ({sum(r['recovered'] for r in runs)} hands; "
        f"{sum(1 for r in runs if r['unfinished'])} starts had some)"
    )
    for problem in problems[:10]:
        print(f"      {problem}")
    print(
        f"  [{'ok' if final_ok else 'FAIL'}] final start recovered {len(said)} hand(s) and "
        f"stopped cleanly (exit {code})"
    )
    for name, passed, detail in checks:
        print(f"  [{'ok' if passed else 'FAIL'}] {name}: {detail}")
    if recovering and clean:
        ours, base = statistics.median(recovering), statistics.median(clean)
        typical = (
            statistics.median(r["unfinished"] for r in runs if r["unfinished"])
            if any(r["unfinished"] for r in runs)
            else len(unfinished)
        )
        print(
            f"\nstart-up to 'hosting': {ours * 1000:.0f} ms median with hands to recover "
            f"({len(recovering)} starts, median {typical:.0f} hands) vs {base * 1000:.0f} ms "
            f"with none ({len(clean)} starts): x{ours / base:.2f}"
        )
    elif clean:
        print(
            f"\nstart-up to 'hosting': {statistics.median(clean) * 1000:.0f} ms median with "
            f"none to recover ({len(clean)} starts); no ratio: no start that had hands to "
            "recover said 'hosting' before its kill (kill later: --after)"
        )
    failed = problems or not final_ok or not all(passed for _, passed, _ in checks)
    print("\nresult:", "FAIL" if failed else "ok")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
