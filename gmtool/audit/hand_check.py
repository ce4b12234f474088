"""One hand's whole evidence, checked as the audit checks it: for `hands show`, `hands
replay` and `hands export`, where support looks first.

The same checks as `gmtool audit`, on one hand, with the audit's own code:

- its events' chain (`tables._Chain`: every link, hash, sequence number and row id), from
  the event before its first to the event after its last (an edit that recomputed the
  hand's hashes breaks the link to the next hand), and the table's recorded head when the
  hand ends the chain;
- the hand itself (`tables._check_hand`: the deck commitment, the replay through the
  engine under its recorded config, a zero-sum settlement, ledger rows that are the
  settlement's);
- its rows against their records in the evidence log (the hand's start and end, every
  ledger row of the hand and every ledger record that names it, each batch of its events
  naming the hashes they have now), each record's leaf, and each record's inclusion in the
  newest signed checkpoint of the store's witness (a record after it is a note: only as
  safe as the database until the next checkpoint);
- its seed (`seeds.verify_seeds`, the audit's seed check, for this hand and every hand
  sharing its slot or its seed), with the key the audit uses.

What it cannot see is what only a whole audit sees: the rest of the store (players'
balances and tallies, other hands, the GM log) and checkpoints older than the newest.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from gmtool.audit.chain import check_head
from gmtool.audit.seeds import verify_seeds
from gmtool.audit.tables import TableAudit, TableResult, _Chain, _check_hand
from gmtool.canonical import ZERO_HASH
from gmtool.evidence.merkle import leaf_hash, verify_inclusion
from gmtool.evidence.note import Checkpoint, Verifier
from gmtool.evidence.records import hand_body, hand_end_body, ledger_body
from gmtool.findings import Finding
from gmtool.store import hand_evidence, log_reads, scan, seed_keys
from gmtool.store.db import Store, files_beside

NO_CHECKPOINT = (
    "no signed checkpoint to check its records against (the store's host signs none, "
    "or its witness holds none)"
)
ALL_HANDS = 2**63 - 1  # a hand id above every hand: the seed check of the ids given only


@dataclass
class HandEvidence:
    """What one hand's evidence check found: `problems` (findings' JSON, as the audit
    reports them) and `notes` (what it could not check, and why)."""

    hand: int
    problems: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    checkpoint: dict | None = None  # the signed checkpoint its records were found in

    @property
    def ok(self) -> bool:
        return not self.problems

    def as_json(self) -> dict:
        out: dict = {"verified": self.ok, "problems": self.problems, "notes": self.notes}
        if self.checkpoint is not None:
            out["checkpoint"] = self.checkpoint
        return out


def check_hand(
    store: Store,
    hand_id: int,
    seed_key: bytes | None,
    checkpoint: tuple[str, Checkpoint] | None,
    host_key: Verifier | None = None,
    no_checkpoint: str = NO_CHECKPOINT,
) -> HandEvidence:
    """The whole evidence of hand `hand_id` (NoSuchRecord if there is no such hand);
    `checkpoint` is the newest signed checkpoint (name, checkpoint; its signature checked
    by the caller), `seed_key` the old host key the audit checks seeds with and
    `host_key` the checkpoint key that signs seed key registrations, as the audit's;
    `no_checkpoint` the note when there is no checkpoint (why there is none)."""
    row = scan.hand_row(store, hand_id)
    table = row["table_id"]
    result = TableResult()
    events = _chain(store, result, hand_id, table)
    if row["outcome"] != "running":
        _hand(store, result, hand_id, table, events)
    evidence = HandEvidence(hand_id)
    problems = [*result.problems]
    problems += [f.as_json() for f in _records(store, row, evidence, checkpoint, no_checkpoint)]
    problems += [
        f.as_json() for f in verify_seeds(store, seed_key, (ALL_HANDS, [hand_id]), host_key)
    ]
    registered = any(
        isinstance(r.get("id"), int) and r["id"] <= hand_id for r in seed_keys.registrations(store)
    )
    if seed_key is None and row["seed"] is not None and not registered:
        beside = files_beside(store)
        evidence.notes.append(
            "the seed was checked against the commitment only: the host key "
            + (
                f"({beside.name}.key) is not beside the store"
                if beside is not None
                else "(<db>.key, of hands dealt before seed keys were registered) is not "
                "looked for on a PostgreSQL store"
            )
        )
    seen: set[str] = set()
    for problem in problems:  # the chain and the log may both name one edit
        text = json.dumps(problem, sort_keys=True)
        if text not in seen:
            seen.add(text)
            evidence.problems.append(problem)
    return evidence


def _chain(store: Store, result: TableResult, hand_id: int, table: str) -> list[tuple]:
    """The hand's events (seq, type, payload), its chain checked from the event before it
    to the event after it."""
    first, last = log_reads.hand_seqs(store, hand_id)
    if first is None or last is None:
        result.add(Finding("events_missing", "the hand has no events", hand=hand_id))
        return []
    head = ZERO_HASH if first == 1 else log_reads.event_hash(store, table, first - 1) or ZERO_HASH
    chain = _Chain(store, result, table, first - 1, head)
    rows = hand_evidence.events_from(store, table, first, last + 1)
    if rows:
        chain.check(rows)
    if not rows or rows[-1][1] <= last:  # the hand ends its table's chain: its head
        for problem in check_head(
            table, chain.seq, chain.head, scan.chain_head(store, f"events:{table}")
        ):
            result.add(problem)
    return [(seq, type_, payload) for hand, seq, type_, payload, *_ in rows if hand == hand_id]


def _hand(store: Store, result: TableResult, hand_id: int, table: str, events: list[tuple]) -> None:
    """The audit's checks of an ended hand: commitment, replay, zero sum, ledger rows."""
    if not events:
        return
    row = next(scan.table_hands(store, table, from_hand=hand_id), None)
    hand = dict(zip(scan.HAND_COLUMNS, row)) if row is not None else None
    if hand is None or hand["id"] != hand_id:
        return
    ledger = []
    for entry in scan.table_ledger(store, table, hand_id):
        if entry[0] != hand_id:
            break
        ledger.append(tuple(entry[1:]))
    _check_hand(result, hand, events, ledger, TableAudit(store).setup_of)


