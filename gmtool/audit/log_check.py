"""The evidence log, checked: the log is whole, and the store's rows are what it logged.

The log's own checks: indexes without gaps, every leaf the hash of its body, the
tree's recorded state (size and root) the tree of those leaves, and the stored interior
nodes (for proofs) that tree's. Then every evidence row
against its record: a hand, its end, a ledger row, a GM action, a config, a deployment,
a GM user's role and a player as the store holds them now must equal the body logged
for them; a row without a record was inserted, a record without its row was deleted.
Every table's events are covered by batches without gaps or overlaps, each naming the
hash its last event has (the event chain then covers every event in the batch).

What this cannot see alone is a rewrite of the log itself with every hash recomputed:
that is what a signed checkpoint kept elsewhere is for (`checkpoint_problems`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import orjson

from gmtool.audit.batch_heads import BatchHeads
from gmtool.evidence.merkle import Frontier
from gmtool.evidence.note import Checkpoint
from gmtool.evidence.records import index_key
from gmtool.findings import Finding
from gmtool.store import log_append, log_reads
from gmtool.store.db import Store, StoreError

_NAMED = {
    "hand": "hand",
    "hand_end": "end of hand",
    "ledger": "ledger row",
    "gm_action": "GM action",
    "config": "config",
    "deployment": "deployment",
    "gm_user": "GM user",
    "player": "player",
    "gm_request": "GM command",
    "witness": "witness change",
}


def _where(kind: str, key, body: dict) -> dict:
    if kind in ("hand", "hand_end"):
        return {"hand": key}
    if kind == "gm_action":
        return {"gm_action": key}
    where: dict[str, Any] = {"player": key} if kind == "player" else {}
    if kind == "ledger":
        where = {"player": body.get("player")}
        where |= {name: body[name] for name in ("hand", "gm_action") if body.get(name) is not None}
    if kind in TIMED and isinstance(body.get("at"), str):
        where["at"] = body["at"]  # when it was written (an audit of a time window places it)
    return where


# Rows placed in time by their own `at`; a hand or GM action is placed by its row, and
# configs and GM users are the ground everything stands on (audit/scope.py, Window).
TIMED = frozenset({"ledger", "player", "deployment", "gm_request"})


MAX_LEVEL = 62  # the tallest tree a log of 2**63 records makes

RELOGGED = {"gm_user"}  # logged again at each change of role or key: the last one holds


def _older_form(kind: str, record: dict, body: dict) -> bool:
    """A config logged before its record held the profile text's hash: the id alone."""
    return kind == "config" and record.keys() == {"kind", "id"} and record["id"] == body["id"]


def _key_of(body: dict):
    return body.get("name", body.get("id"))


_NONE = object()  # no key yet


def _loads(text: str) -> Any:
    """A record's body as values (a record SQLite saw as an object's JSON)."""
    try:
        return orjson.loads(text)
    except ValueError:  # read as JSON by SQLite, not by orjson (a lone surrogate)
        return json.loads(text)


def _order(key: Any) -> tuple:
    """A key's place in SQLite's order: NULL, then numbers, then text, then blobs (so an
    edited key of another type neither breaks a comparison nor moves a row)."""
    if key is None:
        return (0,)
    if isinstance(key, (int, float)) and not isinstance(key, bool):
        return (1, key)
    if isinstance(key, str):
        return (2, key)
    return (3, repr(key))


# The kinds whose rows grow with play: a full audit compares them with their records as
# two streams in key order, so its memory does not grow with the store.
STREAMED = frozenset({"hand", "hand_end", "ledger", "gm_action", "gm_request", "player"})


