"""The evidence log checked from a signed checkpoint on (`gmtool audit --from-checkpoint`).

First the store must extend the checkpoint: it holds at least `size` records, and the
tree it stored for them (the roots of their complete subtrees, in `log_nodes`) has the
signed root, so that frontier is authentic without reading a record before `size`. Then
every record from `size` on is checked as a full audit checks it (whole, in order, each
leaf the hash of its body, the tree's recorded state the tree they make, later signed
checkpoints their roots) and the rows they log against them: hands, ends of hands,
ledger rows and GM actions written after the checkpoint (from the first id a record
after it names; any row from there without its record was inserted), each table's
events after its last batch before the checkpoint. The small tables (configs,
deployments, GM users and their requests, players) are compared whole, as a full audit
does, through the index on the log's kinds. What this does not prove: docs/evidence.md.
"""

from __future__ import annotations

import orjson

from gmtool.audit.log_check import LogCheck
from gmtool.audit.scope import After
from gmtool.canonical import ZERO_HASH
from gmtool.evidence.merkle import Frontier
from gmtool.evidence.note import Checkpoint
from gmtool.findings import Finding
from gmtool.store import log_reads
from gmtool.store.db import Store


class LogFrom(LogCheck):
    """The log from the checkpoint `base` (name, checkpoint whose signature the caller
    verified) on: `anchor` first, then `table_starts`, then `run`; `after` says where the
    global checks take up."""

    streamed: frozenset[str] = frozenset()  # the records after a checkpoint: held, a few

    def __init__(self, store: Store, base: tuple[str, Checkpoint]) -> None:
        super().__init__(store)
        self.name, self.base = base
        self.after: After | None = None
        self._before: dict[str, tuple[int, str] | None] = {}  # table -> last batch before

    def anchor(self, origin: str) -> list[Finding]:
        """Whether the store extends the checkpoint: its origin, at least its size, its
        stored tree at that size the signed root. Any problem here leaves nothing after
        the checkpoint to build on: the audit stops and says to run a full one."""
        name, base = self.name, self.base
        if base.origin != origin:
            return [
                Finding(
                    "checkpoint", f"{name} is for log {base.origin}, not this store's ({origin})"
                )
            ]
        held = log_reads.size(self.store)
        if held < base.size:
            return [
                Finding(
                    "checkpoint_rollback",
                    f"the store holds {held} evidence records, "
                    f"but {name} was signed at {base.size}: records after {held} were "
                    "deleted, or an older copy of the store was restored",
                )
            ]
        nodes = log_reads.frontier_at(self.store, base.size)
        if None in nodes or Frontier(base.size, nodes).root() != base.root:
            return [
                Finding(
                    "checkpoint_rewrite",
                    f"the log's first {base.size} records are "
                    f"not the ones {name} signed (records before it, or the tree's "
                    "stored nodes, were changed): run a full audit (without "
                    "--from-checkpoint) to find where",
                )
            ]
        self.frontier = Frontier(base.size, nodes)
        self.start = base.size
        return []

    def table_starts(self, tables: list[str]) -> dict[str, int]:
        """Each table's first event after the checkpoint (after its last batch logged
        before it)."""
        return {table: self._logged_before(table) + 1 for table in tables}

    def _batch_before(self, table: str) -> tuple[int, str] | None:
        if table not in self._before:
            self._before[table] = log_reads.last_batch_before(self.store, table, self.base.size)
        return self._before[table]

    def _logged_before(self, table: str) -> int:
        before = self._batch_before(table)
        return before[0] if before else 0

    def run(self, sizes: set[int] = frozenset()) -> list[Finding]:
        ranged = set(log_reads.RANGED) | {"hand_end"}
        logged, retired, batches = self._walk(ranged, sizes)
        self._check_state()
        self._check_nodes()
        self._check_batches_from(batches)
        self.after = after = self._cutoffs(logged)
        for kind in log_reads.RANGED:
            self._check_rows(
                kind, logged[kind], log_reads.rows_from(self.store, kind, getattr(after, kind))
            )
        running = [
            log_reads.last_hand_before(self.store, table, after.hand) for table in self._before
        ]  # the hand each table may have had running
        ended = {*logged["hand_end"], *(hand for hand in running if hand is not None)}
        self._check_rows(
            "hand_end",
            logged["hand_end"],
            log_reads.ended_hands(self.store, after.hand, ended),
            self._ended_before,
        )
        self._check_whole([kind for kind in log_reads.LOGGED_ROWS if kind not in ranged], retired)
        self._check_guards()
        return self.problems

    def _ended_before(self, hand: int) -> bool:
        index = log_reads.record_index(self.store, "hand_end", hand)
        return index is not None and index < self.base.size

    def _cutoffs(self, logged: dict[str, dict]) -> After:
        first = {
            kind: min((key for key in logged[kind] if isinstance(key, int)), default=None)
            for kind in log_reads.RANGED
        }
        for kind, key in first.items():
            if key is None:  # nothing of this kind after the checkpoint
                first[kind] = log_reads.max_logged_id(self.store, kind) + 1
        head = ZERO_HASH
        if first["gm_action"] > 1:
            body = log_reads.logged_body(self.store, "gm_action", first["gm_action"] - 1)
            head = _field(body, "hash") or ZERO_HASH
        ended = tuple(
            sorted(
                key for key in logged["hand_end"] if isinstance(key, int) and key < first["hand"]
            )
        )
        return After(
            self.base.size, first["hand"], first["ledger"], first["gm_action"], head, ended
        )

    def _check_batches_from(self, batches: dict[str, int]) -> None:
        """The batches after the checkpoint and the last one before it of every table
        name the hashes its events have now; each table's events end where its last
        batch does (none after it were inserted, none before it deleted)."""
        rewritten = set()
        for table in list(self._before):
            before = self._batch_before(table)
            if before and log_reads.event_hash(self.store, table, before[0]) != before[1]:
                rewritten.add(table)
                self._rewritten(
                    table, before[0], before[0], "its last record before the checkpoint"
                )
        self._check_heads(rewritten)
        stored = log_reads.last_seqs(self.store)
        for table in sorted({*stored, *batches, *(t for t, b in self._before.items() if b)}):
            last, logged = stored.get(table, 0), batches.get(table, self._logged_before(table))
            if last > logged:
                self._add(
                    "events_unlogged",
                    f"table {table}: events {logged + 1} to {last} are not in the log (inserted)",
                    table=table,
                )
            elif last < logged:
                self._add(
                    "events_deleted",
                    f"table {table}: the log holds events up to "
                    f"{logged}, the store up to {last} (deleted)",
                    table=table,
                )

    def _check_whole(self, kinds: list[str], retired: set[int]) -> None:
        """The small tables, whole: every record of their kinds (through the log's index
        on kind) against every row."""
        logged: dict[str, dict] = {kind: {} for kind in kinds}
        for _, kind, body in log_reads.records_of_kinds(self.store, [*kinds, "retire"]):
            try:
                record = orjson.loads(body)
            except ValueError:
                continue  # before the checkpoint: a full audit reports it
            if kind == "retire":
                retired.update(record.get("ids", ()))
            else:
                logged[kind][record.get("name", record.get("id"))] = record
        deployments = set(logged.get("deployment", ()))
        for kind, records in logged.items():
            self._check_rows(kind, records, log_reads.logged_rows(self.store, kind))
        self._check_active(deployments, retired)


def _field(body: str | None, name: str):
    try:
        record = orjson.loads(body) if body is not None else None
    except ValueError:
        return None
    return record.get(name) if isinstance(record, dict) else None
