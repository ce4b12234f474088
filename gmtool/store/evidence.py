"""The evidence log: every record that is evidence, in one append-only Merkle tree.

Each write that makes evidence (a batch of a table's events, a hand's start and end, a
ledger row, a GM action, a stored config, a deployment, a GM user's role, a new player,
the host's signature over an opening balance)
appends a record to `log` in the same transaction: `body` is the record's canonical JSON
and `leaf` its RFC 9162 leaf hash. The tree's running state (`log_state`: size and the
roots of its complete subtrees) and every complete interior node (`log_nodes`, for
proofs) are written with it. A signed checkpoint of (size, root) then proves every
record before it, wherever the database goes (docs/evidence.md).

A record's body is made by the `*_body` functions below from the row it logs, so the
audit can rebuild it from the row and compare.
"""

from __future__ import annotations

import hashlib
import secrets
import sqlite3
from typing import TYPE_CHECKING, Iterator, Mapping

from gmtool.canonical import canonical_json
from gmtool.evidence.merkle import Frontier, Tree, leaf_hash

if TYPE_CHECKING:
    from gmtool.store.db import Store

def events_body(table_id: str, first: int, last: int, head: str) -> dict:
    """A batch of one table's events: its last hash commits to every event up to `last`."""
    return {"kind": "events", "table": table_id, "first": first, "last": last, "head": head}


def hand_body(row: Mapping) -> dict:
    return {"kind": "hand", "id": row["id"], "table": row["table_id"], "number": row["number"],
            "config": row["config_id"], "tier": row["tier"], "banker": row["banker"],
            "ante": row["ante"], "seats": row["seats"], "commitment": row["commitment"],
            "algorithm": row["algorithm"], "at": row["started_at"]}


def hand_end_body(row: Mapping) -> dict:
    return {"kind": "hand_end", "id": row["id"], "outcome": row["outcome"],
            "winners": row["winners"], "seed": row["seed"], "at": row["ended_at"]}


def ledger_body(row: Mapping) -> dict:
    return {"kind": "ledger", "id": row["id"], "hand": row["hand_id"],
            "gm_action": row["gm_action_id"], "player": row["player"], "delta": row["delta"],
            "reason": row["reason"], "at": row["created_at"]}


def gm_action_body(row: Mapping) -> dict:
    """The GM action's chain hash commits to its whole content."""
    return {"kind": "gm_action", "id": row["id"], "hash": row["hash"]}


def config_body(row: Mapping) -> dict:
    """The config id is the hash of the compiled config; the SHA-256 of the profile text it
    was compiled from and when it was stored come with it (records made before 25c8006,
    2026-12-01, hold the id alone)."""
    body = {"kind": "config", "id": row["config_id"]}
    if "profile_text" in row:
        text = row["profile_text"]
        body["text"] = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest() \
            if isinstance(text, str) else None
        body["at"] = row["created_at"]
    return body


def deployment_body(row: Mapping) -> dict:
    return {"kind": "deployment", "id": row["id"], "profile": row["profile_id"],
            "rooms": row["rooms"], "config": row["config_id"], "by": row["deployed_by"],
            "at": row["deployed_at"], "note": row["note"]}


def retire_body(ids: list[int], at: str) -> dict:
    """Deployments that stop applying (a rollback retires the newest and the one before)."""
    return {"kind": "retire", "ids": sorted(ids), "at": at}


def gm_user_body(row: Mapping) -> dict:
    """A GM user's role and registered verifier key (users from before keys have none)."""
    body = {"kind": "gm_user", "name": row["name"], "role": row["role"],
            "at": row["created_at"]}
    if row.get("key") is not None:
        body["key"] = row["key"]
    return body


def gm_request_body(row: Mapping) -> dict:
    """A GM command for the host as it was asked for, with the GM's signed request (the
    outcome follows as a GM action)."""
    return {"kind": "gm_request", "id": row["id"], "command": row["kind"],
            "table": row["table_id"], "player": row["player"], "reason": row["reason"],
            "by": row["issued_by"], "at": row["issued_at"], "request": row["request"]}


def opening_body(ledger_id: int, player: str, amount: int, signature: str) -> dict:
    """The host's signature over an opening balance (gmtool.evidence.opening): the
    authority for the ledger row `ledger_id`, which is logged just before it."""
    return {"kind": "opening", "id": ledger_id, "player": player, "delta": amount,
            "signature": signature}


def player_body(row: Mapping) -> dict:
    return {"kind": "player", "name": row["name"], "type": row["kind"],
            "at": row["created_at"]}


def index_key(body: dict) -> tuple[str | None, int | None]:
    """The indexed key of a record (its `tkey`, `nkey` columns): which row (or table and
    first event) it logs. Audit checks the columns against the body they index."""
    kind = body["kind"]
    if kind == "events":
        return body["table"], body["first"]
    if kind in ("config", "gm_user", "player"):
        return body["name" if kind != "config" else "id"], None
    return None, body.get("id")


