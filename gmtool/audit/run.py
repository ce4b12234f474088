"""`gmtool audit`: every check on every selected hand, in one streaming pass per table.

Each table's events are read once, in chain order: every link and hash is checked as
the row passes, and a hand's events (contiguous in its table's chain) go to the hand
checks as soon as its last event has arrived: the deck commitment, a replay through the
engine under the hand's recorded config, a zero-sum settlement and ledger rows that
match it. Then every (selected) player's coins against their ledger, and the GM log's
chain. Hands, events and ledger rows are streamed, so memory stays flat however many
hands the store holds.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from itertools import groupby
from operator import itemgetter
from typing import Callable, Iterator

from gmtool.audit.chain import (
    Problem,
    check_head,
    heads,
    verify_balances,
    verify_gm_log,
    verify_grants,
    verify_ledger_links,
    verify_seeds,
)
from gmtool.audit.evidence import LogCheck, checkpoint_problems
from gmtool.audit.replay import (
    ReplaySetup,
    decode_payloads,
    loads_or_none,
    replay_loaded,
)
from gmtool.canonical import ZERO_HASH
from gmtool.evidence.note import Checkpoint
from gmtool.store import scan
from gmtool.store.configs import load_config
from gmtool.store.db import Store
from gmtool.store.hands import event_hashes
from gmtool.store.queries import check_names
from gmtool.store.scan import HAND_COLUMNS as _HAND_COLUMNS

PROGRESS_EVERY = 100  # hands between progress reports
CHUNK_ROWS = 512  # event rows read and chain-checked at a time
_HAND_ID = itemgetter(0)


@dataclass
class AuditReport:
    hands_checked: int = 0
    problems: list[dict] = field(default_factory=list)
    checkpoint: dict | None = None  # the newest signed checkpoint the log was checked against

    def add(self, problem: Problem | dict) -> None:
        self.problems.append(problem.as_json() if isinstance(problem, Problem) else problem)

    def as_json(self) -> dict:
        out = {"hands_checked": self.hands_checked, "problems": self.problems}
        if self.checkpoint is not None:
            out["checkpoint"] = self.checkpoint
        return out


def run_audit(store: Store, since: str | None = None, until: str | None = None,
              table: str | None = None, player: str | None = None,
              progress: Callable[[int], None] | None = None,
              checkpoints: list[tuple[str, Checkpoint]] = (),
              origin: str = "", seed_key: bytes | None = None) -> AuditReport:
    """Every check; with `checkpoints` (name, signed checkpoint whose signature the
    caller verified), also that the log extends each of them; with the host's
    `seed_key`, that every seed is the one it derives."""
    check_names(store, table, player)
    with store.snapshot():  # chain heads and rows as of one moment, however busy the host
        auditor = _Auditor(store, progress)
        selection = (since, until, table, player)
        for table_id in scan.audit_tables(store, *selection):
            auditor.table(table_id, selection)
        auditor.done()
        for problem in verify_balances(store, player):
            auditor.report.add(problem)
        for problem in verify_gm_log(store):
            auditor.report.add(problem)
        for problem in verify_ledger_links(store):
            auditor.report.add(problem)
        for problem in verify_grants(store):
            auditor.report.add(problem)
        for problem in verify_seeds(store, seed_key):
            auditor.report.add(problem)
        log = LogCheck(store)
        for problem in log.run({c.size for _, c in checkpoints}):
            auditor.report.add(problem)
        for problem in checkpoint_problems(log, list(checkpoints), origin):
            auditor.report.add(problem)
        if checkpoints:
            name, newest = max(checkpoints, key=lambda item: item[1].size)
            auditor.report.checkpoint = {"file": name, "size": newest.size,
                                         "records": log.frontier.size}
    return auditor.report


class _Auditor:
    def __init__(self, store: Store, progress: Callable[[int], None] | None) -> None:
        self.store = store
        self.progress = progress
        self.report = AuditReport()
        self.setups: dict[str, ReplaySetup] = {}  # by config id
        self.ledger = _ByHand(iter(()))  # the current table's ledger rows, in hand order
        self.heads = heads(store, "events:")

    def setup_of(self, config_id: str) -> ReplaySetup:
        if config_id not in self.setups:
            self.setups[config_id] = ReplaySetup.of(load_config(self.store, config_id))
        return self.setups[config_id]

    def table(self, table_id: str, selection: tuple) -> None:
        """One pass over a table's chain, handing each hand's events over as it completes."""
        hands = scan.table_hands(self.store, table_id, *selection)
        next_hand = next(hands, None)
        self.ledger = _ByHand(scan.table_ledger(self.store, table_id))
        chain = _Chain(self.store, self.report, table_id)
        current, events = None, []
        rows = scan.table_events(self.store, table_id)
        while chunk := rows.fetchmany(CHUNK_ROWS):
            chain.check(chunk)
            for hand_id, rows_of_hand in groupby(chunk, _HAND_ID):
                if hand_id != current:
                    next_hand = self._hand_done(current, events, next_hand, hands)
                    current, events = hand_id, []
                if hand_id is not None:
                    events += [(seq, type_, payload)
                               for _, seq, type_, payload, _, _ in rows_of_hand]
        next_hand = self._hand_done(current, events, next_hand, hands)
        while next_hand is not None:  # hands whose events are all gone
            self._hand_done(next_hand[0], [], next_hand, hands)
            next_hand = next(hands, None)
        for problem in check_head(table_id, chain.seq, chain.head, self.heads.get(table_id)):
            self.report.add(problem)

    def _hand_done(self, hand_id, events, next_hand, hands):
        """Match the finished hand to its row (rows come in id order) and queue its checks."""
        if hand_id is None:
            return next_hand
        while next_hand is not None and next_hand[0] < hand_id:
            self._queue(next_hand, [])  # a hand row without events before this one
            next_hand = next(hands, None)
        if next_hand is not None and next_hand[0] == hand_id:
            self._queue(next_hand, events)
            return next(hands, None)
        self.report.add(Problem("hand_missing", f"events of hand {hand_id} but no hand row",
                                hand=hand_id))
        return next_hand

    def _queue(self, row: tuple, events: list[tuple]) -> None:
        """Check a hand now, while its rows are fresh (hands come in id order)."""
        if not row[-1]:
            return  # outside the selection: its chain was checked, the hand is not
        hand = dict(zip(_HAND_COLUMNS, row))
        ledger = self.ledger.take(hand["id"])
        if events:
            _check_hand(self.report, hand, events, ledger, self.setup_of)
        else:
            self.report.add({"hand": hand["id"], "kind": "events_missing",
                             "detail": "the hand has no events"})
        self.report.hands_checked += 1
        if self.progress and self.report.hands_checked % PROGRESS_EVERY == 0:
            self.progress(self.report.hands_checked)

    def done(self) -> None:
        if self.progress:
            self.progress(self.report.hands_checked)


class _Chain:
    """Where a table's event chain stands (the last sequence number and hash checked).

    Rows come in chunks: a chunk whose sequence numbers run on without a gap and whose
    every hash follows from the hash before it (the whole check, done over the chunk's
    columns by `event_hashes`) just moves the chain on; any other chunk goes row by row,
    naming each finding. Each row's hash is computed on the previous row's hash; only
    when that fails is the row's own prev_hash read, to tell a broken link from an edit.
    """

    def __init__(self, store: Store, report: AuditReport, table_id: str) -> None:
        self.store, self.report, self.table_id = store, report, table_id
        self.seq, self.head = 0, ZERO_HASH

    def check(self, chunk: list[tuple]) -> None:
        hand_ids, seqs, types, payloads, ats, digests = zip(*chunk)
        first = self.seq + 1
        try:
            if seqs == tuple(range(first, first + len(seqs))) and event_hashes(
                    self.table_id, (self.head, *digests[:-1]), hand_ids, seqs, types, payloads,
                    ats) == list(digests):
                self.seq, self.head = seqs[-1], digests[-1]
                return
        except (TypeError, UnicodeEncodeError):
            pass  # a NULL, a number or bytes that are not UTF-8 (edited): row by row
        for *row, digest in chunk:
            self._row(tuple(row), digest)

    def _row(self, row: tuple, digest: str) -> None:
        """One row (hand_id, seq, type, payload, created_at) and its hash: every finding."""
        hand_id, seq, type_ = row[:3]
        self.seq += 1
        if seq != self.seq:
            self._problem("chain_gap", f"expected event {self.seq} (an event was deleted or "
                          "inserted)", seq, hand_id)
            self.seq = seq
        if not self._follows(self.head, row, digest):
            prev = scan.prev_hash(self.store, self.table_id, seq)
            if prev != self.head:
                self._problem("chain_link", "does not follow the event before it (deleted, "
                              "inserted or reordered)", seq, hand_id)
            if not self._follows(prev, row, digest):
                self._problem("event_hash", f"({type_}): content does not match its hash "
                              "(edited)", seq, hand_id)
        self.head = digest

    def _follows(self, prev: str, row: tuple, digest: str) -> bool:
        """Whether `row` hashes to `digest` on `prev`; a value of the wrong type in the
        record (edited) does not."""
        try:
            return event_hashes(self.table_id, (prev,), *([value] for value in row)) == [digest]
        except (TypeError, UnicodeEncodeError):
            return False

    def _problem(self, kind: str, detail: str, seq: int, hand_id) -> None:
        self.report.add(Problem(kind, f"table {self.table_id} event {seq} {detail}",
                                hand=hand_id, table=self.table_id))


class _ByHand:
    """Rows (hand_id, ...) sorted by hand id, handed out hand by hand."""

    def __init__(self, rows: Iterator[tuple]) -> None:
        self._rows = rows
        self._next = next(rows, None)

    def take(self, hand_id: int) -> list[tuple]:
        """The rest of each row of `hand_id`; rows of earlier hands are skipped."""
        out = []
        while self._next is not None and self._next[0] <= hand_id:
            if self._next[0] == hand_id:
                out.append(self._next[1:])
            self._next = next(self._rows, None)
        return out


def _check_hand(report: AuditReport, hand: dict, events: list[tuple], ledger: list[tuple],
                setup_of) -> None:
    """The checks of one hand; `events` are its (seq, type, payload) rows in chain order."""
    hand_id = hand["id"]
    if hand["outcome"] == "running":
        return  # still being played: its seed is secret; the chain check covered its events
    values = decode_payloads(events)
    result = replay_loaded(hand, events, setup_of, values)
    for problem in result.problems:
        report.add(problem)
    if values is None:  # a payload that is not JSON: replay has reported it
        values = [loads_or_none(payload) for _, _, payload in events]
    if hand["outcome"] == "voided":
        if ledger:
            report.add({"hand": hand_id, "kind": "ledger", "detail": "a voided hand moved coins"})
        return
    settlement = _last_settlement(events, values)
    if settlement is None:
        report.add({"hand": hand_id, "kind": "settlement", "detail": "a settled hand has no "
                    "settlement event"})
        return
    try:
        entries, total = [], 0
        for entry in settlement["entries"]:
            player, delta, reason = entry["player"], entry["delta"], entry["reason"]
            if type(player) is not str or type(delta) is not int or type(reason) is not str:
                raise TypeError("entries of str, int, str expected")
            entries.append((player, delta, reason))
            total += delta
    except (KeyError, TypeError):
        report.add({"hand": hand_id, "kind": "settlement", "detail": "the settlement event "
                    "is malformed (entries of player, delta and reason expected)"})
        return
    if total:
        report.add({"hand": hand_id, "kind": "zero_sum", "detail": f"the settlement sums to "
                    f"{total}, not 0"})
    training = values[0].get("training") \
        if events[0][1] == "hand_started" and isinstance(values[0], dict) else False
    expected = [] if training else [e for e in entries if e[1]]
    if ledger != expected and Counter(ledger) != Counter(expected):  # written in entry order
        missing = Counter(expected) - Counter(ledger)
        extra = Counter(ledger) - Counter(expected)
        report.add({"hand": hand_id, "kind": "ledger", "detail": "ledger rows differ from the "
                    f"settlement: missing {sorted(missing)}, unexpected {sorted(extra)}"})


def _last_settlement(events: list[tuple], values: list) -> dict | None:
    """The value of the hand's last settlement event (near the end: only below-minimum
    notices follow it), or None."""
    for index in range(len(events) - 1, -1, -1):
        if events[index][1] == "settlement" and isinstance(values[index], dict):
            return values[index]
    return None
