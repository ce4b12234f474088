"""The audit's SQL that differs between SQLite and PostgreSQL (issue 26), as
`store/dialect.py` has it for the repositories: one text per dialect, asked for by name
(`statement(store, name)`), never rewritten on the fly; and the two ways the audit reads
that have no shared SQL at all (`stream`, `json_values`).

What PostgreSQL's schema already settles, and the audit need not ask of it:

- A column holds its declared type only (BIGINT, TEXT, BYTEA): SQLite keeps any value
  in any column, so the SQLite reads guard against a text balance, a real id or a blob
  key (`typeof`), and the Python checks behind them (`type(x) is int`) meet such values
  only there. On PostgreSQL the store refuses them when they are written, to every role
  (a superuser's edit included), so those guards have nothing to find: their findings
  keep their meaning and never arise.
- Text is valid UTF-8, so the audit's lenient second reading (`undecodable`) never runs.
- Ids the store hands out come from identity columns, which may skip (docs/evidence.md):
  the audit holds them to rise, not to be dense (`audit/chain.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gmtool.store.dialect import POSTGRESQL, SQLITE, HasDialect

# The JSON of a column `{c}` as jsonb, NULL where it is not JSON (store/pg.py).
_PG_JSON = "pg_temp.gmtool_json({c})"

STATEMENTS: dict[str, dict[str, str]] = {
    # scan.audit_tables: every registered table's id (a table row's id is live state:
    # on SQLite only text ids are names; PostgreSQL's column holds nothing else)
    "scan.table_ids": {
        SQLITE: "SELECT id FROM tables WHERE typeof(id) = 'text'",
        POSTGRESQL: "SELECT id FROM tables",
    },
    # scan.balances: each player's ledger sum, in one pass over the ledger ({where}: a
    # player's rows). SQLite sums into 64 bits (an overflow is summed in Python, only an
    # edited store holds one); PostgreSQL sums BIGINT into NUMERIC, which cannot overflow.
    "scan.ledger_sums": {
        SQLITE: "SELECT player, SUM(delta) FROM ledger NOT INDEXED{where} GROUP BY player",
        POSTGRESQL: "SELECT player, SUM(delta) FROM ledger{where} GROUP BY player",
    },
    # scan.shared_slots: hands sharing a (table, number) with an earlier hand
    "scan.shared_slots": {
        SQLITE: "SELECT h.id, h.table_id, h.number, f.first FROM hands h JOIN (SELECT "
        "table_id, number, MIN(id) AS first FROM hands GROUP BY table_id, number "
        "HAVING COUNT(*) > 1) f ON h.table_id IS f.table_id AND h.number IS f.number "
        "AND h.id > f.first ORDER BY h.id",
        POSTGRESQL: "SELECT h.id, h.table_id, h.number, f.first FROM hands h JOIN (SELECT "
        "table_id, number, MIN(id) AS first FROM hands GROUP BY table_id, number "
        "HAVING COUNT(*) > 1) f ON h.table_id IS NOT DISTINCT FROM f.table_id AND "
        "h.number IS NOT DISTINCT FROM f.number AND h.id > f.first ORDER BY h.id",
    },
    # scan.adjustments_without_row: GM adjustments the log says were made (outcome.ok is
    # 1, or true: SQLite's json_extract reads true as 1)
    "scan.adjustments_without_row": {
        SQLITE: "SELECT g.id, g.target FROM gm_actions g WHERE g.id >= ? AND g.action "
        "= 'adjust' AND json_valid(g.outcome) AND json_extract(g.outcome, '$.ok') = 1 "
        "AND g.id NOT IN (SELECT gm_action_id FROM ledger WHERE id >= ? AND "
        "gm_action_id >= ?) ORDER BY g.id",
        POSTGRESQL: "SELECT g.id, g.target FROM gm_actions g WHERE g.id >= ? AND g.action "
        "= 'adjust' AND CASE WHEN jsonb_typeof(" + _PG_JSON.format(c="g.outcome") + ") = "
        "'object' THEN (" + _PG_JSON.format(c="g.outcome") + " -> 'ok') IN ('1'::jsonb, "
        "'true'::jsonb) ELSE false END AND g.id NOT IN (SELECT gm_action_id FROM ledger "
        "WHERE id >= ? AND gm_action_id >= ?) ORDER BY g.id",
    },
    # scan.streamed_counts: a sum that is a number on both (TOTAL is SQLite's own)
    "log.total": {SQLITE: "TOTAL(n)", POSTGRESQL: "COALESCE(SUM(n), 0)"},
    # log_reads: "is the same as", NULL included
    "log.is": {SQLITE: "IS", POSTGRESQL: "IS NOT DISTINCT FROM"},
}


def statement(store: HasDialect, name: str) -> str:
    """The audit's statement `name` in the dialect of `store`."""
    return STATEMENTS[name][store.dialect]


def json_values(store: HasDialect, cast: str = "") -> str:
    """A subquery of the values of a JSON array given as the parameter `?` (a list of
    ids or names): SQLite's `json_each`; on PostgreSQL each element as text, cast to
    `cast` (e.g. "bigint", to compare with an id column) if given."""
    if store.dialect == SQLITE:
        return "SELECT value FROM json_each(?)"
    values = "jsonb_array_elements_text(CAST(? AS jsonb)) AS v"
    if cast != "bigint":
        return f"SELECT v FROM {values}"
    # (only the whole numbers: an id column holds no other, as SQLite's INTEGER compares)
    return f"SELECT CAST(CAST(v AS numeric) AS bigint) FROM {values} WHERE v ~ '^-?[0-9]+(\\.0*)?$'"


def stream(store: Any, sql: str, params: Sequence[Any] = (), tuples: bool = True) -> Any:
    """The rows of a big read, stepped through as they are read: a SQLite cursor (plain
    tuples with `tuples`), or on PostgreSQL a server-side cursor in the open snapshot
    (`PgStore.stream`)."""
    if store.dialect == POSTGRESQL:
        return store.stream(sql, params, tuples=tuples)
    cursor = store.conn.cursor()
    if tuples:
        cursor.row_factory = None  # plain tuples: the audit touches millions of rows
    return cursor.execute(sql, params)
