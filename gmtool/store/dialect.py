"""The SQL that differs between SQLite and PostgreSQL, written once for each (issue 26).

The repositories share their SQL where the two dialects mean the same by it (`ON
CONFLICT ... DO NOTHING`, `COALESCE`, upserts naming `excluded`). Where they differ, the
statement is named here, in `STATEMENTS`, with one text per dialect, and a repository
asks for it by name (`statement(store, name)`): no SQL is rewritten on the fly.

- SQLite reads JSON columns with `json_each`/`json_extract`, guarded by `json_valid`, so
  a value only an edit makes is skipped, never a stop (docs/evidence.md). PostgreSQL
  reads them as `jsonb` through `pg_temp.gmtool_json` (`store/pg.py`: NULL for text
  that is not JSON), to the same effect.
- SQLite has `rowid` (insertion order); PostgreSQL orders configs by when they were
  stored, then by id.
- "No limit" is `LIMIT -1` in SQLite and `LIMIT NULL` in PostgreSQL (`no_limit`).
- A new row's id is `cursor.lastrowid` in SQLite and `RETURNING id` in PostgreSQL
  (`insert_id`): ids there come from an identity column and may skip (a rolled-back
  insert uses one up), so nothing may assume they are dense.
- Where coins move, a balance read to decide a move is read `FOR UPDATE` on PostgreSQL
  (SQLite's BEGIN IMMEDIATE already holds the whole store).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

SQLITE = "sqlite"
POSTGRESQL = "postgresql"
DIALECTS = (SQLITE, POSTGRESQL)


class HasDialect(Protocol):
    dialect: str
    conn: Any


# A seated player's entries in a hand's `seats` (a JSON array of {"player", "coins", ...}).
PG_SEATS = (
    "jsonb_array_elements(CASE WHEN jsonb_typeof(pg_temp.gmtool_json({seats})) = 'array' "
    "THEN pg_temp.gmtool_json({seats}) ELSE '[]'::jsonb END)"
)

# The same on SQLite: a seats value that is not JSON, or JSON but not an array, is no seats
# (WHEN is tried in order: json_type only sees valid JSON); an element that is not an
# object is no seat (json_extract would parse a bare string as JSON and stop).
SQLITE_SEATS = (
    "json_each(CASE WHEN NOT json_valid({seats}) THEN '[]' WHEN json_type({seats}) = 'array' "
    "THEN {seats} ELSE '[]' END)"
)
_SQLITE_SEAT = "json_extract(CASE WHEN {s}type = 'object' THEN {s}value END, '$.{field}')"

STATEMENTS: dict[str, dict[str, str]] = {
    # hands.at_stake: (hand id, coins brought) of the running hand a player sits in
    "hands.at_stake": {
        SQLITE: "SELECT h.id, "
        + _SQLITE_SEAT.format(s="s.", field="coins")
        + " FROM hands h, "
        + SQLITE_SEATS.format(seats="h.seats")
        + " s WHERE h.outcome = 'running' AND "
        + _SQLITE_SEAT.format(s="s.", field="player")
        + " = ? ORDER BY h.id DESC LIMIT 1",
        POSTGRESQL: "SELECT h.id, s.value -> 'coins' FROM hands h, "
        + PG_SEATS.format(seats="h.seats")
        + " AS s (value) WHERE h.outcome = 'running' AND s.value ->> 'player' = ? "
        "ORDER BY h.id DESC LIMIT 1",
    },
    # queries.hand_filter: the hands a player sat in (a WHERE clause over `hands`)
    "queries.seated": {
        SQLITE: "EXISTS (SELECT 1 FROM "
        + SQLITE_SEATS.format(seats="hands.seats")
        + " WHERE "
        + _SQLITE_SEAT.format(s="", field="player")
        + " = ?)",
        POSTGRESQL: "EXISTS (SELECT 1 FROM "
        + PG_SEATS.format(seats="hands.seats")
        + " AS s (value) WHERE s.value ->> 'player' = ?)",
    },
    # queries.player: a player's recent hands with what each moved for them
    "queries.recent_hands": {
        SQLITE: "SELECT h.id, h.table_id, h.started_at, h.outcome, COALESCE(SUM(l.delta), 0) "
        "AS delta FROM hands h LEFT JOIN ledger l ON l.hand_id = h.id AND l.player = ? WHERE "
        "EXISTS (SELECT 1 FROM "
        + SQLITE_SEATS.format(seats="h.seats")
        + " WHERE "
        + _SQLITE_SEAT.format(s="", field="player")
        + " = ?) GROUP BY h.id ORDER BY h.id DESC LIMIT ?",
        POSTGRESQL: "SELECT h.id, h.table_id, h.started_at, h.outcome, "
        "COALESCE(SUM(l.delta), 0)::bigint AS delta FROM hands h LEFT JOIN ledger l ON "
        "l.hand_id = h.id AND l.player = ? WHERE EXISTS (SELECT 1 FROM "
        + PG_SEATS.format(seats="h.seats")
        + " AS s (value) WHERE s.value ->> 'player' = ?) "
        "GROUP BY h.id ORDER BY h.id DESC LIMIT ?",
    },
    # queries.ladders: the active deployments' configs, each profile once
    "queries.ladders": {
        SQLITE: "SELECT DISTINCT d.profile_id, c.compiled FROM deployments d JOIN "
        "configs c USING (config_id) WHERE d.active = 1 ORDER BY d.id",
        POSTGRESQL: "SELECT d.profile_id, c.compiled FROM deployments d JOIN configs c "
        "USING (config_id) WHERE d.active = 1 GROUP BY d.profile_id, c.compiled "
        "ORDER BY MIN(d.id)",
    },
    # gm.fate_logged: a GM action logging the fate of command ?
    "gm.fate_logged": {
        SQLITE: "SELECT 1 FROM gm_actions WHERE action IN ('kick', 'close') AND CASE WHEN "
        "json_valid(outcome) THEN json_extract(outcome, '$.command') END = ? LIMIT 1",
        POSTGRESQL: "SELECT 1 FROM gm_actions WHERE action IN ('kick', 'close') AND "
        "CASE WHEN jsonb_typeof(pg_temp.gmtool_json(outcome)) = 'object' THEN "
        "pg_temp.gmtool_json(outcome) -> 'command' END = to_jsonb(?::bigint) LIMIT 1",
    },
    # configs.stored_configs: every stored config, oldest first
    "configs.stored": {
        SQLITE: "SELECT config_id, profile_id, version, title, game, compiled FROM configs "
        "ORDER BY rowid",
        POSTGRESQL: "SELECT config_id, profile_id, version, title, game, compiled FROM configs "
        "ORDER BY created_at, config_id",
    },
    # log_reads.records_of_hand: the records of a hand (a start, an end, ledger records
    # naming it) and the batches of its table's events that hold its events (parameters:
    # SQLite hand, hand, table, last seq, first seq; PostgreSQL hand three times, table,
    # last, first twice). SQLite reads the
    # JSON as it decides; PostgreSQL's jsonb gives other values (1.0 = 1, true no 1), so
    # its text only narrows the rows to a superset, each read once (OFFSET 0 keeps the
    # parse to one a row), and Python decides as SQLite would (`log_reads`).
    "log_reads.records_of_hand": {
        SQLITE: "SELECT idx, kind, body, leaf FROM log WHERE (kind IN ('hand', 'hand_end', "
        "'ledger') AND nkey IS NOT NULL AND ((kind != 'ledger' AND nkey = ?) OR (kind = "
        "'ledger' AND json_extract(CASE WHEN json_valid(body) THEN body END, '$.hand') = "
        "?))) OR (kind = 'events' AND tkey = ? AND nkey <= ? AND "
        "json_extract(CASE WHEN json_valid(body) THEN body END, '$.last') >= ?) "
        "ORDER BY idx",
        POSTGRESQL: "SELECT idx, kind, body, leaf FROM log WHERE kind IN ('hand', 'hand_end') "
        "AND nkey = ? UNION ALL SELECT idx, kind, body, leaf FROM (SELECT idx, kind, "
        "body, leaf, pg_temp.gmtool_json(body) AS j FROM log WHERE kind = 'ledger' AND nkey "
        "IS NOT NULL OFFSET 0) l WHERE CASE WHEN jsonb_typeof(j) = 'object' THEN CASE "
        "jsonb_typeof(j -> 'hand') WHEN 'number' THEN abs((j ->> 'hand')::numeric - "
        "?) <= 1 + ? / 1e15 WHEN 'boolean' THEN true ELSE false END ELSE false "
        "END UNION ALL SELECT idx, kind, body, leaf FROM (SELECT idx, kind, body, leaf, "
        "pg_temp.gmtool_json(body) AS j FROM log WHERE kind = 'events' AND tkey = ? "
        "AND nkey <= ? OFFSET 0) e WHERE CASE WHEN jsonb_typeof(j) = 'object' THEN "
        "CASE jsonb_typeof(j -> 'last') WHEN 'number' THEN (j ->> 'last')::numeric >= "
        "? - 1 - abs(?) / 1e15 WHEN 'null' THEN false ELSE true END ELSE "
        "false END ORDER BY idx",
    },
    # ledger: a balance about to be moved (the row held until the transaction ends)
    "ledger.coins_to_move": {
        SQLITE: "SELECT coins FROM players WHERE name = ?",
        POSTGRESQL: "SELECT coins FROM players WHERE name = ? FOR UPDATE",
    },
}


def statement(store: HasDialect, name: str) -> str:
    """The statement `name` in the dialect of `store`."""
    return STATEMENTS[name][store.dialect]


def no_limit(store: HasDialect, limit: int) -> int | None:
    """`limit` as a LIMIT parameter, 0 meaning every row."""
    if limit:
        return limit
    return -1 if store.dialect == SQLITE else None


def insert_id(store: HasDialect, sql: str, params: Sequence[Any]) -> int:
    """Run `sql`, an INSERT of one row into a table whose key is an `id` the database hands
    out, inside the caller's transaction; the new row's id."""
    if store.dialect == SQLITE:
        cursor = store.conn.execute(sql, params)
        return int(cursor.lastrowid)
    row = store.conn.execute(sql + " RETURNING id", params).fetchone()
    return int(row[0])
