"""Opening the SQLite store: path resolution, pragmas, migrations, write transactions.

Every write transaction begins IMMEDIATE: a DEFERRED transaction that reads and then
writes gets SQLITE_BUSY at once, without waiting for the busy timeout, when another
process writes at the same time. Settlement and ledger writes also run with
`synchronous=FULL`, so a power cut never loses a settled hand; everything else uses
NORMAL, which WAL keeps consistent.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path
from typing import Iterator

import sqlite_utils

from gmtool.errors import NotFound, Unavailable
from gmtool.store.clock import SYSTEM, Clock, now

DEFAULT_DB = "gmtool.db"
BUSY_TIMEOUT_MS = 10_000


class StoreError(Unavailable):
    """The database cannot be opened or used (missing, corrupt, locked, newer schema)."""


class NoSuchRecord(StoreError, NotFound):
    """A hand, player, config, room or table the store does not hold (exit 2)."""


def resolve_path(db: str | None) -> Path:
    """`--db`, else `$GMTOOL_DB`, else `./gmtool.db`."""
    return Path(db or os.environ.get("GMTOOL_DB") or DEFAULT_DB)


class Store:
    """One connection to the store, with the repository methods mixed in by `open_store`."""

    def __init__(self, path: Path, conn: sqlite3.Connection, clock: Clock = SYSTEM) -> None:
        self.path = path
        self.conn = conn
        self.db = sqlite_utils.Database(conn)
        self.clock = clock  # the time stored rows are stamped with

    def now(self) -> str:
        """The store's time now, as its timestamps write it (ISO 8601, UTC)."""
        return now(self.clock)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @contextlib.contextmanager
    def write(self, durable: bool = False) -> Iterator[sqlite3.Connection]:
        """One atomic write transaction (BEGIN IMMEDIATE); `durable` = synchronous FULL."""
        if self.conn.in_transaction:
            raise StoreError("nested write transaction")  # a bug: keep transactions flat
        if durable:
            self.conn.execute("PRAGMA synchronous=FULL")
        try:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield self.conn
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")
        finally:
            if durable:
                self.conn.execute("PRAGMA synchronous=NORMAL")

    def one(self, sql: str, params: tuple | list = ()) -> sqlite3.Row | None:
        return self.conn.execute(sql, params).fetchone()

    def all(self, sql: str, params: tuple | list = ()) -> list[sqlite3.Row]:
        return self.conn.execute(sql, params).fetchall()


def connect(path: Path, create: bool = False, clock: Clock = SYSTEM) -> Store:
    """Open (or with `create`, create) the store at `path` and bring its schema up to date;
    rows it writes are stamped by `clock`."""
    from gmtool.store.schema import migrate, schema_state

    if not create and not path.exists():
        raise StoreError(f"no database at {path}: run `gmtool db init` (or pass --db, or set "
                         "GMTOOL_DB)")
    if path.exists() and path.is_dir():
        raise StoreError(f"{path} is a folder, not a database file")
    try:
        conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000,
                               check_same_thread=False)
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
        store = Store(path, conn, clock)
        state = schema_state(store)
        if state == "newer":
            raise StoreError(f"{path} was written by a newer gmtool (schema newer than this "
                             "version knows); upgrade gmtool")
        if state == "foreign":
            raise StoreError(f"{path} is not a gmtool database: it belongs to another "
                             "application (it has tables, none of them gmtool's); gmtool will "
                             "not write into it: choose another --db path")
        if state != "current":
            if not create and state == "empty":
                raise StoreError(f"{path} is not a gmtool database (no gmtool tables): "
                                 "run `gmtool db init`")
            migrate(store)
        return store
    except sqlite3.DatabaseError as error:
        raise StoreError(f"{path}: cannot use this database: {error}") from None
