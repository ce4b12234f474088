"""`gmtool db copy`: a SQLite store, every table and row as it is, into a new PostgreSQL
store (issue 26): how an operator moves from the embedded store to PostgreSQL.

Every row keeps its values, its id included: the evidence log (its records, tree nodes
and state, the store's identity in `meta`, so its signed checkpoints still name this
log), the events and chain heads, hands, the ledger, the GM log, users, commands,
configs, deployments, witnesses, players, tables, their leases and seats, the words of
consoles waiting for a command. What lies beside the SQLite file (the host's keys, the
witness folders) is not in the store and is not copied. `TABLES` names every table of
the schema (a test holds it to that).

The destination is an empty database, or one holding gmtool's schema and no rows but
those its migrations wrote (`db copy` makes the schema itself): anything else is
refused before a row is written. The schema (when missing), the rows and the identity
sequences, set past the copied ids, are written in ONE transaction: a failure leaves the
destination as it was. The source is read in one snapshot (a host may be writing it).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import psycopg

from gmtool.errors import UsageError
from gmtool.store.db import Store
from gmtool.store.errors import StoreError

if TYPE_CHECKING:
    from gmtool.store.pg import PgStore

# Every table of the store, parents before the rows that name them (foreign keys).
TABLES = (
    "meta",
    "players",
    "configs",
    "deployments",
    "tables",
    "table_leases",
    "host_addresses",
    "seats",
    "hands",
    "events",
    "gm_users",
    "gm_actions",
    "ledger",
    "gm_commands",
    "chain_heads",
    "log",
    "log_nodes",
    "log_state",
    "witnesses",
    "console_words",
)
# Tables whose ids PostgreSQL hands out (identity columns): their sequences go past the
# greatest id copied.
IDENTITY = ("deployments", "hands", "events", "ledger", "gm_commands")
SQLITE_OWN = ("_sqlite_migrations",)  # which migrations ran: PostgreSQL records its own
BATCH = 5000


@dataclass
class Copied:
    """What a copy wrote: rows per table, in `TABLES` order."""

    rows: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.rows.values())


def _source_tables(source: Store) -> list[str]:
    names = [
        row[0]
        for row in source.all(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        )
    ]
    unknown = sorted(set(names) - set(TABLES) - set(SQLITE_OWN))
    if unknown:
        raise UsageError(
            f"{source.path} holds tables gmtool does not know ({', '.join(unknown)}): "
            "copy it with the gmtool that wrote it"
        )
    return [table for table in TABLES if table in names]


def _columns(source: Store, table: str) -> list[str]:
    return [row[1] for row in source.all(f"PRAGMA table_info({table})")]


def _dest_rows(dest: PgStore) -> dict[str, int]:
    """Rows in each of the destination's tables (its migrations' own record aside)."""
    return {
        table: dest.conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] for table in TABLES
    }


def check_empty(dest: PgStore) -> None:
    """Refuse a destination holding any row but its migrations' (the new store's
    identity in `meta`): a copy goes into a new database only."""
    held = {table: n for table, n in _dest_rows(dest).items() if n}
    if held.get("meta") == 1:  # the identity its migrations gave the new store
        del held["meta"]
    if held:
        listed = ", ".join(f"{table} ({n})" for table, n in held.items())
        raise UsageError(
            f"{dest.path} is not empty: it holds rows in {listed}; `gmtool db copy` writes "
            "only into a new database (createdb NAME), never over a store"
        )


def copy_store(
    source: Store, dest: PgStore, progress: Callable[[str, int], None] | None = None
) -> Copied:
    """Copy every row of the SQLite store `source` into `dest` (a new PostgreSQL store:
    `check_empty`), in one destination transaction (the module's docstring)."""
    from gmtool.store.pg import WRITE_LOCK

    tables = _source_tables(source)
    copied = Copied()
    raw = dest.conn.raw
    try:
        with source.snapshot(strict=True), raw.transaction():
            raw.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
            check_empty(dest)  # again, under the writers' lock
            # The new store's identity goes: the copy is the source's log, under its name.
            # (meta refuses every DELETE, to its owner too: its guard is set aside for
            # this one statement, in this transaction, by the owner `db copy` runs as.)
            raw.execute("ALTER TABLE meta DISABLE TRIGGER meta_no_delete")
            raw.execute("DELETE FROM meta")
            raw.execute("ALTER TABLE meta ENABLE TRIGGER meta_no_delete")
            for table in tables:
                copied.rows[table] = _copy_table(source, raw, table)
                if progress:
                    progress(table, copied.rows[table])
            for table in IDENTITY:
                raw.execute(
                    f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                    f"COALESCE((SELECT MAX(id) FROM {table}), 0) + 1, false)"
                )
    except (psycopg.Error, sqlite3.Error, UnicodeError) as error:
        text = (str(error).strip().splitlines() or [type(error).__name__])[0]
        raise StoreError(
            f"{source.path} to {dest.path}: the copy failed and wrote nothing ({text}); "
            "a store PostgreSQL cannot hold as it is (an edited value of the wrong type, "
            "text that is not UTF-8) shows in `gmtool audit --db SOURCE`"
        ) from None
    return copied


def _copy_table(source: Store, raw: psycopg.Connection, table: str) -> int:
    """Stream one table's rows (every column, as stored) through COPY; how many."""
    columns = _columns(source, table)
    names = ", ".join(columns)
    cursor = source.conn.cursor()
    cursor.row_factory = None
    cursor.execute(f"SELECT {names} FROM {table}")
    count = 0
    with raw.cursor().copy(f"COPY {table} ({names}) FROM STDIN") as stream:
        while rows := cursor.fetchmany(BATCH):
            for row in rows:
                stream.write_row(row)
            count += len(rows)
    return count