class LogCheck:
    """One pass over the log; keeps the tree it rebuilds (for checkpoints)."""

    after = None  # where the global checks take up: a full audit checks everything
    streamed: frozenset[str] = STREAMED

    def __init__(self, store: Store) -> None:
        self.store = store
        # Records of the streamed kinds held to their rows here, not in SQLite: those whose
        # index columns SQLite could not see agree with their body (`_suspects`: edits,
        # rare), by the kind and key their body says (body kind -> (key, index, record)).
        self._suspects: list[int] = []
        self.heads = BatchHeads(store)  # the batches of events the walk meets
        self._strays: dict[str, list[tuple[Any, int, dict]]] = {}
        self.start = 0  # the first record checked
        self.frontier = Frontier()
        self.roots: dict[int, bytes] = {}  # tree size -> root, for the sizes asked for
        self.problems: list[Finding] = []
        # by level: a digest of the complete tree nodes the walk made, in index order
        self.made = [hashlib.sha256() for _ in range(MAX_LEVEL + 1)]

    def run(self, sizes: set[int] = frozenset()) -> list[Finding]:
        logged, retired, batches = self._walk(set(log_reads.LOGGED_ROWS) - self.streamed, sizes)
        self._check_state()
        self._check_nodes()
        self._check_batches(batches)
        deployments = set(logged["deployment"])
        for kind, records in logged.items():  # (each check takes the records it matches)
            self._check_rows(kind, records, log_reads.logged_rows(self.store, kind))
        for kind in sorted(self.streamed):
            self._check_streamed(kind)
        self._check_active(deployments, retired)
        self._check_guards()
        return self.problems

    def _walk(self, kinds: set[str], sizes: set[int]) -> tuple[dict, set[int], dict[str, int]]:
        """Every record from the frontier's size on: whole, in order, each leaf the hash
        of its body, the roots at `sizes`. Returns the records of `kinds` by key, the ids
        of retired deployments and each table's last logged event; notes the streamed
        records SQLite could not see agree with their index (`_suspects`) and hands each
        batch of events to `heads`."""
        logged: dict[str, dict] = {kind: {} for kind in kinds}
        retired: set[int] = set()
        batches: dict[str, int] = {}  # table -> last seq logged
        frontier = self.frontier
        if frontier.size in sizes:
            self.roots[frontier.size] = frontier.root()
        loads, sha256 = orjson.loads, hashlib.sha256  # (a million a run)
        nodes, made = frontier.nodes, self.made
        streamed, suspects, heads = self.streamed, self._suspects, self.heads
        rows = log_reads.records(self.store, frontier.size, streamed)
        size = frontier.size  # (a local: frontier.size is set after the loop)
        for idx, kind, tkey, nkey, body, leaf, agrees, prior in rows:
            if idx != size:
                self._add(
                    "log_gap",
                    f"log record {size} is missing (the next is {idx}): records were deleted",
                )
                self._after_gap([(idx, kind, tkey, nkey, body, leaf, agrees, prior)], rows)
                break
            if type(leaf) is not bytes:
                leaf = bytes(leaf)
            try:
                text = body.encode()
            except UnicodeEncodeError:  # bad bytes kept as escapes (a lenient read)
                text = body.encode("utf-8", "surrogateescape")
            if sha256(b"\x00" + text).digest() != leaf:
                self._add(
                    "log_record", f"log record {idx} ({kind}) does not match its hash (edited)"
                )
            # Frontier.push inline, each complete node it makes hashed into its level's
            # digest (for `_check_nodes`: the stored nodes must be these).
            node, index, level = leaf, size, 0
            while index & 1:
                node = sha256(b"\x01" + nodes.pop() + node).digest()
                index >>= 1
                level += 1
                made[level].update(node)
            nodes.append(node)
            size += 1
            if size in sizes:
                frontier.size = size
                self.roots[size] = frontier.root()
            if agrees:
                continue  # held to its row in SQLite (_check_streamed)
            if agrees == 0:  # (None: not a streamed kind)
                suspects.append(idx)
            try:
                record = loads(body)
            except (ValueError, TypeError):
                record = None
            if kind == "events":
                heads.batch(idx, tkey, nkey, record, prior)
            try:
                indexed = (record["kind"], *index_key(record))
            except (TypeError, KeyError):
                self._add("log_record", f"log record {idx} is not a record's JSON")
                continue
            if indexed != (kind, tkey, nkey):
                self._add(
                    "log_record",
                    f"log record {idx} is indexed as {kind} "
                    f"{tkey!r} {nkey!r}, but its body is {indexed[0]} {indexed[1]!r} "
                    f"{indexed[2]!r} (edited)",
                )
                kind = indexed[0]
                if kind in streamed:
                    self._strays.setdefault(kind, []).append((_key_of(record), idx, record))
                    continue
            elif kind in streamed:  # a suspect after all (1.0 for 1): held to its row here
                self._strays.setdefault(kind, []).append((_key_of(record), idx, record))
                continue
            if kind == "events":
                table = record.get("table")
                before = batches.get(table)
                first = (self._logged_before(table) if before is None else before) + 1
                if record.get("first") != first:
                    self._add(
                        "log_events",
                        f"log record {idx}: events of table "
                        f"{table} from {first} are not logged in order",
                        table=table,
                    )
                batches[table] = record.get("last", 0)
            elif kind == "retire":
                retired.update(record.get("ids", ()))
            elif kind in logged:
                bucket, key = logged[kind], _key_of(record)
                if key in bucket and kind not in RELOGGED:
                    self._add(
                        "log_record",
                        f"log record {idx} logs {_NAMED[kind]} {key} again (duplicated)",
                        **_where(kind, key, record),
                    )
                bucket[key] = record
        frontier.size = size
        return logged, retired, batches

    def _logged_before(self, table: str) -> int:
        """The last event of `table` logged before the records walked (none: 0)."""
        return 0

    def _check_state(self) -> None:
        try:
            size, root = log_append.state(self.store)
        except StoreError:
            self._add(
                "log_state",
                "the log's recorded state is no tree's state: its size "
                "and nodes do not agree (edited)",
            )
            return
        if (size, root) != (self.frontier.size, self.frontier.root()):
            self._add(
                "log_state",
                f"the log's recorded state ({size} records) is not the "
                f"tree of its {self.frontier.size} records (the log was edited)",
            )

    def _check_nodes(self) -> None:
        """The stored tree nodes (`log_nodes`, read by inclusion and consistency proofs and
        by the host's start) made after the walk's first record are exactly the ones the
        walk made: at each level as many, with the same indexes and hashes, in order."""
        start, size = self.start, self.frontier.size
        stored = {
            level: (count, least, greatest)
            for level, count, least, greatest in log_reads.node_levels(self.store, start, MAX_LEVEL)
        }
        expected = {
            level: (end - first, first, end - 1)
            for level in range(1, MAX_LEVEL + 1)
            for first, end in [(start >> level, size >> level)]
            if end > first
        }
        for level in sorted(
            stored.keys() | expected.keys(), key=lambda v: (0, v) if type(v) is int else (1, str(v))
        ):
            if stored.get(level) != expected.get(level) or not self._same_nodes(level):
                self._add(
                    "log_nodes",
                    f"the log's stored tree nodes at level {level!r} are "
                    "not the tree of its records (edited, inserted or deleted): proofs "
                    "read from them would not verify",
                )

    def _same_nodes(self, level: int) -> bool:
        digest = hashlib.sha256()
        try:
            for (value,) in log_reads.node_hashes(self.store, level, self.start >> level):
                digest.update(value)
        except TypeError:  # a hash edited into text or a number
            return False
        return digest.digest() == self.made[level].digest()

    def _check_guards(self) -> None:
        missing = log_reads.missing_guards(self.store)
        if missing:
            self._add(
                "triggers",
                f"the append-only guards {', '.join(missing)} were dropped "
                "or defused: rows of those tables may have been changed or deleted since",
            )

    def _add(self, kind: str, detail: str, **where) -> None:
        self.problems.append(Finding(kind, detail, **where))

    def _after_gap(self, *parts: Iterable[tuple]) -> None:
        """The records after a gap (not walked): what SQLite says of their index, and
        their batches' heads, are still checked."""
        for rows in parts:
            for idx, kind, tkey, nkey, body, _, agrees, before in rows:
                if agrees == 0:
                    self._suspects.append(idx)
                if kind == "events":
                    try:
                        record = orjson.loads(body)
                    except (ValueError, TypeError):
                        record = None
                    self.heads.batch(idx, tkey, nkey, record, before)

    def _check_heads(self, rewritten: set[str]) -> None:
        """Every batch of events from the frontier's size on names the hash its last event
        has now; a table is reported once (after a rewrite every later batch differs too)."""
        for idx, table, first, last in self.heads.rewritten():
            if table not in rewritten:
                rewritten.add(table)
                self._rewritten(table, first, last, f"log record {idx}")

    def _rewritten(self, table: str, first: int, last: int, where: str) -> None:
        hand = log_reads.batch_hand(self.store, table, first, last)
        self._add(
            "events_rewritten",
            f"table {table}: the events up to {last} are not the "
            f"ones the log holds ({where}): rewritten",
            table=table,
            **({"hand": hand} if hand is not None else {}),
        )

    def _check_batches(self, batches: dict[str, int]) -> None:
        self._check_heads(set())
        for table, last in log_reads.last_seqs(self.store).items():
            logged = batches.pop(table, 0)
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
        for table, logged in sorted(batches.items()):
            self._add(
                "events_deleted",
                f"table {table}: the log holds {logged} events, the store none (deleted)",
                table=table,
            )

    def _check_rows(
        self,
        kind: str,
        records: dict,
        rows: Iterable[dict],
        logged_before: Callable[[object], bool] | None = None,
    ) -> None:
        """`rows` (bodies rebuilt from the store) against the `records` logged for them;
        a row without a record passes if `logged_before(key)` (logged before the walk)."""
        name = _NAMED[kind]
        for body in rows:
            key = _key_of(body)
            record = records.pop(key, None)
            if record is None:
                if logged_before is None or not logged_before(key):
                    self._not_logged(kind, body)
            else:
                self._compare(kind, record, body)
        for key, record in sorted(records.items(), key=lambda item: str(item[0])):
            self._add(
                "deleted",
                f"{name} {key}: in the evidence log but not in the store (deleted)",
                **_where(kind, key, record),
            )

    def _check_streamed(self, kind: str) -> None:
        """The rows of `kind` against their records in SQLite: every row whose last record
        is missing or not its record rebuilt byte for byte is read back (and compared as
        values: a differently written equal record passes), every record without a row
        and every key logged twice named. The keys of records held here (`_strays`) are
        compared here. Nothing is held in memory but those."""
        name, store, start = _NAMED[kind], self.store, self.start
        suspects = json.dumps(self._suspects)
        strays = self._strays.get(kind, [])
        held = sorted({key for key, _, _ in strays}, key=_order)
        keys = json.dumps([key for key in held if isinstance(key, (int, str))])
        records, keyed, rowed = log_reads.streamed_counts(store, kind, start, suspects, keys)
        last_key: object = _NONE
        for key, idx, body in (
            log_reads.records_logged_twice(store, kind, start, suspects, keys)
            if records != keyed
            else ()
        ):
            if key == last_key and kind not in RELOGGED:
                self._add(
                    "log_record",
                    f"log record {idx} logs {name} {key} again (duplicated)",
                    **_where(kind, key, _loads(body)),
                )
            last_key = key
        body_of, column = log_reads.LOGGED_ROWS[kind][1], log_reads.STREAMED[kind][1]
        unlogged = set()  # the keys of rows without a record
        for row, text in log_reads.rows_unlike_records(store, kind, start, suspects, keys):
            body = body_of(row)
            if text is None:
                unlogged.add(row[column])
                self._not_logged(kind, body)
            else:
                self._compare(kind, _loads(text), body)
        for key, _, text in (
            log_reads.records_without_rows(store, kind, start, suspects, keys)
            if keyed != rowed - len(unlogged)  # keys that no row has
            else ()
        ):
            self._add(
                "deleted",
                f"{name} {key}: in the evidence log but not in the store (deleted)",
                **_where(kind, key, _loads(text)),
            )
        for key in held:
            self._check_held(kind, key, strays)

    def _check_held(self, kind: str, key: Any, strays: list[tuple[Any, int, dict]]) -> None:
        """One key of `kind` with records held here: all its records in index order (the
        last holds; the others are duplicates) against its row."""
        name = _NAMED[kind]
        records = [
            (idx, _loads(body))
            for idx, body in log_reads.records_of_key(
                self.store, kind, key, self.start, json.dumps(self._suspects)
            )
        ]
        records += [
            (idx, record) for stray_key, idx, record in strays if _order(stray_key) == _order(key)
        ]
        records.sort(key=lambda item: item[0])
        if kind not in RELOGGED:
            for idx, record in records[1:]:
                self._add(
                    "log_record",
                    f"log record {idx} logs {name} {key} again (duplicated)",
                    **_where(kind, key, record),
                )
        record = records[-1][1]
        row = log_reads.row_of_key(self.store, kind, key) if isinstance(key, (int, str)) else None
        if row is None:
            self._add(
                "deleted",
                f"{name} {key}: in the evidence log but not in the store (deleted)",
                **_where(kind, key, record),
            )
        else:
            self._compare(kind, record, log_reads.LOGGED_ROWS[kind][1](row))

    def _not_logged(self, kind: str, body: dict) -> None:
        key = _key_of(body)
        self._add(
            "not_logged",
            f"{_NAMED[kind]} {key}: not in the evidence log (inserted)",
            **_where(kind, key, body),
        )

    def _compare(self, kind: str, record: dict, body: dict) -> None:
        if record != body and not _older_form(kind, record, body):
            changed = sorted(k for k in body if body.get(k) != record.get(k))
            self._add(
                "differs_from_log",
                f"{_NAMED[kind]} {_key_of(body)}: "
                f"{', '.join(changed)} differ{'s' if len(changed) == 1 else ''} from "
                "the evidence log (edited)",
                **_where(kind, _key_of(body), record),
            )

    def _check_active(self, deployments: set[int], retired: set[int]) -> None:
        expected = deployments - retired
        active = log_reads.active_deployments(self.store)
        for ident in sorted(active ^ expected):
            state = "active" if ident in active else "inactive"
            self._add(
                "differs_from_log",
                f"deployment {ident}: {state}, which the evidence log does not say (edited)",
            )


