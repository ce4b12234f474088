"""Opening a PostgreSQL store (`store/db.py` calls `connect` for a `postgresql://` URL): the
connection (`store/pg.py`), the session's JSON guard, a read-only database read, and the
schema checked, made or brought up to date (`store/pg_schema.py`, which uses `store/pg.py`
itself: this module sits above both, so the two do not import each other).
"""

from __future__ import annotations

import psycopg

from gmtool.store import pg_schema
from gmtool.store.clock import SYSTEM, Clock
from gmtool.store.errors import StoreError
from gmtool.store.pg import JSON_OR_NULL, PgStore, first_line, open_connection


def _read_only_database(store: PgStore) -> None:
    """A database whose transactions are read-only (`default_transaction_read_only`, as a
    read-only mount is for a SQLite file): a writer is refused in plain words; a reader
    makes its session's JSON guard in a transaction of its own that may (a temporary
    function, nothing in the store), and reads."""
    if not store.read_only:
        raise StoreError(
            f"{store.path}: the database is read-only (its transactions are read-only by "
            "default): this command writes to it (a host writes every hand into it). Run it "
            "on a database it may write; reading commands work where it is"
        )
    with store.conn.raw.transaction():
        store.conn.raw.execute("SET TRANSACTION READ WRITE")
        store.conn.raw.execute(JSON_OR_NULL)


def connect(
    url: str, create: bool = False, clock: Clock = SYSTEM, write: bool = True, upgrade: bool = True
) -> PgStore:
    """Open the PostgreSQL store at `url`: with `create`, make gmtool's schema in an empty
    database (the database itself must exist); writers bring an older schema up to date,
    readers (`write=False`) read in read-only transactions and change nothing."""
    raw = open_connection(url)
    store = PgStore(url, raw, clock, read_only=not (write or create))
    try:
        if raw.execute("SHOW transaction_read_only").fetchone()[0] == "on":  # type: ignore[index]
            _read_only_database(store)
        else:
            raw.execute(JSON_OR_NULL)
        if store.read_only:
            raw.execute("SET default_transaction_read_only = on")
        pg_schema.check(store, create, upgrade)
    except psycopg.errors.InsufficientPrivilege as error:
        store.close()
        raise StoreError(
            f"{store.path}: {first_line(error)}: this role may not make or read gmtool's "
            "schema; run `gmtool db init` as the role that owns (or will own) its tables, "
            "and `gmtool db grant` to give hosts, consoles and support their roles"
        ) from None
    except psycopg.Error as error:
        store.close()
        raise StoreError(f"{store.path}: cannot use this database: {first_line(error)}") from None
    except BaseException:
        store.close()
        raise
    return store
