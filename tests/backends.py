"""One fixture, both store backends (issue 26): `any_store` is a fresh, migrated store,
SQLite (a file in `tmp_path`) or PostgreSQL (a new database on the test server,
tests/postgres.py), opened through `open_location`, the entry point the commands use.
A test that takes it runs once per backend with the same assertions.

Import the fixtures into a test module: `from backends import any_store_fixture,
pg_server_fixture` (`# noqa: F401`: pytest finds them by their names, `any_store` and
`pg_server`). The PostgreSQL databases are dropped when
the module's tests end; an unreachable server fails the tests, never skips them.
"""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from postgres import Databases, databases, url_of

from gmtool.store.db import StoreError, open_location

BACKENDS = ("sqlite", "postgresql")


class StepClock:
    """A clock that moves one second at every reading of the wall: stored times are
    distinct and rise, the same on both backends (no test reads the machine's time)."""

    def __init__(self, start: float = 1_800_000_000.0) -> None:
        self.at = start

    def monotonic(self) -> float:
        return self.at

    def wall(self) -> float:
        self.at += 1.0
        return self.at


class SetClock:
    """A wall clock the test sets."""

    def __init__(self, at: float = 1_800_000_000.0) -> None:
        self.at = at

    def monotonic(self) -> float:
        return self.at

    def wall(self) -> float:
        return self.at


@pytest.fixture(scope="module", name="pg_server")
def pg_server_fixture() -> Iterator[Databases]:
    yield from databases("backends")


