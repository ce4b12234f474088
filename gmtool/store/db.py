"""Opening the SQLite store: path resolution, pragmas, migrations, write transactions.

Readers open the store read-only and change nothing: a store the user may only read (a
read-only file or folder, WAL included) reads fine, and an older schema is never
migrated by a read. Writers check that the file is whole (`PRAGMA quick_check`) before
anything is written, and bring the schema up to date (the console's writers but `db
init` refuse an older store instead: an upgrade cannot be undone).

Every write transaction begins IMMEDIATE: a DEFERRED transaction that reads and then
writes gets SQLITE_BUSY at once, without waiting for the busy timeout, when another
process writes at the same time. A write that waited out the busy timeout says who
holds the store. Settlement and ledger writes also run with `synchronous=FULL`, so a
power cut never loses a settled hand; everything else uses NORMAL, which WAL keeps
consistent.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import sqlite_utils

from gmtool.errors import UsageError
from gmtool.store.clock import SYSTEM, Clock, now
from gmtool.store.errors import (  # noqa: F401 (callers import them here)
    NoSuchRecord,
    StoreError,
    StoreGone,
)
from gmtool.store.schema import migrate, schema_state
from gmtool.store.url import DEFAULT_DB, locate  # noqa: F401 (callers import DEFAULT_DB here)

BUSY_TIMEOUT_MS = 10_000  # $GMTOOL_BUSY_TIMEOUT_MS overrides it
DAMAGED = (
    "the file is damaged: restore it from a backup (or, if the host was killed "
    "while writing, from the copy a backup tool took), and keep the damaged file for "
    "the investigation"
)


class NotOnPostgres(UsageError):
    """A command that does not run on a PostgreSQL store yet (issue 26 is under way)."""


def resolve_path(db: str | None) -> Path:
    """The SQLite file `--db`, else `$GMTOOL_DB`, else `./gmtool.db` names (a path or
    sqlite:///PATH: store/url.py); a blank `--db` is refused (an empty `$GMTOOL_DB` counts
    as unset, as shells have it), and so is a PostgreSQL URL: the commands that ask for a
    path do not run on PostgreSQL yet (docs/architecture.md, "The store")."""
    location = locate(db)
    if location.path is None:
        raise NotOnPostgres(
            f"{location.shown()}: this command does not run on PostgreSQL yet; so far only "
            "`gmtool db init`, `db grant`, `db copy`, `house run`, `audit`, `deploy`, "
            "`players adjust|token`, `bots --db`, `gm users add`, `tables kick|close|open`, "
            "`gm witness add|remove|quorum` and the reading commands `players list|show`, "
            "`tables list|show|watch`, `hands list|show|replay|export`, `gm users list`, "
            "`gm log`, `gm witness list` and `deploy history` do (docs/architecture.md, "
            '"PostgreSQL: the state of this step"): use a SQLite store (a file path) for the '
            "rest"
        )
    return location.path


def files_beside(store: object) -> Path | None:
    """The path whose neighbours hold a store's files (`<db>.checkpoint.pub`, `<db>.key`,
    `<db>.witness/`): a SQLite store's file. A PostgreSQL store has such a place only in
    a host's home folder (`house run --home DIR`: `DIR/<database name>`, store/pg.py);
    else None, and its keys and witness folders are given to each command (`--key`,
    `--witness`)."""
    if getattr(store, "is_postgres", False):
        return getattr(store, "home_files", None)
    return getattr(store, "path", None)


def files_of(store: object) -> Path:
    """`files_beside(store)`, where a caller cannot do without it (a host's keys)."""
    place = files_beside(store)
    if place is None:
        raise StoreError(
            f"{getattr(store, 'path', 'this store')}: a PostgreSQL store keeps no files; a "
            "host keeps its keys and witness folder in its home folder (`house run --home DIR`)"
        )
    return place


class Store:
    """One connection to the store, with the repository methods mixed in by `open_store`."""

    dialect = "sqlite"  # store/dialect.py

    def __init__(
        self, path: Path, conn: sqlite3.Connection, clock: Clock = SYSTEM, read_only: bool = False
    ) -> None:
        self.path = path
        self.conn = conn
        self.db = sqlite_utils.Database(conn)
        self.clock = clock  # the time stored rows are stamped with
        self.read_only = read_only

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
        if self.read_only:
            raise StoreError(f"{self.path} was opened for reading; this would write to it")
        if self.conn.in_transaction:
            raise StoreError("nested write transaction")  # a bug: keep transactions flat
        try:
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
        except sqlite3.OperationalError as error:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            raise StoreError(_write_failed(self.path, error)) from None

    @contextlib.contextmanager
    def snapshot(self, strict: bool = False) -> Iterator[None]:
        """One consistent view of the store for many reads: a read transaction, so rows a
        host commits meanwhile (events, chain heads) are not half seen. Text that is not
        UTF-8 (only an edited store holds it) is read with its bad bytes kept as escapes,
        for the reader to report rather than to stop on.

        `strict` reads text as SQLite decodes it (the lenient reading costs a Python call
        per value: a read of every event took 60% longer with it), and text that is not
        UTF-8 raises an error `undecodable` recognises: the reader then goes again in a
        lenient snapshot (`run_audit` does: a clean store is read once, fast)."""
        if self.conn.in_transaction:
            raise StoreError("nested snapshot")  # a bug: keep transactions flat
        factory = self.conn.text_factory
        self.conn.text_factory = str if strict else _lenient_text
        self.conn.execute("BEGIN")
        try:
            yield
        finally:
            self.conn.execute("ROLLBACK")
            self.conn.text_factory = factory

    def one(self, sql: str, params: tuple | list = ()) -> sqlite3.Row | None:
        return self.conn.execute(sql, params).fetchone()

    def all(self, sql: str, params: tuple | list = ()) -> list[sqlite3.Row]:
        return self.conn.execute(sql, params).fetchall()


# Every text value a snapshot reads goes through this: a C-level partial, not a Python
# function (a call per value made the audit 4% slower in instructions).
_lenient_text = functools.partial(str, encoding="utf-8", errors="surrogateescape")


def undecodable(error: BaseException) -> bool:
    """Whether `error` is a strict snapshot's refusal of text that is not UTF-8 (raised
    where it was read, or in a worker process and sent back)."""
    return isinstance(error, sqlite3.OperationalError) and str(error).startswith(
        "Could not decode to UTF-8"
    )


def connect(
    path: Path,
    create: bool = False,
    clock: Clock = SYSTEM,
    write: bool = True,
    upgrade: bool = True,
) -> Store:
    """Open the store at `path` (with `create`, create it first): writers check the file and
    bring its schema up to date (with `upgrade`: the console's writers leave that to `db
    init`, and refuse an older store); readers (`write=False`) open it read-only and change
    nothing. Rows a writer adds are stamped by `clock`."""
    if not create and not path.exists():
        raise StoreError(
            f"no database at {path}: run `gmtool db init` (or pass --db, or set GMTOOL_DB)"
        )
    if path.exists() and path.is_dir():
        raise StoreError(f"{path} is a folder, not a database file")
    if path.exists() and not path.is_file():  # SQLite would wait on a pipe for ever
        raise StoreError(f"{path} is not a regular file (a pipe or a device), not a database file")
    if create and (not path.exists() or path.stat().st_size == 0):
        _create_private(path)
    elif not create and write and path.is_file() and path.stat().st_size == 0:
        raise StoreError(
            f"{path} is an empty file, not a gmtool database: run `gmtool db "
            "init` to make it one (nothing was written)"
        )
    try:
        store = _open_for_writing(path, clock) if write else _open_for_reading(path, clock)
    except sqlite3.DatabaseError as error:
        raise StoreError(_cannot_use(path, error)) from None
    try:
        _check_schema(store, create, upgrade)
    except sqlite3.DatabaseError as error:
        store.close()
        raise StoreError(_cannot_use(path, error)) from None
    except BaseException:
        store.close()
        raise
    return store


def open_location(
    db: str | None,
    create: bool = False,
    write: bool = True,
    clock: Clock = SYSTEM,
    postgres: bool = False,
    upgrade: bool = True,
) -> Store:
    """The store `db` names (store/url.py), opened as `connect` opens a file; a PostgreSQL
    URL only where the caller runs on PostgreSQL (`postgres`), else NotOnPostgres."""
    location = locate(db)
    if location.url is not None and postgres:
        from gmtool.store import pg_open

        return pg_open.connect(  # type: ignore[return-value]
            location.url, create=create, clock=clock, write=write, upgrade=upgrade
        )
    return connect(resolve_path(db), create=create, clock=clock, write=write, upgrade=upgrade)


def _create_private(path: Path) -> None:
    """An empty store file readable by its owner only (0600): it holds the hole cards of
    running hands. SQLite gives the WAL and shared-memory files the same mode."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:  # an empty file given (or made meanwhile): made private too
        try:
            if path.stat().st_size == 0:
                os.chmod(path, 0o600)
        except OSError as error:
            raise StoreError(
                f"{path}: cannot make the store readable by its owner only: "
                f"{error.strerror or error}"
            ) from None
    except OSError as error:
        raise StoreError(f"{path}: cannot create the store: {error.strerror or error}") from None


MAX_BUSY_TIMEOUT_MS = 3_600_000


def _busy_timeout_ms() -> int:
    """$GMTOOL_BUSY_TIMEOUT_MS (whole milliseconds, 0 to an hour), else 10 s."""
    text = os.environ.get("GMTOOL_BUSY_TIMEOUT_MS")
    if text is None or not text.strip():
        return BUSY_TIMEOUT_MS
    value = text.strip()
    if not value.isascii() or not value.isdigit() or int(value) > MAX_BUSY_TIMEOUT_MS:
        raise UsageError(
            f"GMTOOL_BUSY_TIMEOUT_MS={text[:40]!r}: give whole milliseconds from "
            f"0 to {MAX_BUSY_TIMEOUT_MS}"
        )
    return int(value)


def _open_for_writing(path: Path, clock: Clock) -> Store:
    timeout = _busy_timeout_ms()
    conn = sqlite3.connect(str(path), timeout=timeout / 1000, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    store = Store(path, conn, clock)
    try:
        conn.execute(f"PRAGMA busy_timeout={timeout}")
        problem = conn.execute("PRAGMA quick_check(1)").fetchone()[0]
        if problem != "ok":
            raise StoreError(f"{path}: {DAMAGED} (SQLite: {problem})")
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
    except sqlite3.OperationalError as error:
        store.close()
        raise StoreError(_write_failed(path, error)) from None
    except BaseException:
        store.close()
        raise
    return store


def _open_for_reading(path: Path, clock: Clock) -> Store:
    """Read-only; if SQLite cannot share the WAL (a read-only folder without its -shm),
    the file is read as immutable: nobody can be writing a store in such a folder."""
    uri = "file:" + quote(str(path.resolve()))
    for mode in ("?mode=ro", "?mode=ro&immutable=1"):
        conn = sqlite3.connect(
            uri + mode, uri=True, timeout=_busy_timeout_ms() / 1000, check_same_thread=False
        )
        conn.row_factory = sqlite3.Row
        try:
            conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        except sqlite3.OperationalError as error:
            conn.close()
            # without write access to the folder SQLite cannot share the WAL: it says
            # "unable to open", or "attempt to write a readonly database"
            if (
                "unable to open" in str(error) or "readonly" in str(error)
            ) and "immutable" not in mode:
                wal = path.with_name(path.name + "-wal")
                if wal.exists() and wal.stat().st_size > 0:  # immutable would not read it
                    raise StoreError(
                        f"{path}: its newest writes are in {wal.name}, which "
                        "this user cannot share (no write access to the folder "
                        "or its -shm file); ask its owner to run `gmtool db "
                        "init` (it checkpoints the store) or copy all three "
                        "files"
                    ) from None
                continue
            raise
        return Store(path, conn, clock, read_only=True)
    raise StoreError(f"{path}: cannot open it for reading")  # not reached


def _check_schema(store: Store, create: bool, upgrade: bool = True) -> None:
    path = store.path
    state = schema_state(store.db)
    if state == "newer":
        raise StoreError(
            f"{path} was written by a newer gmtool (schema newer than this "
            "version knows); upgrade gmtool"
        )
    if state == "foreign":
        raise StoreError(
            f"{path} is not a gmtool database: it belongs to another "
            "application (it has tables, none of them gmtool's); gmtool will "
            "not write into it: choose another --db path"
        )
    if state == "current":
        return
    if not create and state == "empty":
        raise StoreError(
            f"{path} is not a gmtool database (no gmtool tables): run `gmtool db init`"
        )
    if store.read_only:
        raise StoreError(
            f"{path} was written by an older gmtool: run `gmtool db init --db "
            f"{path}` (as a user who may write it) to upgrade it; reading "
            "commands never change a store"
        )
    if not (create or upgrade):  # an upgrade cannot be undone: only `db init` makes one
        raise StoreError(
            f"{path} was written by an older gmtool: run `gmtool db init --db {path}` to "
            "upgrade it (an older gmtool cannot open it afterwards); nothing was changed"
        )
    migrate(store.db)


def _is_sqlite_file(path: Path) -> bool:
    try:
        with open(path, "rb") as file:
            return file.read(16) == b"SQLite format 3\x00"  # every SQLite file's first bytes
    except OSError:
        return True  # (unreadable: SQLite's own words then say why)


def _cannot_use(path: Path, error: sqlite3.DatabaseError) -> str:
    text = str(error)
    if "not a database" in text and not _is_sqlite_file(path):
        return (
            f"{path} is not a database (not an SQLite file): check --db (or $GMTOOL_DB); "
            f"if this file was the store, {DAMAGED}"
        )
    if "not a database" in text or "malformed" in text or "corrupt" in text:
        return f"{path}: {DAMAGED} (SQLite: {text})"
    if "readonly" in text or "read-only" in text:
        return (
            f"{path}: this user may not write the store or its folder (SQLite: {text}); "
            "reading commands still work"
        )
    if "locked" in text or "busy" in text:
        return _write_failed(path, error)
    return f"{path}: cannot use this database: {text}"


def _write_failed(path: Path, error: sqlite3.OperationalError) -> str:
    text = str(error)
    if "locked" not in text and "busy" not in text:
        return (
            _cannot_use(path, error)
            if "readonly" in text or "malformed" in text
            else f"{path}: the write failed: {text}"
        )
    return (
        f"{path} is locked by {lock_holder(path)}; waited "
        f"{_busy_timeout_ms() / 1000:g} s. Try again once it is done (a host holds the "
        "store only for moments at a time; a hold this long means a stuck process)"
    )


DEMO_MARK = 0x444D4F31  # "DMO1" in the file header's user_version: a store the demo made


def mark_demo(store: Store) -> None:
    """Mark a new store as the demo's own (the demo may replace it, and nothing else)."""
    store.conn.execute(f"PRAGMA user_version = {DEMO_MARK}")


def demo_store_problem(path: Path) -> str | None:
    """None if `path` is a store the demo made (so it may replace it), else why not.

    Stores a demo made before the mark existed count as the demo's if every deployment in
    them was made by "demo" and they have no GM user."""
    if path.is_symlink() or not path.is_file():
        return "is not a regular file"
    try:
        conn = sqlite3.connect(f"file:{quote(str(path.resolve()))}?mode=ro", uri=True)
        try:
            if conn.execute("PRAGMA user_version").fetchone()[0] == DEMO_MARK:
                added = conn.execute(  # beyond the demo's own operator and deployments
                    "SELECT (SELECT COUNT(*) FROM gm_users WHERE name != 'demo') + (SELECT "
                    "COUNT(*) FROM gm_actions WHERE action != 'deploy' AND NOT (id = 1 AND "
                    "action = 'users_add' AND actor = 'demo'))"
                ).fetchone()[0]
                return (
                    None
                    if not added
                    else (
                        "is a demo store that GM users have since "
                        "worked in (users, adjustments, commands)"
                    )
                )
            tables = {
                r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            }
            if not {"deployments", "gm_users", "hands"} <= tables:
                return "is not a gmtool store (another application's database)"
            others = conn.execute(
                "SELECT (SELECT COUNT(*) FROM deployments WHERE "
                "deployed_by != 'demo') + (SELECT COUNT(*) FROM gm_users) + "
                "(SELECT COUNT(*) = 0 FROM deployments)"
            ).fetchone()[0]
            hands = conn.execute("SELECT COUNT(*) FROM hands").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.DatabaseError:
        return "is not a database"
    return None if not others else f"is a gmtool store that is not the demo's ({hands} hands)"


def ensure_unused(path: Path) -> None:
    """Raise StoreError, saying who, if another process is writing the store at `path`
    (waits the busy timeout for it first); a store about to be replaced must be idle."""
    conn = sqlite3.connect(
        f"file:{quote(str(path.resolve()))}?mode=rw", uri=True, timeout=_busy_timeout_ms() / 1000
    )
    try:
        conn.execute("BEGIN EXCLUSIVE")
        conn.execute("ROLLBACK")
    except sqlite3.OperationalError as error:
        raise StoreError(_write_failed(path, error)) from None
    finally:
        conn.close()


def host_lock_path(path: Path) -> Path:
    """The file a host holds locked while it runs on the store at `path`."""
    return path.with_name(path.name + ".host.lock")


def lock_holder(path: Path) -> str:
    """Who holds a store: its host (the flock beside it) or another process."""
    import fcntl

    lock = host_lock_path(path)
    if lock.exists():
        try:
            fd = os.open(lock, os.O_RDONLY)
        except OSError:
            return "another process (its host lock cannot be read)"
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            fcntl.flock(fd, fcntl.LOCK_UN)
        except BlockingIOError:
            pid = os.read(fd, 32).decode("ascii", "replace").strip() or "?"
            if pid != str(os.getpid()):
                return f"its host (`gmtool house run`, pid {pid})"
        finally:
            os.close(fd)
    return "another process writing it (a console command or another program)"
