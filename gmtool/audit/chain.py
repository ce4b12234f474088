"""Hash chains: the events' row ids and chains, the names of chain heads, the GM log.

Each check streams rows in id order and yields `Finding`s naming the hand (or table,
GM action) and the kind of problem, so a tampered database is pinpointed. Coins are
audit/coins.py's, seeds audit/seeds.py's.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from gmtool.canonical import ZERO_HASH, chain_hash
from gmtool.findings import Finding
from gmtool.store import scan
from gmtool.store.db import Store
from gmtool.store.gm import gm_record
from gmtool.store.hands import event_hasher

heads = scan.chain_heads


def verify_event_ids(store: Store) -> Iterator[Finding]:
    """The events' row ids are 1 .. their count. SQLite numbers an append-only table's rows
    without gaps (a rolled-back insert gives its id back), so a row id edited past the
    last or below the first shows here even where it keeps its table's order (each table
    pass checks that order). On PostgreSQL ids come from an identity column, which may
    skip (a rolled-back insert uses one up): there gaps are accepted, and only that order
    is checked."""
    count, least, greatest = scan.event_ids(store)
    if store.dialect != "sqlite":  # PostgreSQL's identity may skip: ids rise (each table
        return  # pass checks that, in its chain's order), nothing more is asked of them
    if count and (least != 1 or greatest != count):
        yield Finding(
            "event_row_id",
            f"the events' row ids run {least} .. {greatest}, not "
            f"1 .. {count}: a row id was edited, or an event deleted",
        )


def verify_event_chains(store: Store, table_id: str | None = None) -> Iterator[Finding]:
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
            yield Finding(
                "chain_gap",
                f"{where_at}: expected event {expected_seq} (an event was deleted or inserted)",
                hand=row["hand_id"],
                table=current,
            )
        if row["prev_hash"] != head:
            yield Finding(
                "chain_link",
                f"{where_at}: does not follow the event before it (deleted, inserted or reordered)",
                hand=row["hand_id"],
                table=current,
            )
        digest = hash_of(
            row["prev_hash"],
            row["hand_id"],
            row["seq"],
            row["type"],
            row["payload"],
            row["created_at"],
        )
        if digest != row["hash"]:
            yield Finding(
                "event_hash",
                f"{where_at} ({row['type']}): content does not match its hash (edited)",
                hand=row["hand_id"],
                table=current,
            )
        expected_seq, head = row["seq"] + 1, row["hash"]
    if current is not None:
        yield from check_head(current, expected_seq - 1, head, recorded.pop(current, None))
    for table, head_row in sorted(recorded.items()):
        yield from check_head(table, 0, ZERO_HASH, head_row)


def check_head(
    table: str, last_seq: int, last_hash: str, recorded: tuple[int, str] | None
) -> Iterator[Finding]:
    if recorded is None:
        if last_seq:
            yield Finding(
                "chain_head", f"table {table}: its chain has no recorded head", table=table
            )
        return
    seq, digest = recorded
    if seq > last_seq:
        yield Finding(
            "chain_truncated",
            f"table {table}: the chain ends at event {last_seq} but "
            f"reached event {seq} (events at its end were deleted)",
            table=table,
        )
    elif (seq, digest) != (last_seq, last_hash):
        yield Finding(
            "chain_head",
            f"table {table}: the last event does not match the recorded head of the chain",
            table=table,
        )


def verify_chain_names(store: Store) -> Iterator[Finding]:
    """Every recorded chain head names a chain: the GM log's or a table's events'."""
    for name in scan.chain_names(store):
        if name != "gm_actions" and not (isinstance(name, str) and name.startswith("events:")):
            yield Finding(
                "chain_head", f"a chain head is recorded for {name!r}, which is no chain (inserted)"
            )


def verify_gm_log(store: Store, after: tuple[int, str] = (0, ZERO_HASH)) -> Iterator[Finding]:
    """The GM action log's chain: ids without gaps, each hash and each link; from the
    action after `after` (id, hash: where an audit from a checkpoint takes the chain up)."""
    expected, head = after[0] + 1, after[1]
    for row in scan.gm_actions(store, expected):
        if row["id"] != expected:
            yield Finding("gm_log_gap", f"GM action {expected} is missing", gm_action=expected)
        if row["prev_hash"] != head:
            yield Finding(
                "gm_log_link",
                f"GM action {row['id']} does not follow the one before it",
                gm_action=row["id"],
            )
        if chain_hash(row["prev_hash"], gm_record(dict(row))) != row["hash"]:
            yield Finding(
                "gm_log_hash",
                f"GM action {row['id']} does not match its hash (edited)",
                gm_action=row["id"],
            )
        head, expected = row["hash"], row["id"] + 1
    recorded = heads(store, "gm_actions").get("")
    if recorded is None and expected - 1 > after[0]:
        yield Finding(
            "gm_log_head",
            f"the GM log holds actions up to {expected - 1} but no "
            "recorded head (it was deleted or renamed)",
            gm_action=expected - 1,
        )
    elif recorded is not None and recorded[0] > expected - 1:
        yield Finding(
            "gm_log_truncated",
            f"GM actions {expected} to {recorded[0]} are missing (deleted at the end of the log)",
            gm_action=recorded[0],
        )
    elif recorded is not None and recorded != (expected - 1, head):
        yield Finding(
            "gm_log_head",
            "the last GM action does not match the recorded head of the log",
            gm_action=expected - 1,
        )


def json_or_none(text):
    """Stored JSON text parsed, or None (NULL, not text, or not JSON: edited)."""
    try:
        return json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return None
