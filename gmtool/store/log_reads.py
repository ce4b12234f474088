"""The audit's reads of the evidence log (store/log_append.py writes it).

The whole log (`records`, `logged_rows`: every row a kind of record logs, as its body),
proofs (`tree`, `records_of_hand`) and the append-only guards; and for an audit from a
signed checkpoint, the log's tree at the checkpoint's size and the rows written after
it, found through the indexes (no scan of what came before).

Rows are written in the same transaction as their log records and their ids grow with
the log (nothing is ever deleted), so "written after record N" is "id from the first id
a record from N on names". A table's events after N are those from the first sequence
number its first batch from N on logs.

On PostgreSQL (issue 26) the same reads run with the SQL `store/audit_dialect.py` names
per dialect; the big ones stream through server-side cursors. Where SQLite's SQL reads
inside JSON with no PostgreSQL twin that gives the same values (`json_extract`'s types,
`json_object`'s text), PostgreSQL hands the rows over and Python reads them as SQLite
would (`_json_at`; `rows_unlike_records` compares each row's record text itself).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from gmtool.evidence.merkle import Tree, frontier_positions
from gmtool.evidence.records import (
    config_body,
    deployment_body,
    gm_action_body,
    gm_request_body,
    gm_user_body,
    hand_body,
    hand_end_body,
    ledger_body,
    player_body,
    record_text,
    witness_body,
)
from gmtool.store.audit_dialect import json_values, statement, stream
from gmtool.store.dialect import SQLITE
from gmtool.store.dialect import statement as dialect_statement

if TYPE_CHECKING:
    from gmtool.store.db import Store

# The kinds whose rows have growing integer ids, and the table and body of each.
RANGED = {
    "hand": ("hands", hand_body),
    "ledger": ("ledger", ledger_body),
    "gm_action": ("gm_actions", gm_action_body),
}


def size(store: Store) -> int:
    """How many records the log table holds (its last index + 1)."""
    last = store.one("SELECT MAX(idx) FROM log")[0]
    return 0 if last is None else last + 1


def node_levels(store: Store, start: int, top: int = 62) -> list[tuple]:
    """(level, count, least idx, greatest idx) of the stored tree nodes made after the
    log's first `start` records (those whose idx is at least `start >> level`), of every
    level there is. From a later start, a seek per level 1..`top` and one for the levels
    outside them (text sorts above numbers), not a pass over every node: a level stored
    as a fraction within them is then seen only from the start."""
    if not start:
        return store.conn.execute(
            "SELECT level, COUNT(*), MIN(idx), MAX(idx) FROM log_nodes "
            "GROUP BY level ORDER BY level"
        ).fetchall()
    found = [
        (
            level,
            *store.conn.execute(
                "SELECT COUNT(*), MIN(idx), MAX(idx) FROM log_nodes WHERE level = ? AND idx >= ?",
                (level, start >> level),
            ).fetchone(),
        )
        for level in range(1, top + 1)
    ]
    outside = [
        row
        for where in ("level < 1", "level > ?")
        for row in store.conn.execute(
            f"SELECT level, COUNT(*), MIN(idx), MAX(idx) FROM log_nodes WHERE {where} GROUP BY "
            "level",
            (top,) if "?" in where else (),
        )
    ]  # (two seeks: an OR would read them all)
    return [row for row in found if row[1]] + outside


def node_hashes(store: Store, level: int, first: int) -> Iterator[tuple]:
    """(hash,) of the stored tree nodes of `level` from idx `first` on, in idx order."""
    return stream(  # type: ignore[no-any-return]
        store,
        "SELECT hash FROM log_nodes WHERE level = ? AND idx >= ? ORDER BY idx",
        (level, first),
    )


def frontier_at(store: Store, tree_size: int) -> list[bytes | None]:
    """The stored roots of the complete subtrees of the log's first `tree_size` records
    (`frontier_positions`), each None where the store has none."""
    nodes = []
    for level, index in frontier_positions(tree_size):
        row = (
            store.one("SELECT leaf FROM log WHERE idx = ?", (index,))
            if level == 0
            else store.one("SELECT hash FROM log_nodes WHERE level = ? AND idx = ?", (level, index))
        )
        nodes.append(bytes(row[0]) if row is not None and isinstance(row[0], bytes) else None)
    return nodes


def last_batch_before(store: Store, table_id: str, lo: int) -> tuple[int, str] | None:
    """(last seq, logged head) of the table's last batch of events logged before record
    `lo`, or None."""
    if store.dialect != SQLITE:
        row = store.one(
            "SELECT body FROM log WHERE kind = 'events' AND tkey = ? AND idx < ? ORDER BY "
            "nkey DESC LIMIT 1",
            (table_id, lo),
        )
        return (_json_at(row[0], "last"), _json_at(row[0], "head")) if row else None
    row = store.one(
        "SELECT json_extract(CASE WHEN json_valid(body) THEN body END, '$.last'), "
        "json_extract(CASE WHEN json_valid(body) THEN body END, '$.head') FROM log "
        "WHERE kind = 'events' AND tkey = ? AND idx < ? ORDER BY nkey DESC LIMIT 1",
        (table_id, lo),
    )
    return (row[0], row[1]) if row is not None else None


def _json_at(body: object, key: str) -> object:
    """`json_extract(body, '$.key')` as SQLite gives it, of a body PostgreSQL handed over:
    the value of a JSON object's key (true and false as 1 and 0, an array or object as its
    JSON), None for anything else."""
    try:
        value = json.loads(body) if isinstance(body, str) else None
    except ValueError:
        return None
    if not isinstance(value, dict):
        return None
    found = value.get(key)
    if isinstance(found, bool):
        return int(found)
    if isinstance(found, (dict, list)):
        return json.dumps(found, separators=(",", ":"), ensure_ascii=False)
    return found


def batch_hand(store: Store, table_id: str, first: int, last: int) -> int | None:
    """The hand of a batch's events (or of the event after it), to name in a finding."""
    row = store.one(
        "SELECT COALESCE((SELECT MAX(hand_id) FROM events WHERE table_id = ? AND "
        "seq BETWEEN ? AND ?), (SELECT hand_id FROM events WHERE table_id = ? AND "
        "seq > ? ORDER BY seq LIMIT 1))",
        (table_id, first, last, table_id, last),
    )
    return row[0]


