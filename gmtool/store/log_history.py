"""The evidence log's root at an earlier size, as the store keeps it: what a GM request
signed then names (evidence/request.py), rebuilt from the stored complete nodes (a full
audit holds every stored node to the records, `audit/log_check.py`)."""

from __future__ import annotations

from gmtool.evidence.merkle import Frontier
from gmtool.store import log_append, log_reads
from gmtool.store.db import Store


def now(store: Store) -> tuple[int, bytes]:
    """(size, root) of the log as the store says it is now: what a request is bound to
    (read inside the caller's write transaction when it signs one there)."""
    return log_append.state(store)


def root_at(store: Store, size: int) -> bytes | None:
    """The root of the log's first `size` records from the stored frontier at that size;
    None when the store does not hold it (nodes deleted: the log check reports them)."""
    nodes = log_reads.frontier_at(store, size)
    if any(node is None for node in nodes):
        return None
    return Frontier(size, [node for node in nodes if node is not None]).root()
