"""An operator runs a PostgreSQL store from the console alone (issue 26): `db init`,
`deploy`, hosts, then GM writes (`players adjust`, `gm users add`), each
covered by a signed checkpoint as on SQLite: with the hosts' checkpoint key where
`$GMTOOL_HOME` holds it, else with the acting GM's key, checked against the hosts' .pub.
Without the hosts' home the write is refused before anything is written.

Real `gmtool` processes, a real database of the test server (an unreachable server fails
these tests, never skips them), real host processes.
"""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import pytest
from backends import pg_server_fixture  # noqa: F401
from conftest import OPERATOR, PROFILES, RULES
from helpers import clean_env, public_key
from postgres import Databases, url_of

from gmtool.store import copy as copying
from gmtool.store.pg_roles import EXPECTED_TABLES


@pytest.fixture
def hosted(gm, pg_server: Databases, tmp_path: Path, start_host) -> tuple[str, Path]:
    """A PostgreSQL store set up through the console (no SQLite anywhere), played by a
    host: its URL and the hosts' home folder."""
    url = url_of(pg_server.new())
    gm("db", "init", "--db", url, "--as", OPERATOR)
    for profile in PROFILES:
        gm("deploy", RULES / f"{profile}.toml", "--db", url, "--as", OPERATOR)
    home = tmp_path / "home"
    host = start_host(url, "--home", home, "--tables", "3", "--hands", "6", "--speed", "100")
    assert host.wait() == 0, host.output
    return url, home


def _one(url: str, sql: str):
    with psycopg.connect(url) as conn:
        return conn.execute(sql).fetchone()[0]


def _log_size(url: str) -> int:
    return _one(url, "SELECT size FROM log_state")


def _newest_checkpoint(home: Path, url: str) -> int:
    folder = home / f"{url.rsplit('/', 1)[1]}.witness"
    return max(int(path.name.split(".")[0]) for path in folder.glob("*.checkpoint"))


def _audit(gm, url: str, home: Path) -> dict:
    key = home / f"{url.rsplit('/', 1)[1]}.checkpoint.pub"
    run = gm("audit", "--db", url, "--key", key, "--json")
    assert run.stderr == "", run.stderr
    return json.loads(run.stdout)


def test_a_gm_write_without_the_hosts_home_is_refused_before_it_writes(hosted, gm) -> None:
    url, _ = hosted
    size = _log_size(url)
    run = gm(
        "players",
        "adjust",
        "bot-001",
        "5",
        "--reason",
        "no home",
        "--db",
        url,
        "--as",
        "boss",
        expect=2,
    )
    assert "$GMTOOL_HOME" in run.stderr and "Nothing was written" in run.stderr
    assert _log_size(url) == size
    assert _one(url, "SELECT COUNT(*) FROM ledger WHERE reason = 'no home'") == 0


def test_a_gm_write_is_covered_with_the_hosts_key_from_their_home(hosted, gm) -> None:
    url, home = hosted
    env = clean_env(GMTOOL_HOME=str(home))
    gm(
        "players",
        "adjust",
        "bot-001",
        "7",
        "--reason",
        "goodwill",
        "--db",
        url,
        "--as",
        "boss",
        env=env,
    )
    added = ("gm", "users", "add", "sue", "--role", "support", "--key", public_key("sue"))
    gm(*added, "--db", url, "--as", OPERATOR, env=env)
    assert _newest_checkpoint(home, url) == _log_size(url)  # covered before it returned
    assert _audit(gm, url, home)["problems"] == []
    log = gm.json("gm", "log", "--db", url, "--json")
    assert [entry["action"] for entry in log[-2:]] == ["adjust", "users_add"], log


def test_a_gm_write_is_covered_with_the_gms_own_key_where_only_the_pub_is(
    hosted, gm, tmp_path: Path
) -> None:
    url, home = hosted
    console_home = tmp_path / "console"  # a console machine with the hosts' .pub alone
    console_home.mkdir()
    name = f"{url.rsplit('/', 1)[1]}.checkpoint.pub"
    (console_home / name).write_bytes((home / name).read_bytes())
    gm(
        "players",
        "adjust",
        "bot-002",
        "9",
        "--reason",
        "by gm key",
        "--db",
        url,
        "--as",
        OPERATOR,
        env=clean_env(GMTOOL_HOME=str(console_home)),
    )
    assert _newest_checkpoint(home, url) == _log_size(url)  # into the recorded witness
    assert _audit(gm, url, home)["problems"] == []


def test_hosts_and_support_play_and_read_under_the_roles_db_grant_makes(
    gm, pg_server: Databases, tmp_path: Path, start_host
) -> None:
    """The README's set-up: the store's owner makes it and grants the roles; a host plays
    as the host role's member, support reads and audits as theirs."""
    name = pg_server.new()
    owner = url_of(name)
    gm("db", "init", "--db", owner, "--as", OPERATOR)
    gm("deploy", RULES / "qq-showhand.toml", "--db", owner, "--as", OPERATOR)
    host, support = f"{name}_h1", f"{name}_s1"
    gm("db", "grant", "--db", owner, "--host", host, "--support", support)
    home = tmp_path / "home"
    played = start_host(
        url_of(name, host), "--home", home, "--tables", "2", "--hands", "4", "--speed", "100"
    )
    assert played.wait() == 0, played.output
    assert "settled" in played.output
    assert _one(owner, "SELECT COUNT(*) FROM table_leases WHERE host <> ''") == 0
    tables = gm.json("tables", "list", "--closed", "--db", url_of(name, support), "--json")
    assert len(tables) == 2
    assert _audit(gm, url_of(name, support), home)["problems"] == []


def test_every_table_of_the_schema_is_granted() -> None:
    assert set(EXPECTED_TABLES) == set(copying.TABLES)