def event_hash(store: Store, table_id: str, seq: int) -> str | None:
    row = store.one("SELECT hash FROM events WHERE table_id = ? AND seq = ?", (table_id, seq))
    return row[0] if row else None


def last_seq(store: Store, table_id: str) -> int:
    return store.one("SELECT MAX(seq) FROM events WHERE table_id = ?", (table_id,))[0] or 0


def event_tables(store: Store) -> list[str]:
    """Every table that has events, found by stepping through the index on (table, seq)
    one table at a time (a seek each, not a pass over every event)."""
    tables, table = [], store.one("SELECT MIN(table_id) FROM events")[0]
    while table is not None:
        tables.append(table)
        table = store.one("SELECT MIN(table_id) FROM events WHERE table_id > ?", (table,))[0]
    return tables


def last_seqs(store: Store) -> dict[str, int]:
    """Each table's last event (a seek per table)."""
    return {table: last_seq(store, table) for table in event_tables(store)}


def hand_before(store: Store, table_id: str, seq: int) -> int | None:
    """The hand of the table's last event before `seq` that belongs to a hand."""
    row = store.one(
        "SELECT hand_id FROM events WHERE table_id = ? AND seq < ? AND hand_id IS "
        "NOT NULL ORDER BY seq DESC LIMIT 1",
        (table_id, seq),
    )
    return row[0] if row else None


def hand_seqs(store: Store, hand_id: int) -> tuple[int | None, int | None]:
    """(first, last) seq of a hand's events."""
    row = store.one("SELECT MIN(seq), MAX(seq) FROM events WHERE hand_id = ?", (hand_id,))
    return row[0], row[1]


def last_hand_before(store: Store, table_id: str, hand_id: int) -> int | None:
    """The table's last hand with an id below `hand_id` (the one that may have been running
    when the hands from `hand_id` on began)."""
    row = store.one(
        "SELECT id FROM hands WHERE table_id = ? AND id < ? ORDER BY number DESC LIMIT 1",
        (table_id, hand_id),
    )
    return row[0] if row else None


