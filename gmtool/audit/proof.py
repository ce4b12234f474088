"""Dispute reports that prove themselves: a hand's proven records, and their check.

`hand_proof` adds to an exported report the hand's records in the evidence log (its
start and end, its ledger rows, the batches of its table's events), each with its RFC
9162 inclusion proof in a signed checkpoint, the stored events those batches cover, and
the compiled config. `verify_report` needs only the report and the host's verifier key:
it checks the checkpoint's signature, every inclusion proof, the events' hash chain up
to each batch's head, the config's id, the ledger against the settlement, and then
rebuilds the whole report (the replay through the engine included) from the proven
records alone: a changed byte anywhere makes it fail.
"""

from __future__ import annotations

import json

from gmtool.audit.dispute import parsed_row, report_from
from gmtool.audit.replay import ReplaySetup, StoredEvent, replay_loaded
from gmtool.canonical import pretty_json
from gmtool.evidence.merkle import leaf_hash, verify_inclusion
from gmtool.evidence.note import Checkpoint, NoteError, Verifier, open_checkpoint
from gmtool.rules.compile import config_id_of
from gmtool.store import log_reads
from gmtool.store.configs import load_config
from gmtool.store.db import Store
from gmtool.store.hands import event_hash
from gmtool.store.scan import hand_row


class NotCovered(Exception):
    """The hand's records are not all under the checkpoint yet."""


def hand_proof(
    store: Store, hand_id: int, note: str, checkpoint: Checkpoint, verifier: Verifier
) -> dict:
    row = hand_row(store, hand_id)
    records = log_reads.records_of_hand(store, hand_id, row["table_id"])
    last = max((r["index"] for r in records), default=-1)
    if last >= checkpoint.size:
        raise NotCovered(
            f"hand {hand_id}'s records reach record {last}; the newest checkpoint "
            f"covers {checkpoint.size}"
        )
    tree = log_reads.tree(store)
    batches = [json.loads(r["body"]) for r in records if json.loads(r["body"])["kind"] == "events"]
    events = (
        log_reads.events_between(
            store,
            row["table_id"],
            min(b["first"] for b in batches),
            max(b["last"] for b in batches),
        )
        if batches
        else []
    )
    return {
        "checkpoint": note,
        "verifier_key": verifier.text(),
        "records": [
            {
                "index": r["index"],
                "body": r["body"],
                "proof": [h.hex() for h in tree.inclusion(r["index"], checkpoint.size)],
            }
            for r in records
        ],
        "events": events,
        "config": load_config(store, row["config_id"]),
    }


def verify_report(text: str, verifier: Verifier) -> list[str]:
    """What is wrong with an exported report (empty: it proves itself)."""
    try:
        report = json.loads(text)
    except (ValueError, RecursionError):
        return ["the report is not JSON (or nested too deeply to read)"]
    if not isinstance(report, dict) or not isinstance(report.get("proof"), dict):
        return [
            "the report carries no proof (export it with `gmtool hands export HAND "
            "--format json` from a store whose host signs checkpoints)"
        ]
    problems = []
    if pretty_json(report) != text:
        problems.append("the report's text is not as gmtool wrote it (edited or reformatted)")
    try:
        problems += _verify(report, verifier)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as error:
        problems.append(f"the proof is malformed ({type(error).__name__}: {error})")
    return problems


