"""A waiting console's word and lock in a PostgreSQL store (issue 26): where a console
that waits for a GM command says so when the store has no folder to keep a lease file in
(house/lease.py holds the rules; this module holds the SQL).

- the word: one row of `console_words` per command, by its request's digest: the
  console's signed note and when it wrote it, upserted every time it renews its word and
  deleted once the command has a fate. Not evidence: it says who still waits.
- the lock: a session-level advisory lock keyed by the request's digest, held by the
  console's own connection while it waits. PostgreSQL releases it when that connection
  ends however it ends (a console killed with SIGKILL included), so a host that finds it
  free (`pg_locks`) knows nobody waits for the command.
- the clock: the database's (`clock_timestamp()`), one clock for consoles and hosts on
  any machine, where a SQLite store's lease uses the machine's.
- the wake-up: a console that queues a command says so on `CHANNEL` (NOTIFY); a host
  listens there (`Listener`) and looks at its commands at once instead of at its next poll.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING

import psycopg

from gmtool.store.errors import StoreError

if TYPE_CHECKING:
    from gmtool.store.pg import PgStore

CHANNEL = "gmtool_commands"  # NOTIFY'd with the table's id when a command is queued


@contextlib.contextmanager
def _plainly(what: str) -> Iterator[None]:
    """A database error as one plain StoreError (a role not granted `console_words`, a
    connection lost)."""
    try:
        yield
    except psycopg.Error as error:
        first = (str(error).strip().splitlines() or [type(error).__name__])[0]
        raise StoreError(f"{what}: {first}") from None


def lock_key(digest: str) -> int:
    """The advisory lock key of the command whose request has this (hex) digest: its
    first 64 bits, as PostgreSQL's signed bigint."""
    key = int(digest[:16], 16)
    return key - (1 << 64) if key >= 1 << 63 else key


def database_time(store: PgStore) -> float:
    """The database's clock now (seconds since the epoch)."""
    with _plainly("reading the database's clock"):
        row = store.one("SELECT EXTRACT(EPOCH FROM clock_timestamp())::float8")
    return float(row[0])


def hold(store: PgStore, digest: str) -> bool:
    """Take the command's lock on this connection (session level); False when another
    session holds it."""
    with _plainly("taking the command's lock"):
        return bool(store.one("SELECT pg_try_advisory_lock(?)", (lock_key(digest),))[0])


def let_go(store: PgStore, digest: str) -> None:
    with _plainly("giving the command's lock up"):
        store.one("SELECT pg_advisory_unlock(?)", (lock_key(digest),))


def held(store: PgStore, digest: str) -> bool:
    """Whether some session holds the command's lock now (in this database)."""
    key = lock_key(digest) & 0xFFFFFFFFFFFFFFFF
    with _plainly("reading the command's lock"):
        row = store.one(
            "SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory' AND granted AND "
            "database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
            "AND classid::text::bigint = ? AND objid::text::bigint = ? AND objsubid = 1",
            (key >> 32, key & 0xFFFFFFFF),
        )
    return bool(row[0])


def say(store: PgStore, digest: str, note: str, at: float) -> None:
    """The console's word for the command, written over its last one (not durable: a word
    lost in a crash is a word gone stale, the safe way to fail)."""
    raw = store.conn.raw
    with _plainly("writing the console's word"), raw.transaction():
        raw.execute("SET LOCAL synchronous_commit TO OFF")
        store.conn.execute(
            "INSERT INTO console_words (digest, note, written_at) VALUES (?, ?, ?) "
            "ON CONFLICT (digest) DO UPDATE SET note = excluded.note, "
            "written_at = excluded.written_at",
            (digest, note, at),
        )


def word(store: PgStore, digest: str) -> str | None:
    """The console's last word for the command (its signed note), if any."""
    with _plainly("reading the console's word"):
        row = store.one("SELECT note FROM console_words WHERE digest = ?", (digest,))
    return None if row is None else str(row[0])


def forget(store: PgStore, digest: str) -> None:
    """The command has a fate: its word goes."""
    with _plainly("removing the console's word"):
        store.conn.execute("DELETE FROM console_words WHERE digest = ?", (digest,))


def announce(store: PgStore, table_id: str) -> None:
    """Wake the hosts: a command for `table_id` is queued (sent at once: autocommit)."""
    with _plainly("waking the hosts"):
        store.one("SELECT pg_notify(?, ?)", (CHANNEL, table_id))


class Listener:
    """A connection of its own that LISTENs on `CHANNEL` (a host's, in a thread of its own:
    psycopg's wait for a notification blocks)."""

    def __init__(self, url: str) -> None:
        from gmtool.store.pg import open_connection

        self.conn = open_connection(url)
        with _plainly("listening for GM commands"):
            self.conn.execute(f"LISTEN {CHANNEL}")

    def wait(self, timeout: float) -> list[str]:
        """The tables of the commands announced within `timeout` seconds (none: []);
        StoreError when the connection is lost."""
        with _plainly("listening for GM commands"):
            return [n.payload for n in self.conn.notifies(timeout=timeout, stop_after=1)]

    def close(self) -> None:
        self.conn.close()