def max_logged_id(store: Store, kind: str) -> int:
    """The largest row id any record of `kind` names (0 if none)."""
    return store.one("SELECT MAX(nkey) FROM log WHERE kind = ? AND tkey IS NULL", (kind,))[0] or 0


def record_index(store: Store, kind: str, key: int) -> int | None:
    """The index of the last record of `kind` naming row `key`, or None."""
    row = store.one(
        "SELECT MAX(idx) FROM log WHERE kind = ? AND tkey IS NULL AND nkey = ?", (kind, key)
    )
    return row[0] if row else None


def logged_body(store: Store, kind: str, key: int) -> str | None:
    """The body of the last record of `kind` naming row `key`, or None."""
    row = store.one(
        "SELECT body FROM log WHERE kind = ? AND tkey IS NULL AND nkey = ? ORDER "
        "BY idx DESC LIMIT 1",
        (kind, key),
    )
    return row[0] if row else None


def records_of_kinds(store: Store, kinds: Iterable[str]) -> Iterator[tuple[int, str, str]]:
    """(idx, kind, body) of every record of these kinds, in log order (through the index
    on kind: for the small tables an incremental audit still checks whole)."""
    kinds = list(kinds)
    return store.conn.execute(
        f"SELECT idx, kind, body FROM log WHERE kind IN "
        f"({', '.join('?' * len(kinds))}) ORDER BY idx",
        kinds,
    )


def rows_from(store: Store, kind: str, first_id: int) -> Iterator[dict]:
    """The bodies of the rows of a `RANGED` kind with ids from `first_id` on, as they are now."""
    table, body_of = RANGED[kind]
    cursor = store.conn.execute(f"SELECT * FROM {table} WHERE id >= ? ORDER BY id", (first_id,))
    names = [c[0] for c in cursor.description]
    for row in cursor:
        yield body_of(dict(zip(names, row)))


def ended_hands(store: Store, first_id: int, ids: Iterable[int]) -> Iterator[dict]:
    """`hand_end` bodies of the ended hands with ids from `first_id` on or among `ids`."""
    cursor = store.conn.execute(
        f"SELECT * FROM hands WHERE id IN ({json_values(store, 'bigint')}) AND id < ? AND "
        "outcome != 'running' UNION ALL SELECT * FROM hands WHERE id >= ? AND outcome != "
        "'running' ORDER BY id",
        (json.dumps(sorted(set(ids))), first_id, first_id),
    )
    names = [c[0] for c in cursor.description]
    for row in cursor:
        yield hand_end_body(dict(zip(names, row)))


def hands_after(store: Store, lo: int) -> int:
    """How many hands began from log record `lo` on (for a progress bar)."""
    return store.one(
        "SELECT COUNT(*) FROM hands WHERE id >= (SELECT MIN(nkey) FROM log WHERE "
        "idx >= ? AND kind = 'hand')",
        (lo,),
    )[0]


# ---- the whole log, proofs and guards ------------------------------------------------


