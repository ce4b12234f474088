"""The benchmark scripts still run against today's code (a smoke run each, smallest
sizes): a script that broke with a refactoring would otherwise go unnoticed until the
next measurement. Each runs as a real subprocess and must print its figures, well formed;
no timing is asserted (a figure may miss its target on a busy machine).

Optional baselines (treys and pokerkit for engine.py) are not needed: the scripts report
without them. instructions.py needs valgrind (.ci/run installs it if missing).
simulate.py also has a smoke test of its own options in test_simulate_cli.py.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import clean_env

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = ROOT / "benchmarks"
NUMBER = r"\d[\d,]*(?:\.\d+)?"  # 12,345 or 0.123

# script and arguments -> regular expressions its output must match (re.M)
SMOKE = {
    "audit.py": (
        ["--sizes", "120", "--repeat", "1", "--rebuild"],
        [
            r"^\| hands \| events \| audit hands/s .*\| audit / parse \|",
            rf"^\| 120 \| {NUMBER} \| {NUMBER} \| {NUMBER} \| \d+\.\d{{3}} \| {NUMBER} \| "
            rf"\d+\.\d{{3}} \| {NUMBER} MB \|",
            r"^target: >= [\d,]+ audited hands/s .*: (met|MISSED)",
        ],
    ),
    "audit_postgres.py": (  # on the test server (tests/postgres.py's), as the PG tests
        ["--size", "120", "--repeat", "1"],
        [
            rf"^db copy: {NUMBER} rows in \d+\.\d s",
            rf"^\| SQLite \| 120 \| \d+\.\d{{3}} \| {NUMBER} \| {NUMBER} MB \|",
            rf"^\| PostgreSQL \| 120 \| \d+\.\d{{3}} \| {NUMBER} \| {NUMBER} MB \|",
            r"^same report on both: yes",
        ],
    ),
    "audit_incremental.py": (
        ["--size", "120", "--more", "30", "--repeat", "1"],
        [
            r"\| full \(jobs 1\) \| 150 \| \d+\.\d{3} \|",
            r"\| from the checkpoint \| 30 \| \d+\.\d{3} \|",
            r"\| full, --jobs 2 \| 150 \| \d+\.\d{3} \|",
            r"^incremental / full: \d+\.\d{4} \(target < 0\.02\): (met|MISSED)",
        ],
    ),
    "checkpoints.py": (
        ["--tables", "2", "--duration", "1", "--repeat", "1"],
        [
            rf"^  --checkpoint-every 1: {NUMBER} settlements/s, {NUMBER} checkpoint writes "
            rf"\(fsyncs\)/s, {NUMBER} hands a checkpoint",
            rf"^  --checkpoint-every 30: {NUMBER} settlements/s, {NUMBER} checkpoint writes",
            rf"^  one checkpoint signed and saved \(Ed25519, write, fsync\): {NUMBER} ms",
            r"^  ratio settlements/s 1 s / 30 s: (\d+\.\d{3}|nan)",
        ],
    ),
    "crash.py": (
        ["--kills", "2", "--tables", "2", "--after", "0.8", "1.2", "--clean", "2"],
        [
            r"^  \[ok\] recovery at each start voided exactly the unfinished hands",
            r"^  \[ok\] final start recovered \d+ hand\(s\) and stopped cleanly \(exit 0\)",
            r"^  \[ok\] coins in play = coins granted: [\d,]+ in play, [\d,]+ granted",
            r"^  \[ok\] every event chain verifies: [\d,]+ events on \d+ tables",
            r"^  \[ok\] hands: \d+ recorded: \d+ settled, \d+ voided",
            r"^start-up to 'hosting': \d+ ms median with (hands to recover|none to recover)",
            r"^result: ok$",
        ],
    ),
    "engine.py": (
        ["--hands", "2000", "--seconds", "0.1", "--repeat", "1"],
        [
            rf"^ranking:\n  gmtool Stud5Ranking\.key +{NUMBER} hands/s",
            r"^  - (categories agree with treys|treys is not installed)",
            rf"^hands: QQ junior tier \(qq-showhand/junior\):\n  gmtool stud5 +{NUMBER} hands/s "
            r"\((meets|MISSES) target",
            rf"^hands: lequ owner-ante table \(lequ-showhand/table\):\n  gmtool stud5 +{NUMBER} "
            r"hands/s",
            r"^  - gmtool: \d+\.\d actions a hand, \d+% to showdown",
            rf"^hands: Suihua three-card:\n  gmtool three-card +{NUMBER} hands/s",
        ],
    ),
    "instructions.py": (
        ["--baseline", ".", "--hands", "2", "--only", "qq"],
        [
            r"^instructions a hand \(valgrind callgrind\): ",
            r"^  qq +[\d,]+ / +[\d,]+ +ratio 1\.000 +\(2 hands\)$",
        ],
    ),
    "simulate.py": (
        ["--hands", "200", "--jobs", "2", "--sample", "50", "--repeat", "1", "--seconds", "0.05"],
        [
            rf"^  hands played: {NUMBER} \(200 \+ ",
            rf"^  simulation: {NUMBER} s wall \({NUMBER} hands/s\)",
            rf"^  bare engine, same hands \(baseline 1\): {NUMBER} hands/s",
            rf"^  bare engine, benchmarks/engine\.py \(baseline 2\): {NUMBER} hands/s",
            r"^  overhead by wall time: [+-]\d+\.\d%",
            r"^  overhead a core, interleaved with baseline 1: [+-]\d+\.\d%",
        ],
    ),
    "startup.py": (
        ["--runs", "1"],
        [
            r"^python -c pass +\d+\.\dms +1\.00x",
            r"^python -c 'import typer' +\d+\.\dms +\d+\.\d\dx",
            r"^gmtool --help +\d+\.\dms +\d+\.\d\dx +\d+\.\d\dx  <= 1\.3x typer: (met|MISSED)",
            r"^gmtool rules validate rules/ +\d+\.\dms +\d+\.\d\dx +\d+\.\d\dx  <= 2\.0x typer: "
            r"(met|MISSED)",
        ],
    ),
    "seeds.py": (
        ["--slots", "5", "--hands", "4", "--repeat", "1"],
        [
            rf"^  host, RSA-2048 PKCS#1 v1\.5 signature \(seed key\) +{NUMBER} us",
            rf"^  audit, RSA-2048 verification with the public key +{NUMBER} us",
            rf"^  this checkout: {NUMBER} hands/s",
            rf"^  seed key \(RSA\): \d+ hands, {NUMBER} hands/s; seed check {NUMBER} us a hand",
            r"^  ratio RSA / HMAC: \d+\.\d{3}",
        ],
    ),
    # (the warm-up covers the bots' strength tables, built at a table's first decision)
    "store.py": (
        [
            "--hands",
            "20",
            "--repeat",
            "1",
            "--tables",
            "2",
            "--duration",
            "1",
            "--warmup",
            "3",
            "--speed",
            "100",
        ],
        [
            r"^write: 20 hands, \d+ inputs, \d+ events",
            rf"^  store write path \(Recorder: begin/append/settle\) +{NUMBER} events/s",
            rf"^  bare executemany, one transaction +{NUMBER} events/s",
            r"^  ratio store / bare executemany: \d+\.\d{3} ",
            rf"^ +2 tables: +\d+ actions \( *{NUMBER}/s\), latency p50 +{NUMBER} ms, p99 +{NUMBER} "
            r"ms",
            r"^  sustained with p99 < 100 ms: ",
        ],
    ),
    "store_backends.py": (
        ["--hands", "3", "--writers", "1", "2"],
        [
            r"^3 hands a writer \(begin, 3 appends, durable settlement: 5 transactions\)",
            r"^\| backend \| writers \| hands/s \| evidence records/s \|",
            rf"^\| SQLite \| 1 \| {NUMBER} \| {NUMBER} \| {NUMBER} \| {NUMBER} \|",
            rf"^\| PostgreSQL \| 1 \| {NUMBER} \| {NUMBER} \| {NUMBER} \| {NUMBER} \|",
            rf"^\| PostgreSQL \| 2 \| {NUMBER} \| {NUMBER} \| {NUMBER} \| {NUMBER} \|",
        ],
    ),
    "hosts.py": (  # sqlite-1, pg-1, pg-3 (on the test server, as the PG tests)
        ["--speed", "20", "--tables", "3", "--duration", "1", "--warmup", "1"],
        [
            rf"^  sqlite-1 +3 tables: +{NUMBER} actions .* \| evidence {NUMBER} appends/s \|",
            rf"^  pg-1 +3 tables: +{NUMBER} actions .* \| write lock held \d+%, waited for",
            rf"^  pg-3 +3 tables: +{NUMBER} actions .* \| write lock held \d+%, waited for",
            rf"^  pg-3 audit --jobs 2: {NUMBER} hands in \d+\.\d\d s, {NUMBER} hands/s",
            r"^\| configuration \| tables sustained \(p99 < 100 ms\) \|",
            r"^\| sqlite-1 \| (\d+|none) \|",
            r"^\| pg-1 \| (\d+|none) \|",
            r"^\| pg-3 \| (\d+|none) \|",
        ],
    ),
    "gateway.py": (
        ["--players", "4", "--duration", "2", "--think", "0.2"],
        [
            r"^\| N \| tables \| connected \| actions \| round trip p50 \| p99 \|",
            rf"^\| 4 \| \d+ \| 4 \| {NUMBER} \| {NUMBER} ms \| {NUMBER} ms \| -?{NUMBER} \| "
            rf"{NUMBER}% \| {NUMBER} \| {NUMBER} ms \| {NUMBER} ms \|",
            r"^largest N with round trip p99 < 100 ms: [\d,]+ \(target 2,000\)",
        ],
    ),
    "three_card_speed.py": (
        ["0.2", "--seed", "7"],
        [
            rf"^three-card hands played per second: {NUMBER} \(.*0\.2 s, seed 7\)",
            rf"^  note: the HMAC-SHA256 deck shuffle alone runs {NUMBER}/s",
        ],
    ),
}


def run_script(name: str, args: list[str], tmp_path: Path, timeout: float = 300):
    run = subprocess.run(
        [sys.executable, str(BENCHMARKS / name), *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=timeout,
        check=False,
        env=clean_env(TMPDIR=str(tmp_path)),
    )
    if run.returncode != 0:  # all of it in the report: an assertion's message is cut
        print(run.stdout, run.stderr, sep="\n--- stderr ---\n")
    assert run.returncode == 0, (run.stdout[-2000:], run.stderr[-2000:])
    assert "Traceback" not in run.stdout + run.stderr, run.stderr[-2000:]
    return run


def test_every_benchmark_has_a_smoke_run() -> None:
    """(`_name.py` is a module the scripts share, not a benchmark.)"""
    scripts = [p.name for p in BENCHMARKS.glob("*.py") if not p.name.startswith("_")]
    assert sorted(SMOKE) == sorted(scripts)


@pytest.mark.parametrize("name", sorted(SMOKE))
def test_the_benchmark_runs(name: str, tmp_path: Path) -> None:
    if name == "instructions.py":  # a real run, never skipped: .ci/run installs valgrind
        assert shutil.which("valgrind"), "instructions.py needs valgrind: apt-get install valgrind"
    args, figures = SMOKE[name]
    extra = ["--cache", str(tmp_path)] if name.startswith("audit") else []
    run = run_script(name, [*args, *extra], tmp_path)
    missing = [pattern for pattern in figures if not re.search(pattern, run.stdout, re.M)]
    assert not missing, f"no match for {missing} in:\n{run.stdout}"


@pytest.mark.parametrize("name", sorted(SMOKE))
def test_the_benchmark_has_help(name: str, tmp_path: Path) -> None:
    run = run_script(name, ["--help"], tmp_path, timeout=60)
    assert run.stdout.startswith("usage: ")


def test_the_audit_workload_of_instructions_runs(tmp_path: Path) -> None:
    """What instructions.py runs under valgrind for `--only audit` (too long for a smoke
    run under valgrind): the audit of the recorded test store, here without valgrind."""
    run_script("instructions.py", ["--inner", "audit", "1"], tmp_path)


def test_the_audit_parts_run(tmp_path: Path) -> None:
    """`audit.py --parts` takes each part away in turn, the log's and the global checks
    first, and prints a row for each (no figure asserted: a part may come out negative
    on a busy machine)."""
    run = run_script(
        "audit.py",
        ["--sizes", "120", "--repeat", "1", "--parts", "--cache", str(tmp_path)],
        tmp_path,
    )
    rows = re.findall(rf"^\| ([^|]+) \| -?{NUMBER} \| -?\d+% \|$", run.stdout, re.M)
    assert [row.split(" (")[0].split(":")[0] for row in rows] == [
        "the evidence log's check",
        "the seed check",
        "the other global checks",
        "engine",
        "engine",
        "engine",
        "replay's own work",
        "decoding the payloads, settlement and ledger checks",
        "the rest",
    ], run.stdout
    assert re.search(rf"^\| \*\*whole audit\*\* \| \*\*{NUMBER}\*\* \| \|$", run.stdout, re.M)
