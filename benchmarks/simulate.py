"""Simulation overhead: `gmtool rules simulate` on 100,000 QQ junior hands beside the bare engine.

    python benchmarks/simulate.py                      # 100,000 hands, --jobs 2
    python benchmarks/simulate.py --hands 20000 --jobs 1 --sample 3000 --repeat 3
    python benchmarks/simulate.py --instructions 1000  # under valgrind: about 2 min

What it measures, in one process and one run (benchmarks/README.md, "Budgets": a ratio against a
named baseline measured in the same run):

- the simulation: `what_if` on `rules/qq-showhand.toml --tier junior --hands N --jobs J`,
  the same function the command calls, with its wall time and its CPU time (this
  process and the worker processes); the hands it played are the N hands plus those of
  its runs of a minimum-holding player (`hands to out`);
- baseline 1, the bare engine on the same hands: a sample of the simulated hands is
  replayed (`start_hand` from the same deck, then for each recorded input
  `legal_actions()` and `apply`, as any driver choosing from the menu does), in
  `--repeat` rounds alternating with the simulator playing the same hands, before and
  after the run; the hands played divided by its hands/s is what the engine alone needs,
  and the alternating rounds give the simulator's overhead a core;
- baseline 2, the engine figure of benchmarks/engine.py (random players on the QQ
  junior tier, `Stud5Table`), printed beside it: its hands are shorter (fewer actions).

With `--instructions N` it measures instead, under `valgrind --tool=callgrind` (as
benchmarks/instructions.py does), the CPU instructions of the bare engine replaying N
recorded hands and of the simulator playing the same N hands, each run minus a run doing
only the set-up: a count that does not depend on what else the machine is doing.

Overhead = the simulation's time / the engine's time for the same hands - 1, by wall
time (the issue's target: under 25% with --jobs 2) and by CPU time (the simulator's own
per-hand cost: policies, card strength, measures, worker processes). The machine's load
is printed: on a shared machine the wall figure depends on what else runs.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import random
import re
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

from gmtool.engine.events import inputs_of
from gmtool.engine.hand import Seat
from gmtool.engine.play import shuffled_source, start_hand
from gmtool.rules.compile import compile_file
from gmtool.simulate.play import Table, hand_key, play, play_hand
from gmtool.simulate.setup import options, plan_for, profile_from
from gmtool.simulate.whatif import what_if

HERE = Path(__file__).resolve().parent
PROFILE = HERE.parent / "rules" / "qq-showhand.toml"
TIER = "junior"
TARGET = 0.25


def cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


WARM_UP = 20  # hands played by each side before what is counted (lazy imports, caches)


def recorded_hands(sample: int, seed: str) -> tuple[Table, list]:
    """The first `sample` hands of the simulation, as (seats, banker, deck key, inputs)."""
    profile = profile_from(PROFILE, compile_file(PROFILE))
    plan = plan_for(profile, TIER, options(hands=sample, seed=seed), requested=True)
    table = Table(plan)
    hands = []
    for index in range(sample):
        key = hand_key(plan, "hand", index)
        hand, _ = play(table, key)
        seats = [Seat(name, hand.players[name].coins) for name in hand.order]
        started = hand.events[0].fields
        hands.append((seats, started["banker"], key, inputs_of(hand.events)))
    return table, hands


def replay(table: Table, hands: list) -> None:
    """The bare engine on recorded hands: `start_hand` from the same deck, then for each
    recorded input `legal_actions()` and `apply` (what any driver choosing from the menu
    does)."""
    config, ranking, cards = table.config, table.ranking, table.cards
    for seats, banker, key, inputs in hands:
        hand = start_hand(
            config, TIER, seats, banker, shuffled_source(cards, key[:16]), ranking=ranking
        )
        for action in inputs:
            hand.legal_actions()
            hand.apply(action)


def inner(what: str, count: int, seed: str) -> None:
    """What runs under valgrind: the set-up (imports, the profile, the strength tables,
    `count` + WARM_UP hands recorded by one table, a fresh table for the simulator and
    WARM_UP hands played by each side), then, unless `what` is "setup", the `count`
    hands replayed by the bare engine ("bare") or played by the simulator ("sim")."""
    recorder, hands = recorded_hands(count + WARM_UP, seed)
    warm, hands = hands[count:], hands[:count]
    table = Table(recorder.plan)
    replay(recorder, warm)
    for _, _, key, _ in warm:
        play_hand(table, key)
    if what == "bare":
        replay(recorder, hands)
    elif what == "sim":
        for _, _, key, _ in hands:
            play_hand(table, key)


def instructions(what: str, count: int, seed: str) -> subprocess.Popen:
    """A run of `inner` under callgrind (started; its count is in what it writes)."""
    return subprocess.Popen(
        [
            "valgrind",
            "--tool=callgrind",
            "--callgrind-out-file=/dev/null",
            sys.executable,
            str(Path(__file__).resolve()),
            "--inner",
            what,
            str(count),
            "--seed",
            seed,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0"},
    )


def collected(run: subprocess.Popen) -> int:
    _, err = run.communicate()
    found = re.search(r"Collected : (\d+)", err)
    if run.returncode != 0 or not found:
        raise SystemExit(f"a callgrind run failed (exit {run.returncode}):\n{err[-2000:]}")
    return int(found.group(1))


def count_instructions(count: int, seed: str, jobs: int) -> int:
    """Instructions a hand of the bare engine and of the simulator on the same hands, and
    the simulator's overhead: (sim - setup) / (bare - setup) - 1."""
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (Debian: apt-get install valgrind)")
    load_before = os.getloadavg()
    runs: dict[str, int] = {}
    whats = ["setup", "bare", "sim"]
    for start in range(0, len(whats), max(1, jobs)):  # at most `jobs` runs at a time
        batch = {what: instructions(what, count, seed) for what in whats[start : start + jobs]}
        runs.update({what: collected(run) for what, run in batch.items()})
    bare = (runs["bare"] - runs["setup"]) / count
    sim = (runs["sim"] - runs["setup"]) / count
    print(
        f"instructions a hand (valgrind callgrind), {PROFILE.name} --tier {TIER}, "
        f"{count:,} hands of seed {seed!r} after {WARM_UP} warm-up hands"
    )
    print(
        f"  machine: load average {load_before[0]:.2f} before, {os.getloadavg()[0]:.2f} "
        f"after (not in the counts); Python {sys.version.split()[0]}"
    )
    print(f"  bare engine, same hands (baseline): {bare:,.0f}")
    print(f"  simulator: {sim:,.0f}")
    verdict = "meets" if sim / bare - 1 < TARGET else "MISSES"
    print(
        f"  overhead a core by instructions: {sim / bare - 1:+.1%} ({verdict} target "
        f"< {TARGET:.0%})"
    )
    return 0