def records(store: Store, lo: int, streamed: Iterable[str] = ()) -> Iterator:
    """Log rows (idx, kind, tkey, nkey, body, leaf, agrees, before) in order from `lo`.

    `agrees`, of the records of the `streamed` kinds (by their kind column; NULL for the
    others): 1 when SQLite sees their index columns agree with their body (an object's
    JSON of that kind, its key of the same value and type), else 0 (an edit, or 1.0 for
    1: the caller reads those bodies itself). `before`, of batches of events: the hash
    the event before the batch's first has now (while batches follow on, the previous
    batch's last: its head is checked on this row, with no JSON parsed in SQL)."""
    kinds = sorted(set(streamed))
    if store.dialect != SQLITE:
        return _records_pg(store, lo, set(kinds))
    named = ", ".join(f"'{kind}'" for kind in NAMED_KINDS)
    key = f"CASE WHEN l.kind IN ({named}) THEN l.tkey ELSE l.nkey END"
    other = f"CASE WHEN l.kind IN ({named}) THEN l.nkey ELSE l.tkey END"
    path = f"CASE WHEN l.kind IN ({named}) AND l.kind != 'config' THEN '$.name' ELSE '$.id' END"
    # One JSON text compared: the body's kind and key, as written, against the columns as
    # JSON (so 1.0, "1" or a missing key do not agree with 1); json_valid first, and in a
    # CASE, as SQLite evaluates both sides of an AND and json_extract stops on bad JSON.
    agrees = (
        f"CASE WHEN l.kind IN ({', '.join('?' * len(kinds)) or 'NULL'}) THEN CASE WHEN "
        f"typeof(l.kind) = 'text' AND typeof({key}) IN ('integer', 'real', 'text') AND "
        f"{other} IS NULL AND json_valid(l.body) THEN json_extract(l.body, '$.kind', {path}) "
        f"= json_array(l.kind, {key}) ELSE 0 END END"
    )
    cursor = store.conn.cursor()
    cursor.row_factory = None  # plain tuples: a row a record, and the log grows with play
    return cursor.execute(
        f"SELECT l.idx, l.kind, l.tkey, l.nkey, l.body, l.leaf, {agrees}, e.hash FROM log l "
        "LEFT JOIN events e ON l.kind = 'events' AND e.table_id = l.tkey AND e.seq = "
        "l.nkey - 1 WHERE l.idx >= ? ORDER BY l.idx",
        [*kinds, lo],
    )


def _records_pg(store: Store, lo: int, streamed: set[str]) -> Iterator[tuple]:
    """`records` on PostgreSQL: the same rows, `agrees` found here from each body (one
    JSON parse per record of a streamed kind; the key columns' types are the schema's)."""
    rows = stream(
        store,
        "SELECT l.idx, l.kind, l.tkey, l.nkey, l.body, l.leaf, e.hash FROM log l LEFT JOIN "
        "events e ON l.kind = 'events' AND e.table_id = l.tkey AND e.seq = l.nkey - 1 "
        "WHERE l.idx >= ? ORDER BY l.idx",
        (lo,),
    )
    for idx, kind, tkey, nkey, body, leaf, before in rows:
        agrees = _agrees(kind, tkey, nkey, body) if kind in streamed else None
        yield idx, kind, tkey, nkey, body, leaf, agrees, before


_MISSING = object()


def _agrees(kind: str, tkey: str | None, nkey: int | None, body: str) -> int:
    """1 when a record's body is an object's JSON whose kind and key are its index
    columns' (the same value of the same type: 1.0 or "1" is not 1), else 0: what
    `records` asks SQLite."""
    named = kind in NAMED_KINDS
    key, other = (tkey, nkey) if named else (nkey, tkey)
    if key is None or other is not None:
        return 0
    try:
        value = json.loads(body)
    except ValueError:
        return 0
    if not isinstance(value, dict):
        return 0
    found = value.get("name" if named and kind != "config" else "id", _MISSING)
    said = value.get("kind", _MISSING)
    return int(type(said) is str and said == kind and type(found) is type(key) and found == key)


def leaves(store: Store, lo: int, hi: int) -> list[bytes]:
    return [
        bytes(r[0])
        for r in store.conn.execute(
            "SELECT leaf FROM log WHERE idx >= ? AND idx < ? ORDER BY idx", (lo, hi)
        )
    ]


def tree(store: Store) -> Tree:
    """Proofs over the stored log, from its stored nodes."""

    def node(level: int, index: int) -> bytes | None:
        row = store.one("SELECT hash FROM log_nodes WHERE level = ? AND idx = ?", (level, index))
        return bytes(row[0]) if row else None

    return Tree(lambda lo, hi: leaves(store, lo, hi), node)


