"""Fresh PostgreSQL databases for the tests that run on the real server (issue 26).

Each test module makes its own databases on the server at `$GMTOOL_TEST_PG` (by default
postgresql://postgres@127.0.0.1:5432/postgres, trust authentication), named uniquely
(module, process, random), and drops them, and the roles named after them, when the
module ends: parallel runs and CI jobs never meet. A server that cannot be reached fails
the tests with one line saying how to run them (never a skip: a skipped test proves
nothing).
"""

from __future__ import annotations

import atexit
import os
import queue
import re
import secrets
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
from helpers import until
from psycopg import sql

from gmtool.store.pg import WRITE_LOCK

HOSTING = re.compile(r"^hosting \d+ table\(s\): (.+) \(speed", re.M)
ADMIN_URL = os.environ.get("GMTOOL_TEST_PG", "postgresql://postgres@127.0.0.1:5432/postgres")
HOW = (
    "PostgreSQL is not reachable at {url} ({error}): start PostgreSQL 15 on 127.0.0.1:5432 "
    "with trust authentication, or point GMTOOL_TEST_PG at a superuser's URL"
)


def admin() -> psycopg.Connection:
    """A superuser connection to the server's maintenance database; fail when there is
    none."""
    try:
        return psycopg.connect(ADMIN_URL, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as error:
        message = HOW.format(url=ADMIN_URL, error=str(error).strip().splitlines()[0])
        pytest.fail(message)


def url_of(database: str, user: str | None = None) -> str:
    """The URL of `database` on the test server, as `user` (else the admin's user)."""
    parts = urlsplit(ADMIN_URL)
    netloc = parts.netloc
    if user is not None:
        netloc = f"{user}@{netloc.rsplit('@', 1)[-1]}"
    return urlunsplit(parts._replace(netloc=netloc, path=f"/{database}"))


class Databases:
    """Makes databases on the test server and drops them (and their roles) at the end."""

    def __init__(self, tag: str) -> None:
        self.tag = re.sub(r"[^a-z0-9]", "", tag.lower())[:12]
        self.conn = admin()
        self.made: list[str] = []

    def new(self) -> str:
        """A new empty database's name (lower case, a valid role-name prefix)."""
        name = f"gmt_{self.tag}_{os.getpid()}_{secrets.token_hex(3)}"
        self.conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        self.made.append(name)
        return name

    def clone(self, source: str) -> str:
        """A new database made from `source` (CREATE DATABASE ... TEMPLATE: its files
        copied by the server, no row sent again; nobody may be connected to `source`)."""
        name = f"gmt_{self.tag}_{os.getpid()}_{secrets.token_hex(3)}"
        self.conn.execute(
            sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
                sql.Identifier(name), sql.Identifier(source)
            )
        )
        self.made.append(name)
        return name

    def drop_all(self) -> None:
        for name in self.made:
            self.conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )
            roles = self.conn.execute(
                "SELECT rolname FROM pg_roles WHERE starts_with(rolname, %s)", (name + "_",)
            ).fetchall()
            for (role,) in roles:
                self.conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))
        self.conn.close()


def databases(tag: str) -> Iterator[Databases]:
    """The body of a module-scoped fixture: `yield from databases(__name__)`. The module's
    databases are dropped by a thread of their own while the next module runs (each DROP
    DATABASE waits for a checkpoint of the server: seconds on a busy machine); the test
    process waits for the last drops before it exits."""
    made = Databases(tag)
    try:
        yield made
    finally:
        _dropping().put(made)


_DROPS: queue.Queue[Databases | None] | None = None


def _dropping() -> queue.Queue[Databases | None]:
    """The queue of the process's dropping thread (started at the first module's end)."""
    global _DROPS
    if _DROPS is None:
        _DROPS = queue.Queue()
        worker = threading.Thread(target=_drop_each, args=(_DROPS,), daemon=True)
        worker.start()

        def finish() -> None:
            _DROPS.put(None)
            worker.join()

        atexit.register(finish)
    return _DROPS


