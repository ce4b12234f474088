"""The audit reads text as SQLite decodes it, and goes again leniently on text that is
not UTF-8 (issue 22, the audit's speed).

Reading every value through a Python text factory (bad bytes kept as escapes, so an
edited store is reported rather than a crash) made a read of the events 60% slower. A
strict snapshot reads the clean store SQLite's way; text that is not UTF-8 raises an
error the audit recognises, and the audit runs again in a lenient snapshot, in one
process or with tables in workers: the report is the lenient audit's, and a progress
bar never goes back.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from gmtool.audit.run import run_audit
from gmtool.store.db import connect, undecodable

BAD = "CAST(x'7b22783a22ff7d' AS TEXT)"  # {"x:"<0xff>}: not UTF-8


def _edit(db: Path, *statements: tuple[str, tuple]) -> None:
    conn = sqlite3.connect(db)
    try:
        for name in ("events_no_update", "log_no_update"):
            conn.execute(f"DROP TRIGGER {name}")
        for sql, params in statements:
            conn.execute(sql, params)
        conn.commit()
    finally:
        conn.close()


def _first_event(db: Path) -> tuple[int, str, int]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(
            "SELECT id, table_id, seq FROM events WHERE hand_id IS NOT NULL ORDER BY id LIMIT 1"
        ).fetchone()
    finally:
        conn.close()


def test_a_strict_snapshot_refuses_text_that_is_not_utf8_and_a_lenient_one_keeps_it(
    host_copy: Path,
) -> None:
    event, _, _ = _first_event(host_copy)
    _edit(host_copy, (f"UPDATE events SET payload = {BAD} WHERE id = ?", (event,)))
    sql = "SELECT payload FROM events WHERE id = ?"
    with connect(host_copy, write=False) as store:
        with store.snapshot(strict=True):
            assert store.one(sql, (event - 1,)) is not None or event == 1  # clean text reads
            with pytest.raises(sqlite3.OperationalError) as refused:
                store.one(sql, (event,))
        assert undecodable(refused.value)
        assert not undecodable(sqlite3.OperationalError("database is locked"))
        with store.snapshot():
            assert store.one(sql, (event,))[0] == '{"x:"\udcff}'


@pytest.mark.parametrize("jobs", [1, 2])
def test_an_audit_of_text_that_is_not_utf8_reports_it_and_the_rest_with_or_without_workers(
    host_copy: Path, jobs: int
) -> None:
    """An undecodable payload (read by a table pass, in a worker with jobs 2) and an
    undecodable log record (read by the log check): both reported, beside a later
    finding, and the progress counts only go up."""
    event, table, seq = _first_event(host_copy)
    _edit(
        host_copy,
        (f"UPDATE events SET payload = {BAD} WHERE id = ?", (event,)),
        (
            f"UPDATE log SET body = {BAD} WHERE idx = "
            "(SELECT MIN(idx) FROM log WHERE kind = 'player')",
            (),
        ),
        ("UPDATE players SET coins = coins + 1 WHERE name = (SELECT MIN(name) FROM players)", ()),
    )
    told: list[int] = []
    with connect(host_copy, write=False) as store:
        report = run_audit(store, jobs=jobs, progress=told.append)
        hands = store.one("SELECT COUNT(*) FROM hands")[0]
    kinds = {p["kind"] for p in report.problems}
    assert {"event_hash", "log_record", "balance"} <= kinds, kinds
    edited = next(p for p in report.problems if p["kind"] == "event_hash")
    assert edited["table"] == table and f"event {seq}" in edited["detail"]
    assert report.hands_checked == hands
    assert told == sorted(told) and len(told) == len(set(told)) and told[-1] == hands


def test_the_report_is_the_same_in_one_process_and_in_workers(host_copy: Path) -> None:
    event, _, _ = _first_event(host_copy)
    _edit(host_copy, (f"UPDATE events SET payload = {BAD} WHERE id = ?", (event,)))
    with connect(host_copy, write=False) as store:
        alone = run_audit(store).as_json()
        workers = run_audit(store, jobs=2).as_json()
    assert alone == workers and alone["problems"]
