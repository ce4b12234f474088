"""One table's audit: its chain walked once, in order, and each hand checked as it completes.

A table's events are read in chain order: every link and hash is checked as the row
passes, and a hand's events (contiguous in its table's chain) go to the hand checks as
soon as its last event has arrived: the deck commitment, a replay through the engine
under the hand's recorded config, a zero-sum settlement and ledger rows that match it.
Hands, events and ledger rows are streamed, so memory stays flat however many hands the
table holds.

A table's pass needs nothing from any other table's, so an audit may run tables in
other processes (`gmtool audit --jobs`); and it may start at a sequence number (an audit
from a checkpoint): then at the first event of the hand that was running there, so that
hand is replayed whole.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import groupby
from operator import itemgetter

from gmtool.audit.chain import check_head
from gmtool.audit.coins import amount
from gmtool.audit.replay import (
    ReplaySetup,
    decode_payloads,
    loads_or_none,
    replay_loaded,
)
from gmtool.audit.tallies import add_settlement
from gmtool.canonical import ZERO_HASH
from gmtool.findings import Finding
from gmtool.store import log_reads, scan
from gmtool.store.configs import load_config
from gmtool.store.db import Store
from gmtool.store.hands import event_hashes
from gmtool.store.scan import HAND_COLUMNS as _HAND_COLUMNS

PROGRESS_EVERY = 100  # hands between progress reports
CHUNK_ROWS = 512  # event rows read and chain-checked at a time
_HAND_ID = itemgetter(0)


@dataclass
class TableResult:
    """What one table's pass found: its problems (as JSON), how many hands it checked, and
    the results and score changes its settled hands record, by (player, column)."""

    problems: list[dict] = field(default_factory=list)
    hands_checked: int = 0
    tallies: Counter = field(default_factory=Counter)
    untallied: set = field(default_factory=set)  # seated in a hand whose results are lost

    def add(self, problem: Finding | dict) -> None:
        self.problems.append(problem.as_json() if isinstance(problem, Finding) else problem)


class TableAudit:
    """Audits tables one after another on one store; `progress(n)` hears the running count
    of hands checked every `PROGRESS_EVERY` hands."""

    def __init__(self, store: Store, progress: Callable[[int], None] | None = None) -> None:
        self.store = store
        self.progress = progress
        self.hands_checked = 0  # over every table this audit has passed
        self.setups: dict[str, ReplaySetup] = {}  # by config id
        self.result = TableResult()
        self.ledger = _ByHand(iter(()))  # the current table's ledger rows, in hand order
        self.tally_until = 0  # the current table's last hand whose results are added up

    def setup_of(self, config_id: str) -> ReplaySetup:
        if config_id not in self.setups:
            self.setups[config_id] = ReplaySetup.of(load_config(self.store, config_id))
        return self.setups[config_id]

    def table(
        self, table_id: str, selection: tuple = (), start: int | None = None, tally_until: int = 0
    ) -> TableResult:
        """One pass over a table's chain (from event `start` on, if given), handing each
        hand's events over as it completes, and adding up the results of its settled hands
        up to id `tally_until`; the table's recorded chain head is read in the caller's
        snapshot, with the rows."""
        self.result = result = TableResult()
        self.tally_until = tally_until
        from_seq, from_hand = _start_of(self.store, table_id, start)
        hands = scan.table_hands(self.store, table_id, *selection, from_hand=from_hand)
        next_hand = next(hands, None)
        self.ledger = _ByHand(scan.table_ledger(self.store, table_id, from_hand))
        # Taken up after the event before `from_seq` as stored: the chain from there must
        # reach the head the log's last batch before `start` names (the log checks that).
        head = (
            ZERO_HASH
            if from_seq == 1
            else log_reads.event_hash(self.store, table_id, from_seq - 1) or ZERO_HASH
        )
        chain = _Chain(self.store, result, table_id, from_seq - 1, head)
        current, events = None, []
        rows = scan.table_events(self.store, table_id, from_seq)
        while chunk := rows.fetchmany(CHUNK_ROWS):
            chain.check(chunk)
            for hand_id, rows_of_hand in groupby(chunk, _HAND_ID):
                if hand_id != current:
                    next_hand = self._hand_done(current, events, next_hand, hands)
                    current, events = hand_id, []
                if hand_id is not None:
                    events += [
                        (seq, type_, payload) for _, seq, type_, payload, _, _, _, _ in rows_of_hand
                    ]
        next_hand = self._hand_done(current, events, next_hand, hands)
        while next_hand is not None:  # hands whose events are all gone
            self._hand_done(next_hand[0], [], next_hand, hands)
            next_hand = next(hands, None)
        recorded = scan.chain_head(self.store, f"events:{table_id}")
        for problem in check_head(table_id, chain.seq, chain.head, recorded):
            result.add(problem)
        return result

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
        self.result.add(
            Finding("hand_missing", f"events of hand {hand_id} but no hand row", hand=hand_id)
        )
        return next_hand

    def _queue(self, row: tuple, events: list[tuple]) -> None:
        """Check a hand now, while its rows are fresh (hands come in id order)."""
        if not row[-1]:
            return  # outside the selection: its chain was checked, the hand is not
        hand = dict(zip(_HAND_COLUMNS, row))
        ledger = self.ledger.take(hand["id"])
        tally = hand["id"] <= self.tally_until
        if events:
            _check_hand(self.result, hand, events, ledger, self.setup_of, tally)
        else:
            self.result.add(
                {"hand": hand["id"], "kind": "events_missing", "detail": "the hand has no events"}
            )
            if tally:
                _results_lost(self.result, hand)
        self.result.hands_checked += 1
        self.hands_checked += 1
        if self.progress and self.hands_checked % PROGRESS_EVERY == 0:
            self.progress(self.hands_checked)


def _start_of(store: Store, table_id: str, start: int | None) -> tuple[int, int]:
    """(first seq, first hand id) of a table's pass that must cover every event from
    `start` on: the hand running at `start` (its events began before) is read whole."""
    if start is None or start <= 1:
        return 1, 0
    running = log_reads.hand_before(store, table_id, start)
    if running is None:
        return start, 0
    first, last = log_reads.hand_seqs(store, running)
    if last is not None and last >= start:
        return first, running
    return start, running + 1


class _Chain:
    """Where a table's event chain stands (the last sequence number and hash checked).

    Rows come in chunks: a chunk whose sequence numbers run on without a gap, whose every
    hash follows from the hash before it (the whole check, done over the chunk's columns
    by `event_hashes`), whose stored prev_hash columns are those hashes and whose row ids
    rise with the sequence just moves the chain on; any other chunk goes row by row,
    naming each finding. Each row's hash is computed on the previous row's hash; its own
    prev_hash tells a broken link from an edit.
    """

    def __init__(
        self, store: Store, result: TableResult, table_id: str, seq: int = 0, head: str = ZERO_HASH
    ) -> None:
        self.store, self.result, self.table_id = store, result, table_id
        self.seq, self.head = seq, head
        self.row_id = 0  # the row id of the event before (ids rise with seq in a table)

    def check(self, chunk: list[tuple]) -> None:
        hand_ids, seqs, types, payloads, ats, digests, prevs, ids = zip(*chunk)
        first = self.seq + 1
        links = (self.head, *digests[:-1])
        try:
            if (
                seqs == tuple(range(first, first + len(seqs)))
                and prevs == links
                and ids[0] > self.row_id
                and list(ids) == sorted(ids)
                and event_hashes(self.table_id, links, hand_ids, seqs, types, payloads, ats)
                == list(digests)
            ):
                self.seq, self.head, self.row_id = seqs[-1], digests[-1], ids[-1]
                return
        except (TypeError, UnicodeEncodeError):
            pass  # a NULL, a number or bytes that are not UTF-8 (edited): row by row
        for *row, digest, prev, row_id in chunk:
            self._row(tuple(row), digest, prev, row_id)

    def _row(self, row: tuple, digest: str, prev: str, row_id: int) -> None:
        """One row (hand_id, seq, type, payload, created_at), its hash, stored prev_hash
        and row id: every finding."""
        hand_id, seq, type_ = row[:3]
        self.seq += 1
        if seq != self.seq:
            self._problem(
                "chain_gap",
                f"expected event {self.seq} (an event was deleted or inserted)",
                seq,
                hand_id,
            )
            self.seq = seq
        if not isinstance(row_id, int) or row_id <= self.row_id:
            self._problem(
                "event_row_id",
                f"has row id {row_id!r}, not above the event "
                f"before it ({self.row_id}): edited or reinserted",
                seq,
                hand_id,
            )
        else:
            self.row_id = row_id
        follows = self._follows(self.head, row, digest)
        if prev != self.head:
            self._problem(
                "chain_link",
                "does not follow the event before it (deleted, inserted or reordered)"
                if not follows
                else "keeps a prev_hash that is not the hash of the event before it (edited)",
                seq,
                hand_id,
            )
        if not follows and not self._follows(prev, row, digest):
            self._problem(
                "event_hash", f"({type_}): content does not match its hash (edited)", seq, hand_id
            )
        self.head = digest

    def _follows(self, prev: str, row: tuple, digest: str) -> bool:
        """Whether `row` hashes to `digest` on `prev`; a value of the wrong type in the
        record (edited) does not."""
        try:
            return event_hashes(self.table_id, (prev,), *([value] for value in row)) == [digest]
        except (TypeError, UnicodeEncodeError):
            return False

    def _problem(self, kind: str, detail: str, seq: int, hand_id) -> None:
        self.result.add(
            Finding(
                kind,
                f"table {self.table_id} event {seq} {detail}",
                hand=hand_id,
                table=self.table_id,
            )
        )


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


def _check_hand(
    report: TableResult,
    hand: dict,
    events: list[tuple],
    ledger: list[tuple],
    setup_of,
    tally: bool = False,
) -> None:
    """The checks of one hand; `events` are its (seq, type, payload) rows in chain order;
    with `tally`, its results are added up."""
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
        report.add(
            {
                "hand": hand_id,
                "kind": "settlement",
                "detail": "a settled hand has no settlement event",
            }
        )
        if tally:
            _results_lost(report, hand)
        return
    if tally:
        add_settlement(report.tallies, settlement)
    try:
        entries, total = [], 0
        for entry in settlement["entries"]:
            player, delta, reason = entry["player"], entry["delta"], entry["reason"]
            if type(player) is not str or type(delta) is not int or type(reason) is not str:
                raise TypeError("entries of str, int, str expected")
            entries.append((player, delta, reason))
            total += delta
    except (KeyError, TypeError):
        report.add(
            {
                "hand": hand_id,
                "kind": "settlement",
                "detail": "the settlement event "
                "is malformed (entries of player, delta and reason expected)",
            }
        )
        return
    if total:
        report.add(
            {
                "hand": hand_id,
                "kind": "zero_sum",
                "detail": f"the settlement sums to {amount(total)}, not 0",
            }
        )
    training = (
        values[0].get("training")
        if events[0][1] == "hand_started" and isinstance(values[0], dict)
        else False
    )
    expected = [] if training else [e for e in entries if e[1]]
    if ledger != expected and Counter(ledger) != Counter(expected):  # written in entry order
        missing = Counter(expected) - Counter(ledger)
        extra = Counter(ledger) - Counter(expected)
        report.add(
            {
                "hand": hand_id,
                "kind": "ledger",
                "detail": "ledger rows differ from the "
                f"settlement: missing {sorted(missing)}, unexpected {sorted(extra)}",
            }
        )


def _results_lost(report: TableResult, hand: dict) -> None:
    """A settled hand whose settlement cannot be read (reported): its seated players'
    tallies cannot be held to their hands, and are not (that would name them for it)."""
    seats = loads_or_none(hand["seats"]) if isinstance(hand["seats"], str) else None
    for seat in seats if isinstance(seats, list) else ():
        if isinstance(seat, dict) and isinstance(seat.get("player"), str):
            report.untallied.add(seat["player"])


def _last_settlement(events: list[tuple], values: list) -> dict | None:
    """The value of the hand's last settlement event (near the end: only below-minimum
    notices follow it), or None."""
    for index in range(len(events) - 1, -1, -1):
        if events[index][1] == "settlement" and isinstance(values[index], dict):
            return values[index]
    return None