def _records(
    store: Store,
    row: dict,
    evidence: HandEvidence,
    checkpoint: tuple[str, Checkpoint] | None,
    no_checkpoint: str,
) -> list[Finding]:
    """The hand's rows against its records in the log, and those records against the
    signed checkpoint."""
    hand_id = row["id"]
    problems: list[Finding] = []
    records = log_reads.records_of_hand(store, hand_id, row["table_id"])
    bodies: dict[tuple, dict] = {}
    batches: list[dict] = []
    for record in records:
        try:
            body = json.loads(record["body"])
            kind = body["kind"]
        except (ValueError, TypeError, KeyError):
            problems.append(_log_problem(hand_id, f"log record {record['index']} is not JSON"))
            continue
        if kind == "events":
            batches.append(body)
        elif (kind, body.get("id")) in bodies:  # the newer would pass for the signed one
            problems.append(
                _log_problem(
                    hand_id,
                    f"log record {record['index']} logs its {kind} record a second time",
                )
            )
        else:
            bodies[(kind, body.get("id"))] = body
    expected = [("hand", hand_body(row))]
    if row["outcome"] != "running":
        expected.append(("hand_end", hand_end_body(row)))
    ledger = hand_evidence.ledger_rows(store, hand_id)
    expected += [("ledger", ledger_body(entry)) for entry in ledger]
    for kind, body in expected:
        logged = bodies.pop((kind, body["id"]), None)
        problems += _compared(hand_id, kind, body, logged)
    for (kind, key), logged in bodies.items():  # a ledger record naming the hand, row moved
        entry = hand_evidence.ledger_row(store, key) if kind == "ledger" else None
        problems += _compared(hand_id, kind, ledger_body(entry) if entry else None, logged, key)
    problems += _batches(store, row, batches)
    problems += _signed(store, hand_id, records, evidence, checkpoint, no_checkpoint)
    return problems