def records_of_hand(store: Store, hand_id: int, table_id: str) -> list[dict]:
    """The log records of one hand: its start, its end, its ledger rows and the batches of
    its table's events that hold its events. On PostgreSQL its SQL finds a superset and
    `_of_hand` keeps what SQLite's `json_extract` keeps (store/dialect.py)."""
    first, last = store.one("SELECT MIN(seq), MAX(seq) FROM events WHERE hand_id = ?", (hand_id,))
    first, last = first or 0, last or 0
    sql = dialect_statement(store, "log_reads.records_of_hand")
    if store.dialect == SQLITE:
        rows = store.all(sql, (hand_id, hand_id, table_id, last, first))
    else:
        found = store.all(sql, (hand_id, hand_id, hand_id, table_id, last, first, first))
        rows = [r for r in found if _of_hand(r["kind"], r["body"], hand_id, first)]
    return [{"index": r["idx"], "body": r["body"], "leaf": bytes(r["leaf"]).hex()} for r in rows]


def _of_hand(kind: str, body: str, hand_id: int, first: int) -> bool:
    """Whether SQLite's `records_of_hand` keeps a record PostgreSQL's found: a ledger
    record whose `hand` is the hand's id (a number equal to it; true is 1, text never
    equals a number), a batch whose `last` is at least the hand's first seq (a number,
    or text: SQLite orders text above every number)."""
    if kind == "ledger":
        value = _json_at(body, "hand")
        return isinstance(value, (int, float)) and value == hand_id
    if kind == "events":
        value = _json_at(body, "last")
        return isinstance(value, str) or (isinstance(value, (int, float)) and value >= first)
    return True


# Each logged table, the body function of its rows, and how a row is named in findings.
LOGGED_ROWS = {  # in the order of their records' keys (name or id), as SQLite orders them
    "hand": ("SELECT * FROM hands ORDER BY id", hand_body),
    "hand_end": ("SELECT * FROM hands WHERE outcome != 'running' ORDER BY id", hand_end_body),
    "ledger": ("SELECT * FROM ledger ORDER BY id", ledger_body),
    "gm_action": ("SELECT id, hash FROM gm_actions ORDER BY id", gm_action_body),
    "config": (
        "SELECT config_id, profile_text, created_at FROM configs ORDER BY config_id",
        config_body,
    ),
    "deployment": ("SELECT * FROM deployments ORDER BY id", deployment_body),
    "gm_user": ("SELECT * FROM gm_users ORDER BY name", gm_user_body),
    "gm_request": ("SELECT * FROM gm_commands ORDER BY id", gm_request_body),
    "player": ("SELECT * FROM players ORDER BY name", player_body),
    "witness": ("SELECT * FROM witnesses ORDER BY id", witness_body),
}
NAMED_KINDS = ("config", "gm_user", "player")  # keyed by name (tkey), the others by id


# The kinds whose rows grow with play, as the audit compares them in SQLite: the rows a
# kind logs, the column of their key, and their record as SQLite rebuilds it from a row
# `r`: the text `gmtool.evidence.records` makes (keys sorted; tests/test_record_format.py
# holds the two equal on the golden rows).
STREAMED = {
    "hand": (  # (`host` only where the row names one, as `hand_body`)
        "SELECT * FROM hands",
        "id",
        "CASE WHEN r.host IS NULL THEN json_object('algorithm', r.algorithm, 'ante', "
        "r.ante, 'at', r.started_at, 'banker', r.banker, 'commitment', r.commitment, "
        "'config', r.config_id, 'id', r.id, 'kind', 'hand', 'number', r.number, 'seats', "
        "r.seats, 'table', r.table_id, 'tier', r.tier) ELSE json_object('algorithm', "
        "r.algorithm, 'ante', r.ante, 'at', r.started_at, 'banker', r.banker, 'commitment', "
        "r.commitment, 'config', r.config_id, 'host', r.host, 'id', r.id, 'kind', 'hand', "
        "'number', r.number, 'seats', r.seats, 'table', r.table_id, 'tier', r.tier) END",
    ),
    "hand_end": (
        "SELECT * FROM hands WHERE outcome != 'running'",
        "id",
        "json_object('at', r.ended_at, 'id', r.id, 'kind', 'hand_end', 'outcome', "
        "r.outcome, 'seed', r.seed, 'winners', r.winners)",
    ),
    "ledger": (
        "SELECT * FROM ledger",
        "id",
        "json_object('at', r.created_at, 'delta', r.delta, 'gm_action', "
        "r.gm_action_id, 'hand', r.hand_id, 'id', r.id, 'kind', 'ledger', 'player', "
        "r.player, 'reason', r.reason)",
    ),
    "gm_action": (
        "SELECT id, hash FROM gm_actions",
        "id",
        "json_object('hash', r.hash, 'id', r.id, 'kind', 'gm_action')",
    ),
    "gm_request": (
        "SELECT * FROM gm_commands",
        "id",
        "json_object('at', r.issued_at, 'by', r.issued_by, 'command', r.kind, "
        "'id', r.id, 'kind', 'gm_request', 'player', r.player, 'reason', "
        "r.reason, 'request', r.request, 'table', r.table_id)",
    ),
    "player": (
        "SELECT * FROM players",
        "name",
        "json_object('at', r.created_at, 'kind', 'player', 'name', r.name, 'type', r.kind)",
    ),
}


