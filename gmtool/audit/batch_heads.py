"""Each batch of events the log holds names the hash its last event has now.

The log's walk reads, beside each batch record, the hash the event before the batch's
first has now (`log_reads.records`: a join on the index columns, no JSON in SQL). While
a table's batches follow on in order, that is the previous batch's last event: so each
batch is judged on the next batch's row, and a table's last batch by one point query.
A batch that the next one does not follow (order broken, a key edited) is judged by a
point query too. Only each table's last batch is held, so memory grows with the tables,
not with the log.
"""

from __future__ import annotations

from typing import Any

import orjson

from gmtool.store import log_reads
from gmtool.store.db import Store


class BatchHeads:
    """Batches fed in log order (`batch`); `rewritten()` names each table's first batch
    whose head is not its last event's hash now."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._last: dict[Any, tuple] = {}  # table -> (idx, first, last, head) of its last batch
        self._first_bad: dict[Any, tuple] = {}  # table -> (idx, first, last) first rewritten

    def batch(self, idx: int, table: Any, first: Any, record: Any, before: str | None) -> None:
        """The batch record at `idx` (its index columns `table` and `first`, its body's
        value `record`: None if not JSON), and the hash event `first - 1` of `table` has
        now (`before`, read with it)."""
        if isinstance(record, dict):
            last, head = record.get("last"), record.get("head")
            if type(last) is not int:  # (an int and a str are as SQLite reads them)
                last = _sql_value(last)
            if type(head) is not str:
                head = _sql_value(head)
        else:  # not an object's JSON: SQLite reads no last and no head from it
            last = head = None
        held = self._last.get(table)
        if held is not None:
            if type(first) is int and type(held[2]) is int and first == held[2] + 1:
                if before != held[3] and table not in self._first_bad:  # (_judge, inline)
                    self._first_bad[table] = held[:3]
            else:
                self._judge(table, held, None, False)
        self._last[table] = (idx, first, last, head)

    def rewritten(self) -> list[tuple[int, Any, Any, Any]]:
        """(idx, table, first, last) of each table's first rewritten batch, in log order
        (the last batches judged now)."""
        for table, held in self._last.items():
            self._judge(table, held, None, False)
        self._last = {}
        return sorted(
            ((idx, table, first, last) for table, (idx, first, last) in self._first_bad.items()),
            key=lambda item: item[0],
        )

    def _judge(self, table: Any, held: tuple, digest: str | None, known: bool) -> None:
        if table in self._first_bad:
            return  # reported once: after a rewrite every later batch differs too
        idx, first, last, head = held
        if not known:
            digest = log_reads.event_hash(self.store, table, last)
        if digest != head:
            self._first_bad[table] = (idx, first, last)


def _sql_value(value: Any) -> Any:
    """A body's value as SQLite's `json_extract` gives it: an array or object as its JSON
    text, true and false as 1 and 0."""
    if isinstance(value, (dict, list)):
        return orjson.dumps(value).decode()
    if isinstance(value, bool):
        return int(value)
    return value
