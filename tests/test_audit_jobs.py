"""`gmtool audit --jobs N` (issue 14): tables audited in N processes give the report one
process gives (the same problems in the same order, the same hands checked), on a clean
store and on a tampered one; the progress report still counts every hand; a bad N is a
usage error. Real stores (the session's host-made one), real `gmtool` processes."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from test_tamper import _rechain

from gmtool.audit.run import run_audit
from gmtool.store.db import connect


def _report(gm, db: Path, *args: str) -> tuple[int, dict]:
    run = gm("audit", "--db", db, "--json", *args, expect=None)
    return run.returncode, json.loads(run.stdout)


def test_two_processes_report_what_one_does_on_a_clean_store(host_copy: Path, gm) -> None:
    code, one = _report(gm, host_copy)
    assert code == 0 and one["problems"] == [] and one["hands_checked"] > 0
    for jobs in ("2", "3"):
        assert _report(gm, host_copy, "--jobs", jobs) == (0, one)
    code, table = _report(gm, host_copy, "--table", "qq-showhand-junior-1", "--jobs", "2")
    assert (code, table) == _report(gm, host_copy, "--table", "qq-showhand-junior-1")


def _tamper(db: Path) -> None:
    """Findings on several tables and in the global checks: an event edited in place on
    one table, another table's event edited and its chain recomputed, winnings moved,
    coins minted."""
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    with conn:
        triggers = conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'trigger'"
        ).fetchall()
        for trigger in triggers:
            conn.execute(f"DROP TRIGGER {trigger['name']}")
        tables = [
            r[0]
            for r in conn.execute(
                "SELECT table_id FROM hands WHERE outcome = "
                "'settled' GROUP BY table_id ORDER BY table_id"
            )
        ]
        for table, rechain in ((tables[0], False), (tables[-1], True)):
            event = conn.execute(
                "SELECT id, seq, payload FROM events WHERE table_id = ? AND "
                "type = 'settlement' ORDER BY seq LIMIT 1",
                (table,),
            ).fetchone()
            conn.execute(
                "UPDATE events SET payload = ? WHERE id = ?",
                (event["payload"].replace("}", ',"x":1}', 1), event["id"]),
            )
            if rechain:
                _rechain(conn, table, event["seq"])
        row = conn.execute(
            "SELECT id, player, delta FROM ledger WHERE hand_id IS NOT NULL AND "
            "delta > 0 ORDER BY id DESC LIMIT 1"
        ).fetchone()
        conn.execute("UPDATE ledger SET player = 'bot-001' WHERE id = ?", (row["id"],))
        conn.execute(
            "INSERT INTO ledger (player, delta, reason, created_at) VALUES ("
            "'bot-003', 777, 'opening_balance', '2100-01-01T00:00:00+00:00')"
        )
        for trigger in triggers:
            conn.execute(trigger["sql"])
    conn.close()


def test_two_processes_report_what_one_does_on_a_tampered_store(host_copy: Path, gm) -> None:
    _tamper(host_copy)
    code, one = _report(gm, host_copy)
    kinds = {p["kind"] for p in one["problems"]}
    assert code == 1 and {"event_hash", "events_rewritten", "balance", "not_logged"} <= kinds
    assert len({p.get("table") for p in one["problems"] if p.get("table")}) >= 2
    assert _report(gm, host_copy, "--jobs", "2") == (1, one)


def test_the_progress_report_counts_every_hand_from_the_workers(host_copy: Path) -> None:
    seen: list[int] = []
    with connect(host_copy, write=False) as store:
        report = run_audit(store, progress=seen.append, jobs=2)
        alone = run_audit(store)
    assert report.as_json() == alone.as_json()
    assert seen == sorted(seen) and seen[-1] == report.hands_checked and len(seen) > 1


@pytest.mark.parametrize("value", ["0", "65", "-1", "two", ""])
def test_a_bad_number_of_jobs_is_a_usage_error(host_copy: Path, gm, value: str) -> None:
    run = gm("audit", "--db", host_copy, "--jobs", value, expect=2)
    assert "--jobs" in run.stderr and "Traceback" not in run.stderr
