"""Hash chains and balances: the checks that need no engine.

Each check streams rows in id order and yields `Problem`s naming the hand (or table,
player, GM action) and the kind of problem, so a tampered database is pinpointed.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Iterator

from gmtool.canonical import ZERO_HASH, chain_hash
from gmtool.store import scan
from gmtool.store.db import Store
from gmtool.store.gm import gm_record
from gmtool.store.hands import event_hasher


@dataclass(frozen=True)
class Problem:
    """One thing wrong in the store."""

    kind: str
    detail: str
    hand: int | None = None
    table: str | None = None
    player: str | None = None
    gm_action: int | None = None

    def as_json(self) -> dict:
        return {k: v for k, v in asdict(self).items() if v is not None}


heads = scan.chain_heads


def verify_event_ids(store: Store) -> Iterator[Problem]:
    """The events' row ids are 1 .. their count. SQLite numbers an append-only table's rows
    without gaps (a rolled-back insert gives its id back), so a row id edited past the
    last or below the first shows here even where it keeps its table's order (each table
    pass checks that order)."""
    count, least, greatest = scan.event_ids(store)
    if count and (least != 1 or greatest != count):
        yield Problem("event_row_id", f"the events' row ids run {least} .. {greatest}, not "
                      f"1 .. {count}: a row id was edited, or an event deleted")


def verify_event_chains(store: Store, table_id: str | None = None) -> Iterator[Problem]:
    """Every table's chain: sequence without gaps, each hash, each link, and its recorded head."""
    recorded = heads(store, "events:")
    if table_id:
        recorded = {k: v for k, v in recorded.items() if k == table_id}
    current, expected_seq, head = None, 0, ZERO_HASH
    for row in scan.all_events(store, table_id):
        if row["table_id"] != current:
            if current is not None:
                yield from check_head(current, expected_seq - 1, head, recorded.pop(current, None))
            current, expected_seq, head = row["table_id"], 1, ZERO_HASH
            hash_of = event_hasher(current)
        where_at = f"table {current} event {row['seq']}"
        if row["seq"] != expected_seq:
            yield Problem("chain_gap", f"{where_at}: expected event {expected_seq} (an event "
                          "was deleted or inserted)", hand=row["hand_id"], table=current)
        if row["prev_hash"] != head:
            yield Problem("chain_link", f"{where_at}: does not follow the event before it "
                          "(deleted, inserted or reordered)", hand=row["hand_id"], table=current)
        digest = hash_of(row["prev_hash"], row["hand_id"], row["seq"], row["type"],
                         row["payload"], row["created_at"])
        if digest != row["hash"]:
            yield Problem("event_hash", f"{where_at} ({row['type']}): content does not match "
                          "its hash (edited)", hand=row["hand_id"], table=current)
        expected_seq, head = row["seq"] + 1, row["hash"]
    if current is not None:
        yield from check_head(current, expected_seq - 1, head, recorded.pop(current, None))
    for table, head_row in sorted(recorded.items()):
        yield from check_head(table, 0, ZERO_HASH, head_row)


def check_head(table: str, last_seq: int, last_hash: str,
                recorded: tuple[int, str] | None) -> Iterator[Problem]:
    if recorded is None:
        if last_seq:
            yield Problem("chain_head", f"table {table}: its chain has no recorded head",
                          table=table)
        return
    seq, digest = recorded
    if seq > last_seq:
        yield Problem("chain_truncated", f"table {table}: the chain ends at event {last_seq} but "
                      f"reached event {seq} (events at its end were deleted)", table=table)
    elif (seq, digest) != (last_seq, last_hash):
        yield Problem("chain_head", f"table {table}: the last event does not match the "
                      "recorded head of the chain", table=table)


def verify_chain_names(store: Store) -> Iterator[Problem]:
    """Every recorded chain head names a chain: the GM log's or a table's events'."""
    for name in scan.chain_names(store):
        if name != "gm_actions" and not (isinstance(name, str) and name.startswith("events:")):
            yield Problem("chain_head", f"a chain head is recorded for {name!r}, which is no "
                          "chain (inserted)")


def verify_balances(store: Store, player: str | None = None) -> Iterator[Problem]:
    """Every player's coins equal the sum of their ledger rows."""
    for row in scan.balances(store, player):
        if type(row["coins"]) is int and row["coins"] < 0:
            yield Problem("balance", f"{row['name']} holds {row['coins']} coins: a balance is "
                          "never negative", player=row["name"])
        if row["coins"] != row["ledger"]:
            yield Problem("balance", f"{row['name']} holds {row['coins']} coins but the ledger "
                          f"sums to {row['ledger']}", player=row["name"])


def verify_ledger_links(store: Store, from_id: int = 1) -> Iterator[Problem]:
    """Every ledger row (from id `from_id` on) points at a hand or GM action that exists: a
    coin movement whose cause was deleted (say, the last GM action with its chain head
    rewound) is found."""
    for row in scan.ledger_without_gm_action(store, from_id):
        yield Problem("gm_log_missing", f"ledger row {row['id']} ({row['player']}) was made by "
                      f"GM action {row['gm_action_id']}, which is not in the GM log",
                      player=row["player"], gm_action=row["gm_action_id"])
    for row in scan.ledger_without_hand(store, from_id):
        yield Problem("ledger_orphan", f"ledger row {row['id']} ({row['player']}) belongs to "
                      f"hand {row['hand_id']}, which does not exist", hand=row["hand_id"],
                      player=row["player"])
    for row in scan.ledger_without_cause(store, from_id):
        yield Problem("ledger_orphan", f"ledger row {row['id']} ({row['player']}) has no cause "
                      "(no hand, no GM action)", player=row["player"])


