"""`gmtool audit`: every check on every selected hand, streamed in batches.

For each hand: its events' place in the table's hash chain, the deck commitment, a
replay through the engine under the hand's recorded config, a zero-sum settlement and
ledger rows that match it. Then every (selected) player's coins against their ledger,
and the GM action log's chain. Memory stays flat: hands are read a batch at a time.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Iterator

from gmtool.audit.chain import Problem, verify_balances, verify_event_chains, verify_gm_log
from gmtool.audit.replay import replay_loaded
from gmtool.store.configs import load_config
from gmtool.store.db import Store

HAND_BATCH = 500


@dataclass
class AuditReport:
    hands_checked: int = 0
    problems: list[dict] = field(default_factory=list)

    def add(self, problem: Problem | dict) -> None:
        self.problems.append(problem.as_json() if isinstance(problem, Problem) else problem)

    def as_json(self) -> dict:
        return {"hands_checked": self.hands_checked, "problems": self.problems}


def _hand_filter(since: str | None, until: str | None, table: str | None,
                 player: str | None) -> tuple[str, list]:
    clauses, params = [], []
    if since:
        clauses.append("started_at >= ?")
        params.append(since)
    if until:
        clauses.append("started_at < ?")
        params.append(until)
    if table:
        clauses.append("table_id = ?")
        params.append(table)
    if player:
        clauses.append("EXISTS (SELECT 1 FROM json_each(hands.seats) WHERE "
                       "json_extract(value, '$.player') = ?)")
        params.append(player)
    return (" WHERE " + " AND ".join(clauses)) if clauses else "", params


def count_hands(store: Store, since=None, until=None, table=None, player=None) -> int:
    where, params = _hand_filter(since, until, table, player)
    return store.one(f"SELECT COUNT(*) FROM hands{where}", params)[0]


def _batches(store: Store, where: str, params: list) -> Iterator[list[dict]]:
    last = 0
    while True:
        rows = store.all(f"SELECT * FROM hands{where}{' AND' if where else ' WHERE'} id > ? "
                         f"ORDER BY id LIMIT {HAND_BATCH}", [*params, last])
        if not rows:
            return
        yield [dict(r) for r in rows]
        last = rows[-1]["id"]


def run_audit(store: Store, since: str | None = None, until: str | None = None,
              table: str | None = None, player: str | None = None,
              progress: Callable[[int], None] | None = None) -> AuditReport:
    report = AuditReport()
    where, params = _hand_filter(since, until, table, player)
    configs: dict[str, dict] = {}
    rankings: dict = {}

    def config_of(config_id: str) -> dict:
        if config_id not in configs:
            configs[config_id] = load_config(store, config_id)
        return configs[config_id]

    tables: set[str] = set()
    for batch in _batches(store, where, params):
        events = _events_of(store, [h["id"] for h in batch])
        ledger = _ledger_of(store, [h["id"] for h in batch])
        for hand in batch:
            tables.add(hand["table_id"])
            _check_hand(report, hand, events.get(hand["id"], []), ledger.get(hand["id"], []),
                        config_of, rankings)
            report.hands_checked += 1
        if progress:
            progress(report.hands_checked)
    chain_tables = [table] if table else sorted(tables) if (since or until or player) else [None]
    for table_id in chain_tables:
        for problem in verify_event_chains(store, table_id):
            report.add(problem)
    for problem in verify_balances(store, player):
        report.add(problem)
    for problem in verify_gm_log(store):
        report.add(problem)
    return report


def _events_of(store: Store, hand_ids: list[int]) -> dict[int, list[dict]]:
    marks = ",".join("?" * len(hand_ids))
    out: dict[int, list[dict]] = {}
    for row in store.all(f"SELECT hand_id, seq, type, payload FROM events WHERE hand_id IN "
                         f"({marks}) ORDER BY hand_id, seq", hand_ids):
        out.setdefault(row["hand_id"], []).append(
            {"seq": row["seq"], "type": row["type"], "payload": row["payload"]})
    return out


def _ledger_of(store: Store, hand_ids: list[int]) -> dict[int, list[tuple]]:
    marks = ",".join("?" * len(hand_ids))
    out: dict[int, list[tuple]] = {}
    for row in store.all(f"SELECT hand_id, player, delta, reason FROM ledger WHERE hand_id IN "
                         f"({marks})", hand_ids):
        out.setdefault(row["hand_id"], []).append((row["player"], row["delta"], row["reason"]))
    return out


def _check_hand(report: AuditReport, hand: dict, events: list[dict], ledger: list[tuple],
                config_of, rankings: dict) -> None:
    hand_id = hand["id"]
    if hand["outcome"] == "running":
        return  # still being played: its seed is secret; the chain check covers its events
    result = replay_loaded(hand, events, config_of, rankings)
    for problem in result.problems:
        report.add(problem)
    settlement = next((json.loads(e["payload"]) for e in events if e["type"] == "settlement"),
                      None)
    if hand["outcome"] == "voided":
        if ledger:
            report.add({"hand": hand_id, "kind": "ledger", "detail": "a voided hand moved coins"})
        return
    if settlement is None:
        report.add({"hand": hand_id, "kind": "settlement", "detail": "a settled hand has no "
                    "settlement event"})
        return
    total = sum(entry["delta"] for entry in settlement["entries"])
    if total:
        report.add({"hand": hand_id, "kind": "zero_sum", "detail": f"the settlement sums to "
                    f"{total}, not 0"})
    started = next((json.loads(e["payload"]) for e in events if e["type"] == "hand_started"), {})
    expected = Counter() if started.get("training") else Counter(
        (e["player"], e["delta"], e["reason"]) for e in settlement["entries"] if e["delta"])
    if Counter(ledger) != expected:
        missing = expected - Counter(ledger)
        extra = Counter(ledger) - expected
        report.add({"hand": hand_id, "kind": "ledger", "detail": "ledger rows differ from the "
                    f"settlement: missing {sorted(missing)}, unexpected {sorted(extra)}"})
