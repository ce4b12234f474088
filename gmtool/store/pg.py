"""A PostgreSQL store (issue 26): its connection and its transactions, through psycopg 3
(`store/pg_open.py` opens one and checks its schema).

`PgStore` answers what the repositories ask of `store/db.py`'s `Store` (`one`, `all`,
`write`, `snapshot`, `now`, `dialect`, `conn.execute` and `conn.executemany` with
SQLite's `?` placeholders), so the repositories run on both backends
(tests/test_store_backends.py). The translation is of placeholders only (`?` to `%s`);
SQL that differs between the dialects is written for each (`store/dialect.py`, and
`store/pg_schema.py` for the schema). Each connection makes `pg_temp.gmtool_json`, the
JSON reads' guard (`JSON_OR_NULL`).

Every write transaction holds one transaction-level advisory lock, so writers take turns
as they do on SQLite (BEGIN IMMEDIATE): the evidence log's appender reads the tree's
state and extends it, and two appenders must not interleave. Where coins move, the rows
are locked as well (a balance read to decide a move is read `FOR UPDATE`, the ledger's
update holds the row it moves), so narrowing the advisory lock to the log's critical
section for several hosts (issue 26, item 2) leaves coins safe. A write not marked
`durable` commits with `synchronous_commit` off: like SQLite's NORMAL, a power cut may
lose the last such commits but never leaves the store inconsistent.
"""

from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import psycopg
from psycopg import pq
from psycopg.rows import tuple_row

from gmtool.store.clock import SYSTEM, Clock, now
from gmtool.store.errors import StoreError, StoreGone
from gmtool.store.url import redacted

# pg_advisory_xact_lock key of every gmtool write and migration ("gmtool" in ASCII): one
# writer at a time per database (advisory locks are per database).
WRITE_LOCK = 0x676D746F6F6C
START_LOCK = WRITE_LOCK + 1  # hosts of one store start one at a time (`one_at_a_time`)
CONNECT_TIMEOUT_S = 10
STREAM_BATCH = 5000  # rows a server-side cursor fetches at a time (`PgStore.stream`)
MAX_PARAMS = 65535  # the protocol's limit on one statement's parameters
# `INSERT INTO t (a, b) VALUES (?, ?)` and nothing after: `executemany` sends many rows as one
_ONE_ROW_INSERT = re.compile(r"(INSERT INTO \w+ \([\w, ]+\) VALUES )(\([?, ]+\))", re.I)

# `pg_temp.gmtool_json(text)`: the text as jsonb, or NULL when it is not JSON (SQLite's
# json_valid guard: a query reading inside a JSON column skips a value only an edit
# makes, docs/evidence.md). PostgreSQL 15 has no such test, so every connection makes
# this function for itself, in its own temporary schema (no privilege beyond TEMP, which
# every role has; nothing is added to the store's schema). Called schema-qualified only.
JSON_OR_NULL = """
CREATE FUNCTION pg_temp.gmtool_json(value text) RETURNS jsonb LANGUAGE plpgsql IMMUTABLE
STRICT AS $$
BEGIN
    RETURN value::jsonb;
EXCEPTION WHEN data_exception THEN
    RETURN NULL;
END
$$"""


class Row(tuple):
    """A result row read by position or by column name, as sqlite3.Row is."""

    _index: dict[str, int]

    def __new__(cls, values: Sequence[Any], index: dict[str, int]) -> Row:
        row = super().__new__(cls, values)
        row._index = index
        return row

    def __getitem__(self, key: Any) -> Any:  # type: ignore[override]
        if isinstance(key, str):
            return tuple.__getitem__(self, self._index[key])
        return tuple.__getitem__(self, key)

    def keys(self) -> list[str]:
        return list(self._index)


def _rows(cursor: Any) -> Any:
    """psycopg's row factory: `Row`s named by the cursor's columns."""
    index = {column.name: i for i, column in enumerate(cursor.description or ())}
    return functools.partial(Row, index=index)