def _verify(report: dict, verifier: Verifier) -> list[str]:
    proof = report["proof"]
    try:
        checkpoint = open_checkpoint(proof["checkpoint"], [verifier])
    except NoteError as error:
        return [f"the checkpoint: {error}"]
    problems, bodies = [], []
    if proof["verifier_key"] != verifier.text():
        problems.append(
            "the report names another verifier key than the one it is checked "
            "with (edited, or the report of another host)"
        )
    for record in proof["records"]:
        path = [bytes.fromhex(h) for h in record["proof"]]
        if not verify_inclusion(
            leaf_hash(record["body"].encode()),
            record["index"],
            checkpoint.size,
            path,
            checkpoint.root,
        ):
            problems.append(f"record {record['index']} is not in the signed log")
        bodies.append(json.loads(record["body"]))
    hand_id = report["hand"]
    start = [b for b in bodies if b["kind"] == "hand" and b["id"] == hand_id]
    end = [b for b in bodies if b["kind"] == "hand_end" and b["id"] == hand_id]
    if len(start) != 1 or len(end) != 1:
        return problems + [f"the proof does not hold hand {hand_id}'s start and end"]
    problems += _check_events(
        proof["events"], [b for b in bodies if b["kind"] == "events"], start[0]["table"]
    )
    config = proof["config"]
    if config_id_of(config) != start[0]["config"] or config.get("config_id") != start[0]["config"]:
        problems.append("the config is not the one the hand was played under")
    row = _hand_row(start[0], end[0])
    ledger = sorted(
        (b["player"], b["delta"], b["reason"])
        for b in bodies
        if b["kind"] == "ledger" and b["hand"] == hand_id
    )
    events = [e for e in proof["events"] if e["hand_id"] == hand_id]
    stored = [StoredEvent(e["seq"], e["type"], e["payload"]) for e in events]
    replay = replay_loaded(row, stored, lambda cid: ReplaySetup.of(config)).as_json()
    rebuilt = report_from(
        parsed_row(row, config["profile"]),
        [{"seq": e["seq"], "type": e["type"], **json.loads(e["payload"])} for e in events],
        replay,
    )
    settlement = rebuilt.get("settlement") or {}
    expected = sorted(
        (e["player"], e["delta"], e["reason"]) for e in settlement.get("entries", []) if e["delta"]
    )
    if (
        row["outcome"] == "settled"
        and not config.get("training")
        and ledger != expected
        and any(delta for _, delta, _ in ledger)
    ):
        problems.append("the ledger rows are not the settlement's")
    shown = {k: v for k, v in report.items() if k != "proof"}
    if rebuilt != shown:
        changed = sorted(k for k in set(rebuilt) | set(shown) if rebuilt.get(k) != shown.get(k))
        problems.append(
            f"the report's {', '.join(changed)} differ from what the proven records say"
        )
    return problems


def _check_events(events: list[dict], batches: list[dict], table: str) -> list[str]:
    """Each event's hash from its content and the one before it; each batch's head."""
    problems = []
    by_seq = {e["seq"]: e for e in events}
    previous = None
    for event in events:
        if event["table_id"] != table:
            problems.append(f"event {event['seq']} is of another table")
        if previous is not None and (
            event["seq"] != previous["seq"] + 1 or event["prev_hash"] != previous["hash"]
        ):
            problems.append(f"event {event['seq']} does not follow event {previous['seq']}")
        digest = event_hash(
            event["prev_hash"],
            event["table_id"],
            event["hand_id"],
            event["seq"],
            event["type"],
            event["payload"],
            event["created_at"],
        )
        if digest != event["hash"]:
            problems.append(f"event {event['seq']} does not match its hash")
        previous = event
    covered = set()
    for batch in batches:
        last = by_seq.get(batch["last"])
        if batch["table"] != table or last is None or last["hash"] != batch["head"]:
            problems.append(
                f"events {batch['first']} to {batch['last']} are not the ones the log holds"
            )
        covered.update(range(batch["first"], batch["last"] + 1))
    if set(by_seq) != covered:
        problems.append("the report's events are not exactly those of the proven batches")
    return problems


def _hand_row(start: dict, end: dict) -> dict:
    """The hands row the two records describe."""
    return {
        "id": start["id"],
        "table_id": start["table"],
        "number": start["number"],
        "config_id": start["config"],
        "tier": start["tier"],
        "banker": start["banker"],
        "ante": start["ante"],
        "seats": start["seats"],
        "commitment": start["commitment"],
        "algorithm": start["algorithm"],
        "started_at": start["at"],
        "ended_at": end["at"],
        "outcome": end["outcome"],
        "winners": end["winners"],
        "seed": end["seed"],
    }
