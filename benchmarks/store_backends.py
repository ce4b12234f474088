"""Evidence appends on both store backends, side by side in one run (issue 26, item 3).

    python benchmarks/store_backends.py                       # 300 hands a writer
    python benchmarks/store_backends.py --hands 1000 --writers 1 3
    python benchmarks/store_backends.py --pg-admin postgresql://postgres@127.0.0.1/postgres

Several hosts over one PostgreSQL store append to one evidence log, ordered by the
database: every write transaction takes the writers' advisory lock (store/pg.py), the
"short critical section" of issue 26. This measures what that costs through the store's
real write path, as a host writes a hand: `begin_hand` (the hand's row, its record and
its first events), three `TableLog.append` transactions (a street's actions each) and
one durable `settle_hand` (last events, ledger rows, balances, tallies, the hand's end),
each appending its evidence records to the log. The events are fixed, made-up actions:
the engine is not measured here (benchmarks/store.py's `write` plays real hands).

Runs, each on a fresh store: SQLite with one writer (one host: the embedded store has
one), then PostgreSQL with each `--writers` count, every writer a real process with its
own table and players, started together. Printed for each: hands a second (all writers),
evidence records appended a second, and the durable settlement transaction's p50 and p99
in milliseconds. PostgreSQL databases are made on the server `--pg-admin` names (a role
that may create databases; `$GMTOOL_TEST_PG` else the local server with trust
authentication) and dropped afterwards.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
QQ = ROOT / "rules" / "qq-showhand.toml"
DEFAULT_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"


def _setup(where: str, writers: int) -> None:
    """A store with the QQ profile deployed, one table and three funded players a writer."""
    from gmtool.rules.compile import compile_file
    from gmtool.store import configs, ledger
    from gmtool.store import tables as table_store
    from gmtool.store.db import open_location

    compiled = compile_file(QQ)
    with open_location(where, create=True, postgres=True) as store:
        configs.deploy(store, compiled, QQ.read_text(encoding="utf-8"), None, "bench")
        for n in range(writers):
            table_store.open_table(store, f"qq-{n}", "qq-showhand", "junior", "stud5", n)
            for player in _players(n):
                ledger.grant(store, player, 10_000_000, "opening_balance")


def _players(n: int) -> list[str]:
    return [f"w{n}-{name}" for name in ("ann", "bob", "cat")]


def writer(where: str, n: int, hands: int, go: str) -> None:
    """One host's writes (a child process): `hands` hands at table qq-n; prints JSON."""
    from gmtool.store import hands as hand_store
    from gmtool.store.db import open_location

    players = _players(n)
    with open_location(where, write=True, postgres=True) as store:
        config_id = store.one("SELECT config_id FROM configs")[0]
        log = hand_store.TableLog(store, f"qq-{n}")
        print("ready", flush=True)
        while not os.path.exists(go):
            time.sleep(0.001)
        settles = []
        started = time.perf_counter()
        for number in range(1, hands + 1):
            hand_id = hand_store.begin_hand(
                store,
                log,
                number,
                config_id,
                "junior",
                players[0],
                100,
                [{"player": p, "coins": 1_000} for p in players],
                secrets.token_hex(32),
                "hmac-sha256-fy-v1",
                [{"type": "hand_started", "config_id": config_id, "training": False}]
                + [{"type": "ante", "player": p, "amount": 100} for p in players],
            )
            for street in (2, 3, 4):
                log.append(
                    hand_id,
                    [{"type": "deal", "street": street, "cards": []}]
                    + [{"type": "call", "player": p, "amount": 100} for p in players],
                )
            t = time.perf_counter()
            hand_store.settle_hand(
                store,
                log,
                hand_id,
                [{"type": "showdown", "winners": [players[0]]}],
                {
                    "entries": [
                        {"player": players[0], "delta": 600, "reason": "won"},
                        {"player": players[1], "delta": -300, "reason": "lost"},
                        {"player": players[2], "delta": -300, "reason": "lost"},
                    ],
                    "results": {players[0]: "win", players[1]: "loss", players[2]: "loss"},
                    "winners": [players[0]],
                    "score": {},
                },
                secrets.token_hex(32),
            )
            settles.append(time.perf_counter() - t)
        print(json.dumps({"seconds": time.perf_counter() - started, "settles": settles}))


def _records(where: str) -> int:
    from gmtool.store.db import open_location

    with open_location(where, postgres=True) as store:
        return int(store.one("SELECT COUNT(*) FROM log")[0])


def run(where: str, writers: int, hands: int, folder: Path) -> dict:
    _setup(where, writers)
    before = _records(where)
    go = folder / f"go-{secrets.token_hex(4)}"
    procs = [
        subprocess.Popen(
            [sys.executable, __file__, "--child", where, str(n), str(hands), str(go)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for n in range(writers)
    ]
    for proc in procs:
        assert proc.stdout is not None
        if proc.stdout.readline().strip() != "ready":
            raise SystemExit(f"a writer did not start (exit {proc.wait()})")
    go.touch()
    results = []
    for proc in procs:
        out, _ = proc.communicate()
        if proc.returncode != 0:
            raise SystemExit(f"a writer failed (exit {proc.returncode})")
        results.append(json.loads(out))
    seconds = max(r["seconds"] for r in results)
    settles = sorted(s for r in results for s in r["settles"])
    appended = _records(where) - before
    return {
        "hands/s": writers * hands / seconds,
        "records/s": appended / seconds,
        "p50": statistics.median(settles) * 1000,
        "p99": settles[min(len(settles) - 1, int(len(settles) * 0.99))] * 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hands", type=int, default=300, help="hands each writer writes")
    parser.add_argument("--writers", type=int, nargs="+", default=[1, 3])
    parser.add_argument("--pg-admin", default=os.environ.get("GMTOOL_TEST_PG", DEFAULT_ADMIN))
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        where, n, hands, go = args.child
        writer(where, int(n), int(hands), go)
        return
    import psycopg
    from psycopg import sql

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        rows.append(("SQLite", 1, run(str(folder / "bench.db"), 1, args.hands, folder)))
        admin = psycopg.connect(args.pg_admin, autocommit=True)
        base = args.pg_admin.rsplit("/", 1)[0]
        try:
            for writers in args.writers:
                name = f"gmt_bench_{os.getpid()}_{secrets.token_hex(3)}"
                admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
                try:
                    rows.append(
                        ("PostgreSQL", writers, run(f"{base}/{name}", writers, args.hands, folder))
                    )
                finally:
                    admin.execute(
                        sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name))
                    )
        finally:
            admin.close()
    print(f"{args.hands} hands a writer (begin, 3 appends, durable settlement: 5 transactions)")
    print()
    print("| backend | writers | hands/s | evidence records/s | settlement p50 ms | p99 ms |")
    print("|---|---:|---:|---:|---:|---:|")
    for backend, writers, r in rows:
        print(
            f"| {backend} | {writers} | {r['hands/s']:,.1f} | {r['records/s']:,.1f} | "
            f"{r['p50']:.2f} | {r['p99']:.2f} |"
        )


if __name__ == "__main__":
    main()
