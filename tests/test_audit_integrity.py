"""Audit on a store a host is writing, the crash window at a hand's start, undecodable
payloads and private files (issue 14, items 6 and 9).

- Audit reads one snapshot: chain heads and rows as of one moment, so a store a live host
  writes meanwhile audits clean (it used to report `chain_head` problems).
- A hand's row and every event its start produced are written in one transaction: a host
  killed right after a hand started leaves a hand that, voided on recovery, replays clean.
- A payload that is not UTF-8 (edited in) is a finding naming its table and event, and
  the audit goes on to report the rest.
- The store, its WAL and shared-memory files, the host key and the host lock are
  readable by their owner only: running hands' hole cards are in them.
"""

from __future__ import annotations

import json
import sqlite3
import stat
from pathlib import Path

from helpers import clean_env, gmtool_command

from gmtool.audit.run import run_audit
from gmtool.engine.hand import Seat
from gmtool.engine.play import seeded_source, start_hand
from gmtool.house.host import Host, HostOptions
from gmtool.house.recorder import Recorder
from gmtool.house.seeds import hand_seed, load_key
from gmtool.store import ledger
from gmtool.store import tables as table_store
from gmtool.store.configs import active_config_id, load_config
from gmtool.store.db import connect


def test_a_hand_voided_right_after_it_started_audits_clean(deployed_db: Path) -> None:
    """The crash window after a hand's start: the host records the start and is killed
    before the next input; the next host voids the hand, and audit finds nothing."""
    with connect(deployed_db) as store:
        for name in ("ann", "bob"):
            ledger.grant(store, name, 100_000, "opening_balance")
        config = load_config(store, active_config_id(store, "qq-showhand", "junior"))
        table_store.open_table(store, "crash-1", "qq-showhand", "junior", "stud5", 0)
        seed = hand_seed(load_key(store.path), "crash-1", 1)
        hand = start_hand(
            config,
            "junior",
            [Seat("ann", 100_000), Seat("bob", 100_000)],
            "ann",
            seeded_source(config, seed),
        )
        Recorder(store, "crash-1").record(hand.events, seed=seed, number=1)
        # ... and the process dies here: no further input, no settlement
        stored = [
            r[0]
            for r in store.all("SELECT type FROM events WHERE table_id = 'crash-1' ORDER BY seq")
        ]
        assert stored == [e.type for e in hand.events]  # the whole start, in one write
        host = Host(store, HostOptions())
        assert len(host.recover()) == 1
        report = run_audit(store)
    assert report.problems == [], report.problems


def test_an_undecodable_payload_is_a_finding_and_the_audit_goes_on(host_copy: Path) -> None:
    conn = sqlite3.connect(host_copy)
    try:
        conn.execute("DROP TRIGGER events_no_update")
        row = conn.execute(
            "SELECT id, table_id, seq FROM events WHERE hand_id IS NOT NULL ORDER BY id LIMIT 1"
        ).fetchone()
        conn.execute(
            "UPDATE events SET payload = CAST(x'7b22783a22ff7d' AS TEXT) WHERE id = ?", (row[0],)
        )
        conn.execute(
            "UPDATE players SET coins = coins + 1 WHERE name = "
            "(SELECT name FROM players ORDER BY name LIMIT 1)"
        )  # a later finding
        conn.commit()
    finally:
        conn.close()
    run = _gmtool("audit", "--db", host_copy, "--json")
    assert run.returncode == 1 and "Traceback" not in run.stderr + run.stdout
    problems = json.loads(run.stdout)["problems"]
    kinds = {p["kind"] for p in problems}
    assert "event_hash" in kinds and "balance" in kinds, kinds
    edited = next(p for p in problems if p["kind"] == "event_hash")
    assert edited["table"] == row[1] and f"event {row[2]}" in edited["detail"]


def test_audit_of_a_store_a_live_host_is_writing_finds_nothing(
    deployed_db: Path, start_host
) -> None:
    """Audits while a real host plays (another process): each sees one consistent moment,
    in one process or with tables in two (each its own later snapshot: players' tallies
    are held to the hands settled in the first)."""
    host = start_host(deployed_db, "--tables", "6", "--speed", "200", "--seed", "live-audit")
    host.wait_for_line(r"hand settled")
    for round_ in range(4):
        seen = len(host.lines)
        jobs = ["--jobs", "2"] if round_ % 2 else []
        audit = _gmtool("audit", "--db", deployed_db, "--json", *jobs)
        assert audit.returncode == 0, (round_, audit.stdout[-2000:], audit.stderr)
        host.wait_until(lambda seen=seen: len(host.lines) > seen)  # the host wrote on meanwhile
    assert host.stop() == 0


def test_the_store_and_its_secrets_are_readable_by_their_owner_only(
    deployed_db: Path, start_host
) -> None:
    host = start_host(deployed_db, "--tables", "2", "--speed", "100")  # no --seed: a seed key
    host.wait_for_line(r"hand \d+ started")
    files = [
        deployed_db,
        *(
            deployed_db.with_name(deployed_db.name + suffix)
            for suffix in ("-wal", "-shm", ".key", ".seed.key", ".host.lock")
        ),
    ]
    modes = {f.name: stat.S_IMODE(f.stat().st_mode) for f in files if f.exists()}
    assert host.stop() == 0
    assert {deployed_db.name, f"{deployed_db.name}.seed.key"} <= set(modes), modes
    assert all(mode == 0o600 for mode in modes.values()), {k: oct(v) for k, v in modes.items()}


def _gmtool(*args):
    import subprocess

    return subprocess.run(
        [*gmtool_command(), *map(str, args)],
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