def _drop_each(drops: queue.Queue[Databases | None]) -> None:
    while (made := drops.get()) is not None:
        try:
            made.drop_all()
        except psycopg.Error as error:  # (the server gone: the others may still drop)
            print(f"could not drop the test databases {made.made}: {error}")


def rows(url: str, sql: str, params: tuple = ()) -> list[tuple]:
    """The rows of one query on the database at `url` (a connection of its own)."""
    with psycopg.connect(url) as conn:  # (no params: a `%` in `sql` is only a character)
        return conn.execute(sql, params or None).fetchall()


def one(url: str, sql: str, params: tuple = ()):
    """The first column of the first row of one query on the database at `url`."""
    return rows(url, sql, params)[0][0]


def hosted_tables(host) -> list[str]:
    """The tables a `gmtool house run --verbose` host says it hosts."""
    return until(lambda: HOSTING.search(host.output), "the host's tables").group(1).split(", ")


def seated(url: str, table: str) -> list[str]:
    return [r[0] for r in rows(url, "SELECT player FROM seats WHERE table_id = %s", (table,))]


def local_ports(pid: int) -> list[int]:
    """The local TCP ports of process `pid`'s open sockets (its connections to the
    database server): socket inodes from /proc/PID/fd, ports from /proc/PID/net/tcp*."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        target = os.readlink(fd) if fd.is_symlink() else ""
        if target.startswith("socket:["):
            inodes.add(target[len("socket:[") : -1])
    ports = []
    for table in ("tcp", "tcp6"):
        for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            if fields[9] in inodes:
                ports.append(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


def _state(task: Path) -> str:
    """A thread's state letter in /proc (T: stopped by a signal)."""
    return (task / "stat").read_text().rsplit(")", 1)[1].split()[0]


def _in_a_transaction(url: str, pid: int) -> bool:
    """Whether one of process `pid`'s database sessions is inside a transaction."""
    ports = local_ports(pid)
    assert ports, f"process {pid} has no TCP connection to the database"
    with psycopg.connect(url) as conn:
        (busy,) = conn.execute(
            "SELECT COUNT(*) FROM pg_stat_activity WHERE client_port = ANY(%s) "
            "AND xact_start IS NOT NULL",
            (ports,),
        ).fetchone()
    return busy > 0


def _stop(pid: int) -> None:
    """SIGSTOP, once every thread of the process has stopped."""
    os.kill(pid, signal.SIGSTOP)
    until(lambda: all(_state(task) == "T" for task in Path(f"/proc/{pid}/task").iterdir()), "stop")


def stopped_outside_a_transaction(url: str, pid: int) -> bool:
    """Stop process `pid` with SIGSTOP, and keep it stopped only if none of its database
    sessions is inside a transaction: a host frozen inside one holds the writers' lock
    (store/pg.py), and every other writer, the console included, waits for it."""
    _stop(pid)
    if _in_a_transaction(url, pid):
        os.kill(pid, signal.SIGCONT)
        return False
    return True


def _holds_the_writers_lock(url: str, pid: int) -> bool:
    """Whether one of process `pid`'s database sessions holds the writers' advisory lock
    (store/pg.py WRITE_LOCK: it is inside a write transaction; a read-only snapshot holds
    nobody up, and a frozen one may outlive a test)."""
    ports = local_ports(pid)
    assert ports, f"process {pid} has no TCP connection to the database"
    with psycopg.connect(url) as conn:
        (held,) = conn.execute(
            "SELECT COUNT(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
            "WHERE a.client_port = ANY(%s) AND l.locktype = 'advisory' AND l.granted "
            "AND ((l.classid::bigint << 32) | l.objid::bigint) = %s",
            (ports, WRITE_LOCK),
        ).fetchone()
    return held > 0


def stopped_inside_a_transaction(url: str, pid: int) -> bool:
    """Stop process `pid` with SIGSTOP, and keep it stopped only if one of its database
    sessions is inside a write transaction, holding the writers' lock while it is stopped
    (CI: a host stopped inside a read-only snapshot held nobody up, its tables were taken
    over before the server ended its session, and it stopped cleanly when resumed)."""
    _stop(pid)
    if not _holds_the_writers_lock(url, pid):
        os.kill(pid, signal.SIGCONT)
        return False
    return True