def checkpoint_problems(
    check: LogCheck, checkpoints: list[tuple[str, Checkpoint]], origin: str
) -> Iterator[Finding]:
    """Whether the store's log extends the signed checkpoints (name, checkpoint): same
    origin, at least as many records, the same root over the first `size` of them. A
    rewrite is placed between the last checkpoint that still holds and the first that
    does not; a rollback is reported against the newest checkpoint."""
    size = check.frontier.size
    good = None
    for name, checkpoint in sorted(checkpoints, key=lambda item: item[1].size):
        if checkpoint.origin != origin:
            yield Finding(
                "checkpoint", f"{name} is for log {checkpoint.origin}, not this store's ({origin})"
            )
            continue
        if checkpoint.size > size:
            newest = max(c.size for _, c in checkpoints if c.origin == origin)
            yield Finding(
                "checkpoint_rollback",
                f"the store holds {size} evidence records, "
                f"but a checkpoint was signed at {newest}: records after {size} were "
                "deleted, or an older copy of the store was restored",
            )
            return
        if check.roots.get(checkpoint.size) != checkpoint.root:
            since = (
                f"after record {good[1].size} ({good[0]} still holds)"
                if good
                else "from the first record on"
            )
            yield Finding(
                "checkpoint_rewrite",
                f"the log's first {checkpoint.size} records "
                f"are not the ones {name} signed: history was rewritten {since}",
            )
            return
        good = (name, checkpoint)