def _load(conn: sqlite3.Connection) -> Frontier:
    row = conn.execute("SELECT size, nodes FROM log_state WHERE id = 1").fetchone()
    if row is None:
        return Frontier()
    try:
        nodes = bytes(row[1])
        return Frontier(row[0], [nodes[i:i + 32] for i in range(0, len(nodes), 32)])
    except (TypeError, ValueError) as error:  # edited by hand: no write may build on it
        from gmtool.store.db import StoreError

        raise StoreError(f"the evidence log's recorded state is damaged ({error}): run "
                         "`gmtool audit`") from None


def append(store: Store, body: dict) -> int:
    """Append one record inside the caller's write transaction; returns its index."""
    return append_many(store.conn, [body])


def append_many(conn: sqlite3.Connection, bodies: list[dict]) -> int:
    """Append records in order inside the caller's write transaction; returns the index of
    the last one."""
    frontier = _load(conn)
    rows, nodes = [], []
    for body in bodies:
        text = canonical_json(body)
        leaf = leaf_hash(text.encode())
        tkey, nkey = index_key(body)
        rows.append((frontier.size, body["kind"], tkey, nkey, text, leaf))
        nodes += frontier.append(leaf)
    conn.executemany("INSERT INTO log (idx, kind, tkey, nkey, body, leaf) VALUES (?, ?, ?, ?, "
                     "?, ?)", rows)
    if nodes:
        conn.executemany("INSERT INTO log_nodes (level, idx, hash) VALUES (?, ?, ?)", nodes)
    conn.execute("INSERT INTO log_state (id, size, nodes) VALUES (1, ?, ?) ON CONFLICT(id) DO "
                 "UPDATE SET size = excluded.size, nodes = excluded.nodes",
                 (frontier.size, b"".join(frontier.nodes)))
    return frontier.size - 1


def append_row(store: Store, body_of, table: str, key: str, value) -> None:
    """Append the record of one row as it now is (read back inside the transaction)."""
    cursor = store.conn.execute(f"SELECT * FROM {table} WHERE {key} = ?", (value,))
    names = [c[0] for c in cursor.description]
    append(store, body_of(dict(zip(names, cursor.fetchone()))))


def state(store: Store) -> tuple[int, bytes]:
    """(size, root) of the log as the store says it is now."""
    frontier = _load(store.conn)
    return frontier.size, frontier.root()


def store_id(store: Store) -> str:
    row = store.one("SELECT value FROM meta WHERE key = 'store_id'")
    return row["value"] if row else ""


def new_store_id() -> str:
    return secrets.token_hex(8)


def records(store: Store, lo: int = 0, hi: int | None = None) -> Iterator:
    """Log rows (idx, kind, tkey, nkey, body, leaf) in order, from `lo` up to `hi`."""
    sql = "SELECT idx, kind, tkey, nkey, body, leaf FROM log WHERE idx >= ?"
    params: list = [lo]
    if hi is not None:
        sql += " AND idx < ?"
        params.append(hi)
    return store.conn.execute(sql + " ORDER BY idx", params)


def leaves(store: Store, lo: int, hi: int) -> list[bytes]:
    return [bytes(r[0]) for r in store.conn.execute(
        "SELECT leaf FROM log WHERE idx >= ? AND idx < ? ORDER BY idx", (lo, hi))]


def tree(store: Store) -> Tree:
    """Proofs over the stored log, from its stored nodes."""
    def node(level: int, index: int) -> bytes | None:
        row = store.one("SELECT hash FROM log_nodes WHERE level = ? AND idx = ?",
                        (level, index))
        return bytes(row[0]) if row else None

    return Tree(lambda lo, hi: leaves(store, lo, hi), node)


def records_of_hand(store: Store, hand_id: int, table_id: str) -> list[dict]:
    """The log records of one hand: its start, its end, its ledger rows and the batches of
    its table's events that hold its events."""
    seqs = store.one("SELECT MIN(seq), MAX(seq) FROM events WHERE hand_id = ?", (hand_id,))
    rows = store.all(
        "SELECT idx, body, leaf FROM log WHERE (kind IN ('hand', 'hand_end', 'ledger') AND "
        "nkey IS NOT NULL AND ((kind != 'ledger' AND nkey = ?) OR (kind = 'ledger' AND "
        "json_extract(CASE WHEN json_valid(body) THEN body END, '$.hand') = ?))) OR (kind = 'events' AND tkey = ? AND nkey <= ? "
        "AND json_extract(CASE WHEN json_valid(body) THEN body END, '$.last') >= ?) ORDER BY idx",
        (hand_id, hand_id, table_id, seqs[1] or 0, seqs[0] or 0))
    return [{"index": r["idx"], "body": r["body"], "leaf": bytes(r["leaf"]).hex()}
            for r in rows]


