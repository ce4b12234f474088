"""Rows holding a value of a type gmtool never writes in its column (SQLite keeps any type
in any column: a blob in a text column, text in an integer one, written by hand).

The checks read columns as the schema declares them; a value of another type can stop
one (a blob in SQL's JSON functions, text compared with a number), so a command that
stopped on an error asks here which rows were edited, to name them instead. Nothing is
read on a clean store's way: this runs only after something went wrong. PostgreSQL
enforces its columns' types itself: nothing to find there.
"""

from __future__ import annotations

import sqlite3
from typing import NamedTuple

from gmtool.errors import Damaged
from gmtool.store.db import Store
from gmtool.store.dialect import SQLITE

# The SQLite types a column of each declared type holds as gmtool writes it (NULL aside,
# which the checks read as missing).
_HOLDS = {"INTEGER": "'integer'", "TEXT": "'text'", "BLOB": "'blob'", "REAL": "'real', 'integer'"}


class Mistyped(NamedTuple):
    table: str
    key: str  # the row's primary key as SQL writes it (`'t1'`, `12`; `3,17` for two columns)
    column: str
    declared: str  # as the schema says: INTEGER, TEXT, BLOB or REAL
    found: str  # SQLite's typeof(): integer, real, text or blob


def mistyped_rows(store: Store, limit: int = 20) -> list[Mistyped]:
    """Up to `limit` values, in table order, whose type is not their column's."""
    if store.dialect != SQLITE:
        return []
    found: list[Mistyped] = []
    tables = [
        name
        for (name,) in store.conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE "
            "'sqlite_%' AND name NOT LIKE '\\_%' ESCAPE '\\' ORDER BY name"
        )
    ]
    for table in tables:
        info = list(store.conn.execute(f'PRAGMA table_info("{table}")'))
        keys = [row[1] for row in info if row[5]]
        key = " || ',' || ".join(f'quote("{name}")' for name in keys) if keys else "rowid"
        for column, declared in [(row[1], str(row[2]).upper()) for row in info]:
            if declared not in _HOLDS:
                continue
            if len(found) >= limit:
                return found
            rows = store.conn.execute(
                f'SELECT {key}, typeof("{column}") FROM "{table}" WHERE typeof("{column}") '
                f"NOT IN ({_HOLDS[declared]}, 'null') LIMIT ?",
                (limit - len(found),),
            )
            found += [Mistyped(table, name, column, declared, kind) for name, kind in rows]
    return found


# The errors a value of an unexpected type raises where gmtool reads it (a comparison, a
# JSON function, an attribute of what was to be an object): only these are worth asking
# about (a closed pipe or an interrupt never is, and the question reads every table).
TYPE_ERRORS = (
    TypeError,
    ValueError,
    AttributeError,
    KeyError,
    IndexError,
    OverflowError,
    sqlite3.DatabaseError,
)


def damaged_by_edits(store: Store) -> Damaged | None:
    """After a reading command stopped on an error: Damaged naming the rows whose values
    are of a type gmtool never writes (which stopped it), or None when there are none."""
    rows = mistyped_rows(store, limit=5)
    if not rows:
        return None
    named = "; ".join(
        f"{row.table} row {row.key}: {row.column} holds {row.found} (gmtool writes {row.declared})"
        for row in rows
    )
    return Damaged(
        f"the store holds values of a type gmtool never writes ({named}): it was edited; "
        "`gmtool audit` reports what else changed"
    )
