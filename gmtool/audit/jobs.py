"""Table passes run here or in other processes (`gmtool audit --jobs N`).

A table's pass needs nothing from another table's, so N worker processes can audit N
tables at once. Each worker opens the store read-only by its path and audits whole
tables, each in a read snapshot of its own (the table's chain head is read in it, with
its rows). Tables are handed out longest chain first, so the workers finish together,
and their findings are put back in table order: the report is the one a single process
makes. Meanwhile the caller goes on with the log and the global checks.

Workers are spawned, not forked: the caller may hold a store open and run threads (a
progress bar), neither of which survives a fork safely.
"""

from __future__ import annotations

import multiprocessing
import threading
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path

from gmtool.audit.tables import TableAudit, TableResult
from gmtool.bounds import MAX_JOBS
from gmtool.errors import UsageError
from gmtool.store.db import Store, connect, open_location
from gmtool.store.url import locate

_audit: TableAudit | None = None  # a worker's own
_news = None  # a worker's queue of hands checked, for the caller's progress
_told = 0


class TablePasses:
    """Runs `(table, start)` passes, in this process (`jobs` 1, or a single table) or in
    `jobs` workers; `results()` gives their findings in the order they were given."""

    def __init__(
        self,
        store: Store,
        jobs: int = 1,
        progress: Callable[[int], None] | None = None,
        strict: bool = False,
    ) -> None:
        if not 1 <= jobs <= MAX_JOBS:
            raise UsageError(f"--jobs {jobs}: give 1 to {MAX_JOBS} processes")
        self.store, self.jobs, self.progress = store, jobs, progress
        self.strict = strict  # workers read in strict snapshots too (Store.snapshot)
        self._results: list[TableResult] | list[Future] = []
        self._pool: ProcessPoolExecutor | None = None
        self._listener: threading.Thread | None = None
        self._news = None
        self._checked = 0

    def start(
        self,
        passes: list[tuple[str, int | None, int]],
        selection: tuple = (),
        sizes: dict[str, int] | None = None,
    ) -> None:
        """Start the passes (table, first event or None, last hand to tally): here they run
        to the end before this returns; in workers they run on while the caller does other
        work."""
        workers = min(self.jobs, len(passes))
        if workers <= 1:
            audit = TableAudit(self.store, self.progress)
            self._results = [
                audit.table(table, selection, start, until) for table, start, until in passes
            ]
            return
        context = multiprocessing.get_context("spawn")
        self._news = context.Queue()
        self._pool = ProcessPoolExecutor(
            workers,
            mp_context=context,
            initializer=_open,
            initargs=(getattr(self.store, "url", None) or str(self.store.path), self._news),
        )
        self._listener = threading.Thread(target=self._listen, daemon=True)
        self._listener.start()
        sizes = sizes or {}
        longest_first = sorted(
            range(len(passes)), key=lambda i: -(sizes.get(passes[i][0], 0) - (passes[i][1] or 1))
        )
        futures: dict[int, Future] = {}
        for i in longest_first:
            table, start, until = passes[i]
            futures[i] = self._pool.submit(_table, table, selection, start, until, self.strict)
        self._results = [futures[i] for i in range(len(passes))]

    def results(self) -> list[TableResult]:
        """Every pass's result, in the order the passes were given (waits for workers)."""
        if self._pool is None:
            return list(self._results)
        try:
            results = [future.result() for future in self._results]
        finally:
            self.close()
        return results

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
            self._news.put(None)
            self._listener.join()

    def __enter__(self) -> TablePasses:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _listen(self) -> None:
        """Add up what the workers say they checked, for the progress report."""
        while (count := self._news.get()) is not None:
            self._checked += count
            if self.progress:
                self.progress(self._checked)


# -- in a worker -------------------------------------------------------------------------


def _open(where: str, news) -> None:
    global _audit, _news
    _news = news
    store = (
        connect(Path(where), write=False)
        if not locate(where).is_postgres
        else open_location(where, write=False, postgres=True)
    )  # (a PostgreSQL store by its URL, password and all: it goes through a pipe)
    _audit = TableAudit(store, progress=_tell)


def _tell(count: int) -> None:
    global _told
    _news.put(count - _told)
    _told = count


def _table(
    table_id: str, selection: tuple, start: int | None, until: int, strict: bool
) -> TableResult:
    with _audit.store.snapshot(strict):
        result = _audit.table(table_id, selection, start, until)
    _tell(_audit.hands_checked)
    return result