def _key_columns(kind: str) -> tuple[str, str]:
    """(the log column of a kind's key, the one that must be NULL)."""
    return ("tkey", "nkey") if kind in NAMED_KINDS else ("nkey", "tkey")


def _proper(store: Store, kind: str, start: int, suspects: str) -> tuple[str, tuple]:
    """The records of `kind` whose index says so, from `start` on, without those of the
    JSON list `suspects`: the text of a WHERE clause and its parameters."""
    _, other = _key_columns(kind)
    outside, params = _not_in("idx", suspects, json_values(store, "bigint"))
    return f"kind = '{kind}' AND {other} IS NULL AND idx >= ?{outside}", (start, *params)


def _keys(store: Store, kind: str) -> str:
    """The JSON list `?` of a kind's keys as a subquery (names, or ids)."""
    return json_values(store, "text" if kind in NAMED_KINDS else "bigint")


def _not_in(column: str, values: str, subquery: str) -> tuple[str, tuple]:
    """` AND column NOT IN (subquery)` of the JSON list `values` (the subquery's `?`) and
    its parameters; nothing for an empty list (NOT IN no value holds for every value,
    NULL too), so the audit of a store with nothing to leave out probes no list."""
    if values == "[]":
        return "", ()
    return f" AND {column} NOT IN ({subquery})", (values,)


def rows_unlike_records(
    store: Store, kind: str, start: int, suspects: str, keys: str
) -> Iterator[tuple[dict, str | None]]:
    """(row, the body of its last record or None) of every row of a streamed `kind` whose
    last record (by index) is missing or is not, byte for byte, the record SQLite rebuilds
    from it; rows keyed in the JSON list `keys` are left to the caller. In key order."""
    rows, column, rebuilt = STREAMED[kind]
    key, _ = _key_columns(kind)
    if store.dialect != SQLITE:
        yield from _rows_unlike_records_pg(store, kind, start, suspects, keys)
        return
    # Each row's last record by one seek down the log's index (kind, key): no table of
    # every key's last record made and indexed first (SQLite's plan for a join on a
    # grouped subquery).
    proper, params = _proper(store, kind, start, suspects)
    outside, held = _not_in(f"r.{column}", keys, "SELECT value FROM json_each(?)")
    cursor = store.conn.execute(
        f"SELECT r.*, l.body AS _body FROM ({rows}) r LEFT JOIN log l ON l.idx = (SELECT "
        f"MAX(idx) FROM log WHERE {proper} AND {key} = r.{column}) WHERE TRUE{outside} AND "
        f"(l.idx IS NULL OR l.body IS NOT {rebuilt}) ORDER BY r.{column}",
        (*params, *held),
    )
    names = [c[0] for c in cursor.description]
    for values in cursor:
        row = dict(zip(names, values))
        yield row, row.pop("_body")


