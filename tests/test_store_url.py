"""Which store `--db` (else $GMTOOL_DB, else ./gmtool.db) names (issue 26, item 1): a path
or sqlite:///PATH is a SQLite file, as every path was before; postgresql:// is a
PostgreSQL database, on which only `db init` and `db grant` run in this step (every other
command says so, exit 2); anything else that looks like a URL is refused, and a URL's
password is never shown."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from conftest import OPERATOR, Gmtool
from helpers import clean_env, gmtool_command

from gmtool.errors import UsageError
from gmtool.store.db import NotOnPostgres, resolve_path
from gmtool.store.url import locate, redacted

PG_URL = "postgresql://gm:s3cret@127.0.0.1:5432/casino"


@pytest.mark.parametrize(
    "value, path",
    [
        ("live.db", Path("live.db")),
        ("/srv/gm/live.db", Path("/srv/gm/live.db")),
        ("sqlite:///live.db", Path("live.db")),
        ("sqlite:///data/live.db", Path("data/live.db")),
        ("sqlite:////srv/gm/live.db", Path("/srv/gm/live.db")),
        ("odd:name.db", Path("odd:name.db")),  # no :// : a file name, as before URLs
    ],
)
def test_a_path_or_a_sqlite_url_names_a_sqlite_file(value: str, path: Path) -> None:
    location = locate(value)
    assert (location.path, location.url, location.is_postgres) == (path, None, False)
    assert resolve_path(value) == path


@pytest.mark.parametrize(
    "value",
    [
        PG_URL,
        "postgres://gm@db.internal/casino?sslmode=require",
        "postgresql:///casino",  # the local socket
        "postgresql://gm@db.internal?dbname=casino",
    ],
)
def test_a_postgresql_url_names_a_postgresql_database(value: str) -> None:
    location = locate(value)
    assert (location.path, location.url, location.is_postgres) == (None, value, True)


def test_gmtool_db_may_hold_a_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GMTOOL_DB", "sqlite:///from-env.db")
    assert locate(None).path == Path("from-env.db")
    monkeypatch.setenv("GMTOOL_DB", PG_URL)
    assert locate(None).url == PG_URL
    assert locate("flag.db").path == Path("flag.db")  # --db first
    monkeypatch.setenv("GMTOOL_DB", "")
    assert locate(None).path == Path("gmtool.db")


@pytest.mark.parametrize(
    "value, words",
    [
        ("mysql://root@db/x", "mysql:// is neither"),
        ("sqlite://host/live.db", "sqlite:///PATH"),
        ("sqlite:///", "sqlite:///PATH"),
        ("  ", "--db is blank"),
        ("postgres://", "names no database"),
        ("postgresql://gm:pw@db.internal:5432", "names no database"),
        ("postgresql://gm@db.internal/?sslmode=require", "names no database"),
    ],
)
def test_a_value_that_names_no_store_is_refused(value: str, words: str) -> None:
    with pytest.raises(UsageError, match=re.escape(words)):
        locate(value)


def test_a_password_is_never_shown() -> None:
    assert redacted(PG_URL) == "postgresql://gm:***@127.0.0.1:5432/casino"
    assert redacted("postgresql://gm@h/db") == "postgresql://gm@h/db"
    with pytest.raises(NotOnPostgres) as refused:
        resolve_path(PG_URL)
    assert "s3cret" not in str(refused.value) and "gm:***@" in str(refused.value)


def test_db_init_makes_the_file_a_sqlite_url_names(gm: Gmtool, tmp_path: Path) -> None:
    """sqlite:///made.db is made.db in the working folder; sqlite:////ABS an absolute path."""
    run = subprocess.run(
        [*gmtool_command(), "db", "init", "--as", OPERATOR, "--db", "sqlite:///made.db"],
        cwd=tmp_path,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "made.db").is_file(), run.stdout
    users = gm.json("gm", "users", "list", "--db", f"sqlite:///{tmp_path}/made.db", "--json")
    assert [user["name"] for user in users] == [OPERATOR]


@pytest.mark.parametrize(
    "command",
    [
        ("checkpoint", "export"),
        ("checkpoint", "verify", "some.checkpoint"),
    ],
)
def test_commands_not_yet_on_postgresql_say_so(gm: Gmtool, command: tuple[str, ...]) -> None:
    """Nothing is attempted on the server (the URL's port is closed): the refusal comes
    first, plainly, exit 2."""
    url = "postgresql://gm:s3cret@127.0.0.1:1/casino"
    for run in (
        gm(*command, "--db", url, expect=2),
        gm(*command, expect=2, env=clean_env(GMTOOL_DB=url)),
    ):
        assert "does not run on PostgreSQL yet" in run.stderr, run.stderr
        assert "s3cret" not in run.stdout + run.stderr


def test_the_demo_makes_no_file_of_a_postgresql_url(gm: Gmtool, tmp_path: Path) -> None:
    run = gm("demo", "--db", "postgresql://gm@127.0.0.1:1/casino", "--duration", "1", expect=2)
    assert "does not run on PostgreSQL yet" in run.stderr, run.stderr
    assert not Path("postgresql:").exists()


def test_db_grant_on_sqlite_says_it_has_no_roles(gm: Gmtool, tmp_path: Path) -> None:
    run = gm("db", "grant", "--db", tmp_path / "x.db", expect=2)
    assert "has no roles" in run.stderr, run.stderr
    assert not (tmp_path / "x.db").exists()
