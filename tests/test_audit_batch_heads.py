"""Each batch of events the log holds names the hash its last event has now, checked
on the next batch's row of the log walk, or by a point query for a table's last batch
and a batch the next one does not follow (issue 22, the audit's speed).

A table whose events were rewritten and rechained is named once, at its first batch
that no longer holds, whichever way that batch was judged: after its next batch, as a
table's last batch, with the order of batches broken, or after a gap in the log.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from test_tamper import _rechain

from gmtool.audit.run import run_audit
from gmtool.store.db import connect


def _batches(conn: sqlite3.Connection, table: str) -> list[tuple[int, int, int]]:
    """(idx, first, last) of a table's batches, in log order."""
    return [
        (idx, json.loads(body)["first"], json.loads(body)["last"])
        for idx, body in conn.execute(
            "SELECT idx, body FROM log WHERE kind = 'events' AND tkey = ? ORDER BY idx", (table,)
        )
    ]


def _rewrite(conn: sqlite3.Connection, table: str, seq: int) -> None:
    """Event `seq` of `table` given another payload, the chain from it rehashed."""
    conn.execute(
        "UPDATE events SET payload = json_set(payload, '$.rewritten', 1) "
        "WHERE table_id = ? AND seq = ?",
        (table, seq),
    )
    _rechain(conn, table, seq)


def _rewritten(db: Path) -> list[dict]:
    with connect(db, write=False) as store:
        problems = run_audit(store).problems
    return [p for p in problems if p["kind"] == "events_rewritten"]


def _tables(conn: sqlite3.Connection) -> list[str]:
    return [
        r[0]
        for r in conn.execute(
            "SELECT tkey FROM log WHERE kind = 'events' GROUP BY tkey HAVING COUNT(*) > 4 "
            "ORDER BY tkey"
        )
    ]


def _open(db: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row  # (as _rechain reads rows)
    for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'"):
        conn.execute(f"DROP TRIGGER {name}")
    return conn


def test_each_rewritten_table_is_named_once_at_its_first_batch_that_fails(
    host_copy: Path,
) -> None:
    """One table rewritten from a middle batch on (judged on the next batch's row), one
    only in its last batch (judged by a point query)."""
    conn = _open(host_copy)
    first_table, last_table = _tables(conn)[:2]
    middle = _batches(conn, first_table)[2]
    _rewrite(conn, first_table, middle[2])
    final = _batches(conn, last_table)[-1]
    _rewrite(conn, last_table, final[2])
    conn.commit()
    conn.close()
    found = _rewritten(host_copy)
    assert [(p["table"], p["detail"]) for p in found] == sorted(
        [
            (
                first_table,
                f"table {first_table}: the events up to {middle[2]} are not the ones the "
                f"log holds (log record {middle[0]}): rewritten",
            ),
            (
                last_table,
                f"table {last_table}: the events up to {final[2]} are not the ones the "
                f"log holds (log record {final[0]}): rewritten",
            ),
        ],
        key=lambda item: int(item[1].split("log record ")[1].split(")")[0]),
    )


def test_a_rewrite_is_found_when_the_order_of_batches_is_broken(host_copy: Path) -> None:
    """The batch after the rewritten one has its first event's index column edited:
    the rewritten batch is judged by a point query, and still named."""
    conn = _open(host_copy)
    table = _tables(conn)[0]
    batches = _batches(conn, table)
    _rewrite(conn, table, batches[1][2])
    conn.execute("UPDATE log SET nkey = nkey + 1 WHERE idx = ?", (batches[2][0],))
    conn.commit()
    conn.close()
    found = _rewritten(host_copy)
    assert [p["table"] for p in found] == [table]
    assert f"(log record {batches[1][0]})" in found[0]["detail"]


def test_a_rewrite_after_a_gap_in_the_log_is_still_found(host_copy: Path) -> None:
    conn = _open(host_copy)
    table = _tables(conn)[0]
    batches = _batches(conn, table)
    _rewrite(conn, table, batches[-2][2])
    conn.execute("DELETE FROM log WHERE idx = ?", (batches[1][0],))  # a gap before it
    conn.commit()
    conn.close()
    with connect(host_copy, write=False) as store:
        problems = run_audit(store).problems
    kinds = [p["kind"] for p in problems]
    assert "log_gap" in kinds
    found = [p for p in problems if p["kind"] == "events_rewritten"]
    assert [p["table"] for p in found] == [table]
    assert f"(log record {batches[-2][0]})" in found[0]["detail"]