def _rows_unlike_records_pg(
    store: Store, kind: str, start: int, suspects: str, keys: str
) -> Iterator[tuple[dict, str | None]]:
    """`rows_unlike_records` on PostgreSQL: each row with its last record, streamed, and
    the record's text compared here with the one `gmtool.evidence.records` makes of the
    row (SQLite rebuilds it in SQL; PostgreSQL's JSON functions write other text)."""
    rows, column, _ = STREAMED[kind]
    key, _ = _key_columns(kind)
    body_of = LOGGED_ROWS[kind][1]
    proper, params = _proper(store, kind, start, suspects)
    outside, held = _not_in(f"r.{column}", keys, _keys(store, kind))
    cursor = stream(
        store,
        f"SELECT r.*, l.body AS _body FROM ({rows}) r LEFT JOIN log l ON l.idx = (SELECT "
        f"MAX(idx) FROM log WHERE {proper} AND {key} = r.{column}) WHERE TRUE{outside} "
        f"ORDER BY r.{column}",
        (*params, *held),
        tuples=False,
    )
    for values in cursor:
        row = dict(zip(values.keys(), values))
        text = row.pop("_body")
        if text is None or text != record_text(body_of(row)):
            yield row, text


def streamed_counts(
    store: Store, kind: str, start: int, suspects: str, keys: str
) -> tuple[int, int, int]:
    """(records, their distinct keys, the rows' distinct keys) of a streamed `kind`, keys
    in the JSON list `keys` left out, in one pass over the log's index: as many records
    as keys, and none is logged twice; as many keys as keys of rows with a record, and
    no record lacks its row (then those two reads need not be made)."""
    rows, column, _ = STREAMED[kind]
    key, _ = _key_columns(kind)
    # The records grouped by key in the index's order (no temporary b-tree of distinct
    # keys); COUNT(k) leaves out the group of records without a key, as COUNT(DISTINCT).
    proper, params = _proper(store, kind, start, suspects)
    rowed, rows_held = _not_in(f"r.{column}", keys, _keys(store, kind))
    logged, logged_held = _not_in(key, keys, _keys(store, kind))
    found = store.conn.execute(
        f"SELECT {statement(store, 'log.total')}, COUNT(k), (SELECT COUNT(DISTINCT "
        f"r.{column}) FROM ({rows}) r WHERE TRUE{rowed}) FROM (SELECT {key} AS k, COUNT(*) "
        f"AS n FROM log WHERE {proper}{logged} GROUP BY {key}) counted",
        (*rows_held, *params, *logged_held),
    ).fetchone()
    return int(found[0]), found[1], found[2]


def records_without_rows(
    store: Store, kind: str, start: int, suspects: str, keys: str
) -> Iterator[tuple[object, int, str]]:
    """(key, index, body) of the last record of every key of a streamed `kind` that no
    row has (keys in the JSON list `keys` left to the caller), in key order."""
    rows, column, _ = STREAMED[kind]
    key, _ = _key_columns(kind)
    proper, params = _proper(store, kind, start, suspects)
    outside, held = _not_in("last.k", keys, _keys(store, kind))
    return store.conn.execute(
        f"SELECT last.k, l.idx, l.body FROM (SELECT {key} AS k, MAX(idx) AS idx FROM log "
        f"WHERE {proper} GROUP BY {key}) last JOIN log l ON l.idx = last.idx WHERE TRUE{outside} "
        f"AND NOT EXISTS (SELECT 1 FROM ({rows}) r WHERE r.{column} = last.k) ORDER BY last.k",
        (*params, *held),
    )


def records_logged_twice(
    store: Store, kind: str, start: int, suspects: str, keys: str
) -> Iterator[tuple[object, int, str]]:
    """(key, index, body) of every record of a key of `kind` logged more than once (keys
    in the JSON list `keys` left to the caller), in key order, then index order."""
    key, _ = _key_columns(kind)
    proper, params = _proper(store, kind, start, suspects)
    outside, held = _not_in(key, keys, _keys(store, kind))
    return store.conn.execute(
        f"SELECT {key}, idx, body FROM log WHERE {proper} AND {key} IN (SELECT {key} FROM log "
        f"WHERE {proper} GROUP BY {key} HAVING COUNT(*) > 1){outside} ORDER BY {key}, idx",
        (*params, *params, *held),
    )