def batch_heads(store: Store) -> Iterator:
    """(log index, table, last seq, logged head, the hash the table's event `last` has now
    (None if it is gone), the hand of the batch's events (or of the next event)) of every
    batch of events."""
    return store.conn.execute(
        "SELECT l.idx, l.tkey, json_extract(CASE WHEN json_valid(l.body) THEN l.body END, '$.last'), json_extract(CASE WHEN json_valid(l.body) THEN l.body END, "
        "'$.head'), e.hash, COALESCE((SELECT MAX(hand_id) FROM events h WHERE h.table_id = "
        "l.tkey AND h.seq BETWEEN l.nkey AND json_extract(CASE WHEN json_valid(l.body) THEN l.body END, '$.last')), (SELECT hand_id "
        "FROM events h WHERE h.table_id = l.tkey AND h.seq > json_extract(CASE WHEN json_valid(l.body) THEN l.body END, '$.last') "
        "ORDER BY h.seq LIMIT 1)) FROM log l LEFT JOIN "
        "events e ON e.table_id = l.tkey AND e.seq = json_extract(CASE WHEN json_valid(l.body) THEN l.body END, '$.last') WHERE "
        "l.kind = 'events' ORDER BY l.idx")


def last_seqs(store: Store) -> dict[str, int]:
    return {r[0]: r[1] for r in store.conn.execute(
        "SELECT table_id, MAX(seq) FROM events GROUP BY table_id")}


# Each logged table, the body function of its rows, and how a row is named in findings.
LOGGED_ROWS = {
    "hand": ("SELECT * FROM hands", hand_body),
    "hand_end": ("SELECT * FROM hands WHERE outcome != 'running'", hand_end_body),
    "ledger": ("SELECT * FROM ledger", ledger_body),
    "gm_action": ("SELECT id, hash FROM gm_actions", gm_action_body),
    "config": ("SELECT config_id, profile_text, created_at FROM configs", config_body),
    "deployment": ("SELECT * FROM deployments", deployment_body),
    "gm_user": ("SELECT * FROM gm_users", gm_user_body),
    "gm_request": ("SELECT * FROM gm_commands", gm_request_body),
    "player": ("SELECT * FROM players", player_body),
}


def logged_rows(store: Store, kind: str) -> Iterator[dict]:
    """The rows a kind of record logs, as body dicts, from the tables as they are now."""
    sql, body_of = LOGGED_ROWS[kind]
    cursor = store.conn.execute(sql)
    names = [c[0] for c in cursor.description]
    for row in cursor:
        yield body_of(dict(zip(names, row)))


def active_deployments(store: Store) -> set[int]:
    return {r[0] for r in store.conn.execute("SELECT id FROM deployments WHERE active = 1")}


GUARDED = ("events", "ledger", "gm_actions", "log", "log_nodes", "meta")


def missing_guards(store: Store) -> list[str]:
    """The append-only triggers the schema made that are gone (dropped by hand) or no
    longer refuse the change (replaced by a trigger of the same name that does nothing)."""
    present = dict(store.conn.execute("SELECT name, sql FROM sqlite_master WHERE type = "
                                      "'trigger'"))
    names = [(f"{table}_no_{change}", table, change) for table in GUARDED
             for change in ("update", "delete")]
    return [name for name, table, change in names
            if not _refuses(present.get(name), name, table, change)]


def _refuses(sql: str | None, name: str, table: str, change: str) -> bool:
    """Whether `sql` is the guard as the schema makes it: before every `change` of `table`,
    abort (the message may say "are" or "is")."""
    if not isinstance(sql, str):
        return False
    words = " ".join(sql.split())
    head = f"CREATE TRIGGER {name} BEFORE {change.upper()} ON {table} BEGIN SELECT RAISE(ABORT, '"
    return words.startswith(head) and words.endswith("'); END") and \
        "'" not in words[len(head):-len("'); END")]


def events_between(store: Store, table_id: str, first: int, last: int) -> list[dict]:
    """A table's stored events `first` to `last`, every column but the row id."""
    cursor = store.conn.execute(
        "SELECT table_id, hand_id, seq, type, payload, created_at, prev_hash, hash FROM events "
        "WHERE table_id = ? AND seq BETWEEN ? AND ? ORDER BY seq", (table_id, first, last))
    names = [c[0] for c in cursor.description]
    return [dict(zip(names, row)) for row in cursor]


def gm_records(store: Store) -> Iterator:
    """(idx, kind, body) of the GM records (users, actions, command requests) in log order."""
    return store.conn.execute("SELECT idx, kind, body FROM log WHERE kind IN ('gm_user', "
                              "'gm_action', 'gm_request') ORDER BY idx")