@functools.lru_cache(maxsize=512)
def placeholders(sql: str) -> str:
    """`sql` with SQLite's `?` placeholders as psycopg's `%s` (and a literal `%` doubled);
    text inside quotes is left as it is."""
    out, quote = [], ""
    for char in sql:
        if quote:
            if char == quote:
                quote = ""
            out.append("%%" if char == "%" else char)
        elif char in "'\"":
            quote = char
            out.append(char)
        elif char == "?":
            out.append("%s")
        else:
            out.append("%%" if char == "%" else char)
    return "".join(out)


class PgConnection:
    """The part of a DB-API connection the shared repositories use, over psycopg."""

    def __init__(self, raw: psycopg.Connection) -> None:
        self.raw = raw

    def execute(self, sql: str, params: Sequence[Any] = ()) -> psycopg.Cursor:
        return self.raw.execute(placeholders(sql), tuple(params))  # type: ignore[arg-type]

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> psycopg.Cursor:
        """`sql` for each of `rows`, one complete statement at a time: an INSERT of one
        VALUES row becomes one INSERT of many rows (`MAX_PARAMS` at most), anything else
        runs once a row. Not psycopg's `executemany`, which pipelines the rows and sends
        its Sync after the last: a host frozen between them (SIGSTOP, a paused machine)
        left its session "active" waiting for the rest, where
        `idle_in_transaction_session_timeout` never fires, holding every writer up for as
        long as it stayed frozen (tests/test_host_connection_postgres.py)."""
        cursor = self.raw.cursor()
        single = _ONE_ROW_INSERT.fullmatch(sql.strip())
        if single is None:
            for row in rows:
                cursor.execute(placeholders(sql), tuple(row))  # type: ignore[arg-type]
            return cursor
        head, values = single.groups()
        per_statement = max(1, MAX_PARAMS // max(1, values.count("?")))
        for start in range(0, len(rows), per_statement):
            chunk = rows[start : start + per_statement]
            text = head + ", ".join([values] * len(chunk))
            cursor.execute(placeholders(text), [v for row in chunk for v in row])  # type: ignore[arg-type]
        return cursor

    @property
    def in_transaction(self) -> bool:
        return self.raw.info.transaction_status != pq.TransactionStatus.IDLE

    def close(self) -> None:
        self.raw.close()


class PgStore:
    """One connection to a PostgreSQL store; `path` is how messages name it (its URL,
    password masked)."""

    dialect = "postgresql"  # store/dialect.py

    def __init__(
        self, url: str, raw: psycopg.Connection, clock: Clock = SYSTEM, read_only: bool = False
    ) -> None:
        self.url = url
        self.path = redacted(url)
        self.conn = PgConnection(raw)
        self.clock = clock
        self.read_only = read_only
        self.is_postgres = True
        self.home_files: Path | None = None  # `at_home`: where a host keeps its files
        self._cursors = 0  # named cursors made (`stream`): each a name of its own

    def at_home(self, home: Path) -> Path:
        """Keep this store's files (keys, witness folder, `files_beside`) in the folder
        `home`, named after the database as a SQLite store's are after its file
        (`home/<database>.seed.key`, ...): returns that stem."""
        self.home_files = home / self.conn.raw.info.dbname
        return self.home_files

    def now(self) -> str:
        return now(self.clock)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> PgStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def write(self, durable: bool = False) -> Iterator[PgConnection]:
        """One atomic write transaction, writers taking turns (the module's docstring)."""
        if self.read_only:
            raise StoreError(f"{self.path} was opened for reading; this would write to it")
        self._check_connected()
        if self.conn.in_transaction:
            raise StoreError("nested write transaction")  # a bug: keep transactions flat
        try:
            with self.conn.raw.transaction():
                self.conn.raw.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
                if not durable:
                    self.conn.raw.execute("SET LOCAL synchronous_commit TO OFF")
                yield self.conn
        except psycopg.Error as error:
            self._check_connected(error)
            raise StoreError(f"{self.path}: the write failed: {first_line(error)}") from None

    def _check_connected(self, error: BaseException | None = None) -> None:
        """Raise StoreGone if the connection is lost (after `error`, the one that said so)."""
        if self.conn.raw.broken or self.conn.raw.closed:
            why = f" ({first_line(error)})" if error is not None else ""
            raise StoreGone(f"{self.path}: lost the connection to the database{why}") from None

    def hold_transactions_at_most(self, seconds: float) -> None:
        """Have the server end this session if it ever sits inside a transaction for
        `seconds` (a host frozen mid-write, its process stopped or its machine paused,
        would otherwise hold every writer's lock for as long as it is frozen): it then
        finds its connection lost when it runs again (StoreGone)."""
        self.conn.raw.execute(
            f"SET idle_in_transaction_session_timeout = {max(1, round(seconds * 1000))}"
        )

    @contextlib.contextmanager
    def one_at_a_time(self) -> Iterator[None]:
        """Hold the store's start lock (a session advisory lock: a host killed holding it
        frees it with its connection): hosts starting together make the store's keys,
        witness folder and registrations one after another, then play together."""
        self.conn.raw.execute("SELECT pg_advisory_lock(%s)", (START_LOCK,))
        try:
            yield
        finally:
            self.conn.raw.execute("SELECT pg_advisory_unlock(%s)", (START_LOCK,))

    @contextlib.contextmanager
    def snapshot(self, strict: bool = False) -> Iterator[None]:
        """One consistent view for many reads (REPEATABLE READ, read only). PostgreSQL
        holds only valid UTF-8 text, so `strict` changes nothing here."""
        if self.conn.in_transaction:
            raise StoreError("nested snapshot")
        with self.conn.raw.transaction(force_rollback=True):
            self.conn.raw.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            yield

    def one(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        try:
            return self.conn.execute(sql, params).fetchone()  # type: ignore[no-any-return]
        except psycopg.OperationalError as error:
            self._check_connected(error)
            raise

    def stream(self, sql: str, params: Sequence[Any] = (), tuples: bool = False) -> Any:
        """The rows of a query (plain tuples with `tuples`, else `Row`s) through a
        server-side cursor inside the open transaction (a snapshot): PostgreSQL sends them
        `STREAM_BATCH` at a time, so a read of every event keeps memory flat, as a SQLite
        cursor does. Outside a transaction (where no named cursor lives) a plain cursor."""
        if not self.conn.in_transaction:
            return self.conn.execute(sql, params)
        self._cursors += 1
        cursor = self.conn.raw.cursor(
            name=f"gmtool_stream_{self._cursors}", row_factory=tuple_row if tuples else _rows
        )
        cursor.itersize = STREAM_BATCH
        cursor.execute(placeholders(sql), tuple(params))  # type: ignore[arg-type]
        return cursor

    def all(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        try:
            return self.conn.execute(sql, params).fetchall()
        except psycopg.OperationalError as error:
            self._check_connected(error)
            raise


def first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]


def open_connection(url: str) -> psycopg.Connection:
    """A psycopg connection to `url` (autocommit: transactions are explicit), or one plain
    StoreError saying why not."""
    from psycopg.conninfo import conninfo_to_dict

    shown = redacted(url)
    try:
        options = conninfo_to_dict(url)
    except psycopg.ProgrammingError as error:
        raise StoreError(
            f"{shown}: not a PostgreSQL URL libpq can read: {first_line(error)}"
        ) from None
    extra: dict[str, Any] = {"application_name": "gmtool"}
    if "connect_timeout" not in options:
        extra["connect_timeout"] = CONNECT_TIMEOUT_S
    try:
        return psycopg.connect(url, autocommit=True, row_factory=_rows, **extra)
    except psycopg.OperationalError as error:
        text = first_line(error)
        hint = ""
        if "does not exist" in text and "database" in text:
            hint = " (create it first: `createdb NAME`, or CREATE DATABASE as its owner)"
        raise StoreError(f"{shown}: cannot use this PostgreSQL database: {text}{hint}") from None