def records_of_key(
    store: Store, kind: str, value: object, start: int, suspects: str
) -> list[tuple[int, str]]:
    """(index, body) of the records of `kind` keyed `value`, in index order."""
    key, _ = _key_columns(kind)
    value = _as_column(store, key, value)
    if value is _MISSING:
        return []
    proper, params = _proper(store, kind, start, suspects)
    return store.conn.execute(
        f"SELECT idx, body FROM log WHERE {proper} AND {key} {statement(store, 'log.is')} ? "
        "ORDER BY idx",
        (*params, value),
    ).fetchall()


def row_of_key(store: Store, kind: str, value: object) -> dict | None:
    """The row of a streamed `kind` keyed `value`, or None."""
    rows, column, _ = STREAMED[kind]
    value = _as_column(store, "tkey" if kind in NAMED_KINDS else "nkey", value)
    if value is _MISSING:
        return None
    cursor = store.conn.execute(
        f"SELECT * FROM ({rows}) r WHERE r.{column} {statement(store, 'log.is')} ?", (value,)
    )
    found = cursor.fetchone()
    return dict(zip([c[0] for c in cursor.description], found)) if found else None


def _as_column(store: Store, column: str, value: object) -> object:
    """A key as the column it is compared with takes it: SQLite converts a key of
    another type by the column's affinity (text for `tkey`, an integer for `nkey`), so
    PostgreSQL is given the value converted the same way (`_MISSING`: no row can have
    it)."""
    if store.dialect == SQLITE or value is None:
        return value
    if column == "tkey":
        return value if isinstance(value, str) else json.dumps(value)
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return value if isinstance(value, int) else _MISSING


def logged_rows(store: Store, kind: str) -> Iterator[dict]:
    """The rows a kind of record logs, as body dicts, from the tables as they are now."""
    sql, body_of = LOGGED_ROWS[kind]
    cursor = stream(store, sql)
    names = [c[0] for c in cursor.description]
    for row in cursor:
        yield body_of(dict(zip(names, row)))


def active_deployments(store: Store) -> set[int]:
    return {r[0] for r in store.conn.execute("SELECT id FROM deployments WHERE active = 1")}


GUARDED = ("events", "ledger", "gm_actions", "log", "log_nodes", "meta", "witnesses")


def missing_guards(store: Store) -> list[str]:
    """The append-only triggers the schema made that are gone (dropped by hand) or no
    longer refuse the change (replaced by a trigger of the same name that does nothing)."""
    if store.dialect != SQLITE:
        from gmtool.store.pg_guards import missing_guards as missing_on_postgres

        return missing_on_postgres(store, GUARDED)
    present = dict(store.conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'"))
    names = [
        (f"{table}_no_{change}", table, change)
        for table in GUARDED
        for change in ("update", "delete")
    ]
    return [
        name
        for name, table, change in names
        if not _refuses(present.get(name), name, table, change)
    ]


def _refuses(sql: str | None, name: str, table: str, change: str) -> bool:
    """Whether `sql` is the guard as the schema makes it: before every `change` of `table`,
    abort (the message may say "are" or "is")."""
    if not isinstance(sql, str):
        return False
    words = " ".join(sql.split())
    head = f"CREATE TRIGGER {name} BEFORE {change.upper()} ON {table} BEGIN SELECT RAISE(ABORT, '"
    return (
        words.startswith(head)
        and words.endswith("'); END")
        and "'" not in words[len(head) : -len("'); END")]
    )


def events_between(store: Store, table_id: str, first: int, last: int) -> list[dict]:
    """A table's stored events `first` to `last`, every column but the row id."""
    cursor = store.conn.execute(
        "SELECT table_id, hand_id, seq, type, payload, created_at, prev_hash, hash FROM events "
        "WHERE table_id = ? AND seq BETWEEN ? AND ? ORDER BY seq",
        (table_id, first, last),
    )
    names = [c[0] for c in cursor.description]
    return [dict(zip(names, row)) for row in cursor]


def gm_records(store: Store) -> Iterator:
    """(idx, kind, body) of the GM records (users, actions, command requests) in log order."""
    return store.conn.execute(
        "SELECT idx, kind, body FROM log WHERE kind IN ('gm_user', "
        "'gm_action', 'gm_request') ORDER BY idx"
    )