def location(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """Where a new store of `backend` goes: a file path, or a new database's URL."""
    if backend == "sqlite":
        return str(tmp_path / "store.db")
    server: Databases = request.getfixturevalue("pg_server")
    return url_of(server.new())


@pytest.fixture(params=BACKENDS, name="any_store")
def any_store_fixture(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator:
    """A fresh, migrated store of each backend, open for writing (`store.dialect` says
    which), its rows stamped by a `StepClock`."""
    where = location(request.param, tmp_path, request)
    with open_location(where, create=True, clock=StepClock(), postgres=True) as store:
        yield store


class Audited:
    """Where a test audits a store it made or edited as a SQLite file: the file itself, or
    (postgresql) a copy of its rows, as they are, in a new database of the test server
    (`gmtool db copy`), audited with the files that lie beside the SQLite file (the
    host's checkpoint verifier key and the recorded witness folder). Tampered rows are
    copied as tampered, so both backends' audits must find the same edits."""

    def __init__(self, backend: str, request: pytest.FixtureRequest) -> None:
        self.backend, self.request = backend, request

    def args(self, db: Path, refused: str | None = None) -> list[str] | None:
        """The `--db ...` arguments of an audit of `db` on this backend; None where
        PostgreSQL's own constraints refuse to hold the rows as they are and the copy's
        error says `refused` (the test names such edits: any other refusal fails it)."""
        if self.backend == "sqlite":
            return ["--db", str(db)]
        from helpers import recorded_witness

        from gmtool.store.copy import copy_store

        server: Databases = self.request.getfixturevalue("pg_server")
        url = url_of(server.new())
        # `gmtool db copy`'s own work, in this process (the many copies of the tamper
        # suites: no interpreter started for each)
        try:
            with (
                open_location(str(db)) as source,
                open_location(url, create=True, postgres=True) as dest,
            ):
                copy_store(source, dest)  # type: ignore[arg-type]
        except StoreError as error:
            if refused is None or refused not in str(error):
                raise
            return None
        key = f"{db}.checkpoint.pub"
        return ["--db", url, "--key", key, "--witness", str(recorded_witness(db))]


@pytest.fixture(params=BACKENDS, name="audited")
def audited_fixture(request: pytest.FixtureRequest) -> Audited:
    """The backend a test's audit runs on (each test once per backend): `audited.args(db)`
    after the test has made or edited the SQLite store `db`."""
    return Audited(request.param, request)


# The files a SQLite store keeps beside it that a host of its PostgreSQL copy keeps in
# its home, named after the database (`home/<database><suffix>`): its keys.
KEY_FILES = (".key", ".seed.key", ".checkpoint.key", ".checkpoint.pub")


@dataclass
class Located:
    """A store a suite runs its commands, hosts and reads on: `db` is what `--db` takes (a
    SQLite file, or a PostgreSQL URL whose hosts keep their files in `home`)."""

    backend: str
    db: str
    home: Path

    @property
    def postgres(self) -> bool:
        return self.backend == "postgresql"

    def env(self, **extra: str) -> dict[str, str]:
        """A command's environment: on PostgreSQL `$GMTOOL_HOME` is the hosts' home (where
        the console finds the hosts' checkpoint key, as an operator sets it); a SQLite
        store's files are beside it (and `house run` refuses a home there)."""
        from helpers import clean_env

        home = {"GMTOOL_HOME": str(self.home)} if self.postgres else {}
        return clean_env(**home, **extra)

    def audit_args(self) -> list[str]:
        """What `gmtool audit` needs besides `--db` here (PostgreSQL: the hosts'
        checkpoint verifier key from their home; SQLite finds it beside the file)."""
        name = self.db.rsplit("/", 1)[-1]
        return ["--key", str(self.home / f"{name}.checkpoint.pub")] if self.postgres else []

    def host_args(self) -> list[str]:
        """What `gmtool house run` needs besides `--db` here (PostgreSQL: `--home`)."""
        return ["--home", str(self.home)] if self.postgres else []

    def host_options(self) -> dict:
        """What the `virtual_host` fixture needs besides `db` here (its `home`)."""
        return {"home": self.home} if self.postgres else {}

    @contextmanager
    def open(self, write: bool = False, clock=None) -> Iterator:
        """The store, opened as the commands open it (`store.all`, `store.one`: `?`
        placeholders on both backends)."""
        extra = {} if clock is None else {"clock": clock}
        with open_location(self.db, write=write, postgres=True, **extra) as store:
            if self.postgres:
                store.at_home(self.home)
            yield store

    def rows(self, sql: str, params: tuple = ()) -> list[tuple]:
        with self.open() as store:
            return [tuple(row) for row in store.all(sql, params)]

    def one(self, sql: str, params: tuple = ()):
        """The first column of the first row of `sql`."""
        return self.rows(sql, params)[0][0]


def carry(backend: str, db: Path, request: pytest.FixtureRequest, tmp_path: Path) -> Located:
    """The SQLite store `db` as it is, on `backend`: the file itself, or a copy of its rows
    in a new database of the test server (`gmtool db copy`'s own code) with its key files
    (`home/<database>.checkpoint.key`, ...) and witness folders (under the names the store
    records) in a home of its own, where a host of the copy keeps them."""
    if backend == "sqlite":
        return Located(backend, str(db), db.parent)
    from gmtool.store.copy import copy_store

    server: Databases = request.getfixturevalue("pg_server")
    name = server.new()
    url = url_of(name)
    with open_location(str(db)) as source, open_location(url, create=True, postgres=True) as dest:
        copy_store(source, dest)  # type: ignore[arg-type]
    home = tmp_path / "home"
    home.mkdir(mode=0o700, exist_ok=True)
    for suffix in KEY_FILES:
        made = db.with_name(db.name + suffix)
        if made.exists():
            shutil.copy2(made, home / f"{name}{suffix}")
    for (location,) in _witness_folders(db):  # under the names the store records them
        if not Path(location).is_absolute() and (db.parent / location).is_dir():
            shutil.copytree(db.parent / location, home / location)
    return Located(backend, url, home)


def _witness_folders(db: Path) -> list[tuple[str]]:
    """The witness folders a SQLite store records (a relative one lies beside the file;
    on PostgreSQL, in the hosts' home)."""
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT location FROM witnesses WHERE type = 'folder'").fetchall()
    finally:
        conn.close()


@pytest.fixture(params=BACKENDS, name="deployed_store")
def deployed_store_fixture(
    request: pytest.FixtureRequest, deployed_db: Path, tmp_path: Path
) -> Located:
    """`deployed_db` (the five profiles deployed, `boss` operator and `sue` support) on
    each backend: a test that takes it runs once per backend."""
    return carry(request.param, deployed_db, request, tmp_path)


def audit_clean(gm, located: Located) -> None:
    """`gmtool audit` of the store finds nothing, on either backend."""
    audit = gm("audit", "--db", located.db, *located.audit_args(), env=located.env(), expect=None)
    assert audit.returncode == 0, audit.stdout + audit.stderr


@pytest.fixture(name="shared")
def shared_fixture(deployed_db: Path, gm, pg_server: Databases, tmp_path: Path) -> tuple[str, Path]:
    """A PostgreSQL store with the five profiles deployed (`gmtool db copy` of
    `deployed_db`), and a home for its hosts: (its URL, the home)."""
    url = url_of(pg_server.new())
    gm("db", "copy", "--from", deployed_db, "--to", url)
    return url, tmp_path / "home"
