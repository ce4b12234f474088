"""Each host of a shared store deals with a seed key of its own (issue 26): the key is
registered under the host's name, every hand names the host that dealt it, and the audit
checks each hand's seed against that host's key, so a hand relabelled to another host, or
to a host that registered no key, is reported.

Real `gmtool house run` processes on a real database of the test server (an unreachable
server fails these tests, never skips them); edits made as the database's owner, as an
attacker with write access to the store would.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest
from backends import pg_server_fixture  # noqa: F401
from conftest import copy_made
from postgres import Databases, url_of


@pytest.fixture(scope="module")
def dealt(deployed_template: Path, gm, pg_server: Databases, tmp_path_factory, launch_host):
    """A PostgreSQL store two hosts played at once, each at tables of its own (each test
    that edits it puts the row back)."""
    url = url_of(pg_server.new())
    source = copy_made(deployed_template, tmp_path_factory.mktemp("seeds-source"))
    gm("db", "copy", "--from", source, "--to", url)
    home = tmp_path_factory.mktemp("seeds") / "home"
    args = ("--home", home, "--tables", "2", "--hands", "12", "--speed", "100")
    hosts = [launch_host(url, *args), launch_host(url, *args)]
    for host in hosts:
        assert host.wait() == 0, host.output
    return url, home


@contextmanager
def _host_of(url: str, hand: int, host: str | None):
    """The hand's row names `host` for a while (an attacker's edit), then what it did."""
    ((before,),) = _rows(url, "SELECT host FROM hands WHERE id = %s", (hand,))
    _edit(url, "UPDATE hands SET host = %s WHERE id = %s", (host, hand))
    try:
        yield
    finally:
        _edit(url, "UPDATE hands SET host = %s WHERE id = %s", (before, hand))


def _rows(url: str, sql: str, params: tuple = ()) -> list[tuple]:
    with psycopg.connect(url, autocommit=True) as conn:
        return conn.execute(sql, params).fetchall()


def _edit(url: str, sql: str, params: tuple) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        assert conn.execute(sql, params).rowcount == 1


def _audit(gm, url: str, home: Path, expect: int) -> list[dict]:
    name = url.rsplit("/", 1)[1]
    pub = home / f"{name}.checkpoint.pub"
    run = gm("audit", "--db", url, "--key", pub, "--json", expect=expect)
    return json.loads(run.stdout)["problems"]


def test_each_host_deals_with_a_seed_key_of_its_own(dealt, gm) -> None:
    url, home = dealt
    keys = [
        json.loads(body)
        for (body,) in _rows(url, "SELECT body FROM log WHERE kind = 'seed_key' ORDER BY idx")
    ]
    hosts = {key["host"] for key in keys}
    assert len(keys) == len(hosts) == 2 and len({key["key"] for key in keys}) == 2
    dealers = dict(_rows(url, "SELECT host, COUNT(*) FROM hands GROUP BY host"))
    assert set(dealers) == hosts and min(dealers.values()) >= 1, dealers
    # each key in the hosts' home, owner-only: a host that takes a table over reveals
    # the seed of the hand it voids
    files = sorted(home.glob("*.seed-*.key"))
    assert len(files) == 2 and all(f.stat().st_mode & 0o077 == 0 for f in files)
    assert _audit(gm, url, home, expect=0) == []


def test_a_hand_relabelled_to_the_other_host_is_reported(dealt, gm) -> None:
    url, home = dealt
    (hand, host), *_ = _rows(
        url, "SELECT id, host FROM hands WHERE outcome = 'settled' ORDER BY id"
    )
    (other,) = _rows(url, "SELECT DISTINCT host FROM hands WHERE host <> %s", (host,))[0]
    with _host_of(url, hand, other):
        problems = [p for p in _audit(gm, url, home, expect=1) if p.get("hand") == hand]
    kinds = {p["kind"] for p in problems}
    assert "seed" in kinds, problems  # not the seed the other host's key gives its slot
    assert any(other in p["detail"] for p in problems if p["kind"] == "seed")


def test_a_hand_of_a_host_with_no_seed_key_is_reported(dealt, gm) -> None:
    url, home = dealt
    (hand,), *_ = _rows(url, "SELECT id FROM hands WHERE outcome = 'settled' ORDER BY id")
    with _host_of(url, hand, "mallory/1/abcdef"):
        problems = [p for p in _audit(gm, url, home, expect=1) if p.get("hand") == hand]
    assert any(p["kind"] == "seed" and "registered no seed key" in p["detail"] for p in problems), (
        problems
    )


def test_a_hand_whose_host_is_erased_is_reported(dealt, gm) -> None:
    """Without its host the hand would be checked against the store's one key (there is
    none): its record in the log still names the host."""
    url, home = dealt
    (hand,), *_ = _rows(url, "SELECT id FROM hands WHERE outcome = 'settled' ORDER BY id")
    with _host_of(url, hand, None):
        problems = _audit(gm, url, home, expect=1)
    assert any(p.get("hand") == hand for p in problems), problems
