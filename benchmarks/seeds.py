"""What seeds anyone can check cost (issue 24, point 5): the host and the audit, per hand.

    python benchmarks/seeds.py                              # this checkout alone
    python benchmarks/seeds.py --baseline /work/main        # and a checkout before it

``slot``: the seed of one slot as the host makes it, and its check as the audit makes it,
in microseconds (median of ``--slots``): the HMAC-SHA256 of a secret key (the derivation
before seed keys, and a demo store's) against the seed key's RSA-2048 PKCS#1 v1.5
signature and its verification with the public key.

``host``: hands settled per second by ``gmtool house run --hands N`` (qq-showhand,
``--tables`` tables (4), ``--speed 10000``: the most the host allows, so that the game's
pace costs as little as it can), on a fresh store
of each checkout (a first start of one hand makes the keys and registers the seed key,
unmeasured), run alternately ``--repeat`` times, median kept: this checkout, and with
``--baseline DIR`` the checkout in DIR (run with this Python's packages) in the same
command, with their ratio. Wall time of the whole command, start-up included.

``audit``: the whole audit (``gmtool.ops.audit.audit``, in this process, median of 3) of
this checkout's host store, whose seeds are RSA signatures checked with the registered
public key, against a store of as many hands hosted the same way with ``--seed`` (seeds
HMACs of the published demo key), in hands audited per second, and their ratio; and the
seed check alone (``audit.seeds.verify_seeds``) in microseconds a hand.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from gmtool.evidence.hand_seeds import RSA, SeedSigner, seed_holds

ROOT = Path(__file__).resolve().parent.parent
QQ = "qq-showhand"


def per_slot(slots: int) -> dict[str, float]:
    """Microseconds a slot: each derivation and each check, median of 5 batches."""
    signer = SeedSigner.generate()
    key = os.urandom(32)
    origin = "gmtool/0123456789abcdef"

    def timed(function) -> float:
        runs = []
        for _ in range(5):
            start = time.perf_counter()
            for number in range(slots):
                function(number)
            runs.append((time.perf_counter() - start) / slots * 1e6)
        return statistics.median(runs)

    def derive_hmac(number: int) -> bytes:
        return hmac.new(key, f"t-1#{number}".encode(), hashlib.sha256).digest()

    signed = {n: signer.seed(origin, "t-1", n) for n in range(slots)}
    derived = {n: derive_hmac(n) for n in range(slots)}
    return {
        "hmac": timed(derive_hmac),
        "rsa": timed(lambda n: signer.seed(origin, "t-1", n)),
        "hmac_check": timed(lambda n: hmac.compare_digest(derive_hmac(n), derived[n])),
        "rsa_check": timed(lambda n: seed_holds(RSA, signer.public, origin, "t-1", n, signed[n])),
    }


def _env(checkout: Path, keys: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("GMTOOL_DB", "GMTOOL_DEBUG", "GMTOOL_WITNESS", "PYTHONPATH")
    }
    return env | {"PYTHONPATH": str(checkout), "GMTOOL_USER": "bench", "GMTOOL_KEYS": str(keys)}


def _gmtool(checkout: Path, keys: Path, *args: str) -> subprocess.CompletedProcess:
    run = subprocess.run(
        [sys.executable, "-m", "gmtool", *args],
        env=_env(checkout, keys),
        cwd=keys.parent,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    if run.returncode != 0:
        raise SystemExit(f"gmtool {' '.join(args)} ({checkout}) exited {run.returncode}:\n"
                         f"{run.stdout[-2000:]}{run.stderr[-2000:]}")  # fmt: skip
    return run


def host_store(checkout: Path, folder: Path, *extra: str) -> tuple[Path, Path]:
    """A fresh store of `checkout`, QQ deployed, hosted once for one hand (keys made)."""
    folder.mkdir(parents=True)
    keys, db = folder / "keys", folder / "bench.db"
    _gmtool(checkout, keys, "db", "init", "--db", str(db))
    _gmtool(checkout, keys, "deploy", str(ROOT / "rules" / f"{QQ}.toml"), "--db", str(db))
    host_run(checkout, keys, db, 1, *extra)
    return keys, db


TABLES = [4]  # tables a host run (--tables)


def host_run(checkout: Path, keys: Path, db: Path, hands: int, *extra: str) -> float:
    """Hands settled per second by one `house run --hands N`, wall time of the command."""
    start = time.perf_counter()
    run = _gmtool(
        checkout, keys, "house", "run", "--db", str(db), "--system", QQ, "--tables", str(TABLES[0]),
        "--hands", str(hands), "--speed", "10000", *extra,
    )  # fmt: skip
    elapsed = time.perf_counter() - start
    settled = re.search(r"stopped: (\d+) hand\(s\) settled", run.stdout)
    if settled is None:
        raise SystemExit(f"no 'stopped: N hand(s) settled' line:\n{run.stdout[-2000:]}")
    return int(settled.group(1)) / elapsed


def audit_rate(db: Path) -> tuple[int, float, float]:
    """(hands, hands audited per second, microseconds a hand of the seed check alone):
    the whole audit and `verify_seeds`, each the median of 3, no problem."""
    from gmtool.audit.seeds import verify_seeds
    from gmtool.evidence import witness
    from gmtool.ops.audit import audit
    from gmtool.store.db import connect

    runs, checks = [], []
    verifier = witness.load_verifier(witness.public_key_path(db))
    for _ in range(3):
        with connect(db, write=False) as store:
            start = time.perf_counter()
            report = audit(store)
            runs.append(time.perf_counter() - start)
            start = time.perf_counter()
            found = list(verify_seeds(store, None, host_key=verifier))
            checks.append(time.perf_counter() - start)
        if report.problems or found:
            raise SystemExit(f"{db}: the audit found problems: {report.problems[:3]}{found[:3]}")
    hands = report.hands_checked
    return hands, hands / statistics.median(runs), statistics.median(checks) / hands * 1e6


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--slots", type=int, default=500, help="slots timed (slot)")
    parser.add_argument("--hands", type=int, default=300, help="hands a host run (host)")
    parser.add_argument("--repeat", type=int, default=3, help="host runs each, median kept")
    parser.add_argument("--baseline", type=Path, help="another checkout to compare (host)")
    parser.add_argument("--tables", type=int, default=4, help="tables a host run (host)")
    args = parser.parse_args(argv)
    TABLES[0] = args.tables
    print(
        f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, CPython "
        f"{platform.python_version()}"
    )
    t = per_slot(args.slots)
    print(f"slot: median of 5 x {args.slots} slots, microseconds a slot")
    print(f"  host, HMAC-SHA256 of a secret key (before seed keys)   {t['hmac']:9.2f} us")
    print(f"  host, RSA-2048 PKCS#1 v1.5 signature (seed key)       {t['rsa']:9.2f} us")
    print(f"  audit, HMAC recomputed with the secret key            {t['hmac_check']:9.2f} us")
    print(f"  audit, RSA-2048 verification with the public key      {t['rsa_check']:9.2f} us")
    checkouts = {"this checkout": ROOT}
    if args.baseline is not None:
        checkouts = {f"baseline {args.baseline}": args.baseline.resolve(), **checkouts}
    with tempfile.TemporaryDirectory() as tmp:
        stores = {
            name: host_store(path, Path(tmp) / f"store-{i}")
            for i, (name, path) in enumerate(checkouts.items())
        }
        rates: dict[str, list[float]] = {name: [] for name in checkouts}
        for _ in range(args.repeat):  # alternately, so that the machine's load hits both
            for name, path in checkouts.items():
                rates[name].append(host_run(path, *stores[name], args.hands))
        keys, demo = host_store(ROOT, Path(tmp) / "demo", "--seed", "bench")
        for _ in range(args.repeat):
            host_run(ROOT, keys, demo, args.hands, "--seed", "bench")
        audits = {
            "seed key (RSA)": audit_rate(stores["this checkout"][1]),
            "--seed (HMAC)": audit_rate(demo),
        }
    print(
        f"host: gmtool house run --hands {args.hands} ({QQ}, {args.tables} tables, speed 10000), "
        f"median of {args.repeat}"
    )
    medians = {name: statistics.median(values) for name, values in rates.items()}
    for name, value in medians.items():
        print(f"  {name}: {value:,.1f} hands/s")
    if args.baseline is not None:
        base = medians[f"baseline {args.baseline}"]
        print(f"  ratio this / baseline: {medians['this checkout'] / base:.3f}")
    print("audit: the whole audit of this checkout's stores, median of 3")
    for name, (hands, rate, check) in audits.items():
        print(f"  {name}: {hands} hands, {rate:,.0f} hands/s; seed check {check:.1f} us a hand")
    rsa, demo_rate = audits["seed key (RSA)"][1], audits["--seed (HMAC)"][1]
    print(f"  ratio RSA / HMAC: {rsa / demo_rate:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