def verify_gm_log(store: Store, after: tuple[int, str] = (0, ZERO_HASH)) -> Iterator[Problem]:
    """The GM action log's chain: ids without gaps, each hash and each link; from the
    action after `after` (id, hash: where an audit from a checkpoint takes the chain up)."""
    expected, head = after[0] + 1, after[1]
    for row in scan.gm_actions(store, expected):
        if row["id"] != expected:
            yield Problem("gm_log_gap", f"GM action {expected} is missing", gm_action=expected)
        if row["prev_hash"] != head:
            yield Problem("gm_log_link", f"GM action {row['id']} does not follow the one "
                          "before it", gm_action=row["id"])
        if chain_hash(row["prev_hash"], gm_record(dict(row))) != row["hash"]:
            yield Problem("gm_log_hash", f"GM action {row['id']} does not match its hash "
                          "(edited)", gm_action=row["id"])
        head, expected = row["hash"], row["id"] + 1
    recorded = heads(store, "gm_actions").get("")
    if recorded is None and expected - 1 > after[0]:
        yield Problem("gm_log_head", f"the GM log holds actions up to {expected - 1} but no "
                      "recorded head (it was deleted or renamed)", gm_action=expected - 1)
    elif recorded is not None and recorded[0] > expected - 1:
        yield Problem("gm_log_truncated", f"GM actions {expected} to {recorded[0]} are missing "
                      "(deleted at the end of the log)", gm_action=recorded[0])
    elif recorded is not None and recorded != (expected - 1, head):
        yield Problem("gm_log_head", "the last GM action does not match the recorded head of "
                      "the log", gm_action=expected - 1)


def verify_grants(store: Store, from_ledger: int = 1, from_gm_action: int = 1
                  ) -> Iterator[Problem]:
    """Every coin that no hand moved is justified: an opening balance is the player's first
    ledger row and their only one; a GM adjustment is the amount, player and success its
    GM log row records; and every adjustment the log says was made has its row (ledger
    rows and GM actions from the ids given on)."""
    openings: set[str] = set()
    for row in scan.grants(store, from_ledger):
        where = {"player": row["player"]}
        if row["reason"] == "opening_balance":
            if row["player"] in openings or row["id"] != row["first_id"] or \
                    row["gm_action_id"] is not None:
                yield Problem("unjustified_coins", f"ledger row {row['id']}: an opening "
                              f"balance of {row['delta']} that is not {row['player']}'s first "
                              "ledger row (minted)", **where)
            openings.add(row["player"])
        elif row["reason"] == "gm_adjust" and row["gm_action_id"] is not None:
            outcome = json_or_none(row["outcome"])
            if row["action"] is not None and (
                    row["action"] != "adjust" or row["target"] != row["player"]
                    or not isinstance(outcome, dict) or outcome.get("ok") is not True
                    or outcome.get("delta") != row["delta"]):
                yield Problem("unjustified_coins", f"ledger row {row['id']}: {row['delta']} "
                              f"for {row['player']} is not the adjustment GM action "
                              f"{row['gm_action_id']} records", gm_action=row["gm_action_id"],
                              **where)
        elif row["gm_action_id"] is not None:
            yield Problem("unjustified_coins", f"ledger row {row['id']}: reason "
                          f"{row['reason']!r} is not a GM adjustment", **where)
    for row in scan.adjustments_without_row(store, from_gm_action, from_ledger):
        yield Problem("unjustified_coins", f"GM action {row['id']} adjusted {row['target']}'s "
                      "coins but no ledger row carries it (deleted)", gm_action=row["id"],
                      player=row["target"])


def verify_seeds(store: Store, key: bytes | None,
                 hands: tuple[int, list[int]] | None = None) -> Iterator[Problem]:
    """No two hands share a seed or a (table, number); with the host key, every revealed
    seed is HMAC(key, "table#number"). With `hands` (first id, other ids): only those
    hands, against every hand they share a slot with, and without the key a seed."""
    from gmtool.engine.deck import hand_seed

    seeds: dict[str, int] = {}
    numbers: dict[tuple, int] = {}
    # From a checkpoint with the key: a seed that is its slot's HMAC cannot be another
    # slot's, and slots are found through their index, so no pass over older hands' seeds.
    rows = scan.hand_seeds(store) if hands is None else \
        scan.hand_seeds_around(store, *hands, by_seed=key is None)
    for row in rows:
        slot = (row["table_id"], row["number"])
        if slot in numbers:
            yield Problem("seed", f"hands {numbers[slot]} and {row['id']} are both "
                          f"{row['table_id']} #{row['number']}", hand=row["id"])
        numbers.setdefault(slot, row["id"])
        seed = row["seed"]
        if seed is None:
            continue
        if seed in seeds:
            yield Problem("seed", f"hand {row['id']} was dealt from the seed of hand "
                          f"{seeds[seed]} (a deck dealt twice)", hand=row["id"])
        seeds.setdefault(seed, row["id"])
        if key is not None and isinstance(row["number"], int) and isinstance(
                row["table_id"], str) and seed != hand_seed(key, row["table_id"],
                                                            row["number"]).hex():
            yield Problem("seed", f"hand {row['id']}: its seed is not the host key's seed of "
                          f"{row['table_id']} #{row['number']}", hand=row["id"])


def json_or_none(text):
    """Stored JSON text parsed, or None (NULL, not text, or not JSON: edited)."""
    try:
        return json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return None