def interleaved(table: Table, hands: list, rounds: int) -> tuple[float, float, float]:
    """(bare hands/s, simulator hands/s, actions a hand) on the recorded hands, one core:
    each round replays them on the bare engine (`start_hand` from the same deck, then for
    each recorded input `legal_actions()` and `apply`) and plays them again with the
    simulator (`play_hand`: policies, strength, thinking time, the record), alternately,
    so a busy moment of the machine slows both alike; CPU time of this process."""
    bare = simulated = 0.0
    for _ in range(rounds):
        start = time.process_time()
        replay(table, hands)
        bare += time.process_time() - start
        start = time.process_time()
        for _, _, key, _ in hands:
            play_hand(table, key)
        simulated += time.process_time() - start
    count = len(hands) * rounds
    return count / bare, count / simulated, sum(len(h[3]) for h in hands) / len(hands)


def engine_py_rate(seconds: float, repeat: int) -> tuple[float, str]:
    """benchmarks/engine.py's QQ junior figure (random players), best of `repeat`."""
    spec = importlib.util.spec_from_file_location("engine_bench", HERE / "engine.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    table = module.Stud5Table("qq-showhand", TIER)
    rng = random.Random(module.DEFAULT_SEED)
    table.play(rng)
    best = max(module.hands_rate(table.play, rng, seconds) for _ in range(repeat))
    return best, table.tally.words(best)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=100_000)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--sample", type=int, default=5_000, help="hands replayed (baseline 1)")
    parser.add_argument("--repeat", type=int, default=5, help="alternating rounds")
    parser.add_argument("--seconds", type=float, default=1.0, help="window of baseline 2")
    parser.add_argument("--seed", default="bench")
    parser.add_argument(
        "--instructions",
        type=int,
        metavar="N",
        help="count instructions of N hands under valgrind instead",
    )
    parser.add_argument("--inner", nargs=2, metavar=("WHAT", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.inner:
        inner(args.inner[0], int(args.inner[1]), args.seed)
        return 0
    if args.instructions:
        return count_instructions(args.instructions, args.seed, args.jobs)

    load_before = os.getloadavg()
    table, sample = recorded_hands(args.sample, args.seed)
    bare_before, sim_before, actions_same = interleaved(table, sample, args.repeat)
    random_before, random_words = engine_py_rate(args.seconds, args.repeat)

    cpu, wall = cpu_seconds(), time.perf_counter()
    outcome = what_if(PROFILE, tiers=[TIER], hands=args.hands, seed=args.seed, jobs=args.jobs)
    wall, cpu = time.perf_counter() - wall, cpu_seconds() - cpu

    bare_after, sim_after, _ = interleaved(table, sample, args.repeat)
    random_after, _ = engine_py_rate(args.seconds, args.repeat)
    load_after = os.getloadavg()

    result = outcome.results[outcome.labels[0]][TIER]
    bust_hands = sum(hands for hands, _ in result.busts)
    played = len(result.hands) + bust_hands
    bare = (bare_before + bare_after) / 2
    per_core = (bare_before / sim_before + bare_after / sim_after) / 2 - 1
    engine_s = played / bare
    measures = outcome.report["tiers"][0]["measures"]
    wall_over, cpu_over = wall / engine_s - 1, cpu / engine_s - 1
    verdict = "meets" if wall_over < TARGET else "MISSES"
    print(
        f"simulate {PROFILE.name} --tier {TIER} --hands {args.hands:,} --jobs {args.jobs} "
        f"--seed {args.seed}"
    )
    print(
        f"  machine: {os.cpu_count()} CPUs, load average {load_before[0]:.2f} before, "
        f"{load_after[0]:.2f} after; Python {sys.version.split()[0]}"
    )
    print(
        f"  hands played: {played:,} ({len(result.hands):,} + {bust_hands:,} in "
        f"{len(result.busts)} runs to out), {measures['actions_per_hand']['mean']:.1f} "
        "actions a hand"
    )
    print(
        f"  simulation: {wall:.2f} s wall ({played / wall:,.0f} hands/s), {cpu:.2f} s CPU "
        f"in all processes ({played / cpu:,.0f} hands/s a core)"
    )
    print(
        f"  bare engine, same hands (baseline 1): {bare:,.0f} hands/s on one core (before "
        f"{bare_before:,.0f}, after {bare_after:,.0f}; {args.sample:,} hands x {args.repeat}, "
        f"{actions_same:.1f} actions a hand)"
    )
    print(
        f"  bare engine, benchmarks/engine.py (baseline 2): "
        f"{max(random_before, random_after):,.0f} hands/s ({random_words})"
    )
    print(f"  engine alone for these hands: {engine_s:.2f} s on one core")
    print(
        f"  overhead by wall time: {wall_over:+.1%} ({verdict} target < {TARGET:.0%} "
        f"with --jobs {args.jobs})"
    )
    print(f"  overhead by CPU time, whole run: {cpu_over:+.1%}")
    print(
        f"  overhead a core, interleaved with baseline 1: {per_core:+.1%} (simulator "
        f"{sim_before:,.0f} and {sim_after:,.0f} hands/s; the simulator's own work a hand)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