def _compared(
    hand_id: int, kind: str, body: dict | None, logged: dict | None, key: object = None
) -> list[Finding]:
    what = {"hand": "its start", "hand_end": "its end", "ledger": "ledger row"}[kind]
    if kind == "ledger":
        what += f" {body['id'] if body else key}"
    if logged is None:
        return [
            Finding("not_logged", f"hand {hand_id}: {what} is not in the evidence log (inserted)",
                    hand=hand_id)
        ]  # fmt: skip
    if body is None:
        return [
            Finding("differs_from_log", f"hand {hand_id}: {what} is in the evidence log but "
                    "its row is gone or names another hand (edited or deleted)", hand=hand_id)
        ]  # fmt: skip
    if body == logged:
        return []
    changed = sorted(k for k in body.keys() | logged.keys() if body.get(k) != logged.get(k))
    return [
        Finding(
            "differs_from_log",
            f"hand {hand_id}: {what}: {', '.join(changed)} "
            f"differ{'s' if len(changed) == 1 else ''} from the evidence log (edited)",
            hand=hand_id,
        )
    ]


def _batches(store: Store, row: dict, batches: list[dict]) -> list[Finding]:
    """Each batch of events holding the hand's names the hash its last event has now; an
    ended hand's events are all logged."""
    hand_id, table = row["id"], row["table_id"]
    problems, covered = [], set()
    for batch in batches:
        last = batch.get("last")
        if not isinstance(last, int) or not isinstance(batch.get("first"), int):
            problems.append(_log_problem(hand_id, "a batch of its events is malformed"))
            continue
        covered.update(range(batch["first"], last + 1))
        if log_reads.event_hash(store, table, last) != batch.get("head"):
            problems.append(
                Finding(
                    "events_rewritten",
                    f"hand {hand_id}: table {table}'s events {batch['first']} to {last} are "
                    "not the ones the evidence log holds (edited, and their hashes recomputed)",
                    hand=hand_id,
                    table=table,
                )
            )
    first, last = log_reads.hand_seqs(store, hand_id)
    if row["outcome"] != "running" and first is not None and last is not None:
        missing = [seq for seq in range(first, last + 1) if seq not in covered]
        if missing:
            problems.append(
                Finding(
                    "not_logged",
                    f"hand {hand_id}: its events {missing[0]} to {missing[-1]} are not in the "
                    "evidence log (inserted)",
                    hand=hand_id,
                    table=table,
                )
            )
    return problems


def _signed(
    store: Store,
    hand_id: int,
    records: list[dict],
    evidence: HandEvidence,
    checkpoint: tuple[str, Checkpoint] | None,
    no_checkpoint: str,
) -> list[Finding]:
    """Each record's leaf is its body's hash, and is in the signed checkpoint."""
    problems = []
    for record in records:
        if leaf_hash(record["body"].encode("utf-8", "surrogateescape")).hex() != record["leaf"]:
            problems.append(
                _log_problem(hand_id, f"log record {record['index']} does not match its hash")
            )
    if checkpoint is None:
        evidence.notes.append(no_checkpoint)
        return problems
    name, signed = checkpoint
    evidence.checkpoint = {"file": name, "size": signed.size}
    held = log_reads.size(store)
    if held < signed.size:  # an older copy: its records cannot be held to the checkpoint
        problems.append(
            Finding(
                "checkpoint_rollback",
                f"the store holds {held:,} evidence records, but the checkpoint {name} was "
                f"signed at {signed.size:,}: this is an older copy of the store (or records "
                "were deleted); its records were not checked against the checkpoint",
                hand=hand_id,
            )
        )
        return problems
    tree = log_reads.tree(store)
    later = 0
    for record in records:
        index = record["index"]
        if index >= signed.size:
            later += 1
            continue
        try:
            path = tree.inclusion(index, signed.size)
        except (ValueError, TypeError, KeyError, IndexError):
            path = None
        leaf = leaf_hash(record["body"].encode("utf-8", "surrogateescape"))
        if path is None or not verify_inclusion(leaf, index, signed.size, path, signed.root):
            problems.append(
                Finding(
                    "checkpoint_rewrite",
                    f"hand {hand_id}: log record {index} is not the one the checkpoint "
                    f"signed at {signed.size} ({name}) holds: the log was rewritten",
                    hand=hand_id,
                )
            )
    if later:
        evidence.notes.append(
            f"{later} of its {len(records)} log records came after the newest checkpoint "
            f"(of {signed.size:,} records): they are only as safe as the database until the "
            "next one"
        )
    return problems


def _log_problem(hand_id: int, detail: str) -> Finding:
    return Finding("log_record", f"hand {hand_id}: {detail} (edited)", hand=hand_id)
