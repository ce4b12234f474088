"""One lobby over all hosts (issue 26): the gateway's `lobby` on any host of a shared
PostgreSQL store lists every live host's tables, each with the host that serves it and
the address players reach that host at (store/host_addresses.py, house/lobby.py).

Two real `gmtool house run` hosts with gateways on one database: a client on host A reads
a lobby that lists host B's tables with B's real (bound) address; it connects there and
sits at one of them. Host B is SIGKILLed; once A has taken its tables over, A's lobby
shows them served by A, here. A stops cleanly and leaves no address behind (B's, a dead
host's, was cleared when it expired). On SQLite (one host) every table is `here`, with
the host's own address. Real processes, sockets and database; waits are for events.
"""

from __future__ import annotations

import asyncio
import re
import signal
from pathlib import Path

import psycopg
import pytest
from backends import BACKENDS, SetClock, location, pg_server_fixture  # noqa: F401
from gateway_clients import Client, open_client
from helpers import until
from postgres import Databases, url_of

from gmtool.store import host_addresses, ledger, table_leases
from gmtool.store import tables as table_store
from gmtool.store.db import open_location
from gmtool.store.host_addresses import ServedTable

LEASE_S = 6
HOST = ("--tables", "3", "--speed", "20", "--lease", str(LEASE_S), "--listen", "127.0.0.1:0")
HOSTING = re.compile(r"^hosting \d+ table\(s\): (.+) \(speed", re.M)
TOOK = re.compile(r"^took table (\S+) over from host", re.M)
ADDRESS = r"players connect at (ws://\S+)"


@pytest.fixture
def store(deployed_db: Path, gm, pg_server: Databases, tmp_path: Path) -> tuple[str, str]:
    """The deployed store, moved to PostgreSQL, and ann's token (ann holds coins)."""
    token = gm("players", "token", "ann", "--ttl", "1h", "--db", deployed_db, "--as", "boss")
    grant = ("players", "adjust", "ann", "500000", "--reason", "lobby test")
    gm(*grant, "--db", deployed_db, "--as", "boss")
    url = url_of(pg_server.new())
    gm("db", "copy", "--from", deployed_db, "--to", url)
    return url, token.stdout.strip()


def _rows(url: str, sql: str) -> list[tuple]:
    with psycopg.connect(url) as conn:
        return conn.execute(sql).fetchall()


async def _until(predicate, what: str, within: float = 120.0):
    """`predicate()`'s first truthy value, re-checked as frames arrive."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while not (value := predicate()):
        assert loop.time() < deadline, f"never saw {what}"
        await asyncio.sleep(0.02)
    return value


async def _lobby(client: Client, request: str) -> dict[str, dict]:
    """A fresh lobby from `client`'s host: each table's entry (with its room) by table id."""
    await client.send({"type": "lobby", "id": request})
    frame = await _until(
        lambda: next((f for f in client.of("lobby") if f.get("id") == request), None),
        f"the lobby answer {request}",
    )
    return {
        entry["table"]: {**entry, "room": (room["profile"], room["tier"])}
        for room in frame["rooms"]
        for entry in room["tables"]
    }


def test_a_lobby_lists_every_hosts_tables_with_their_address(store, start_host, tmp_path) -> None:
    url, token = store
    home = tmp_path / "home"
    first = start_host(url, "--home", home, *HOST)
    until(lambda: HOSTING.search(first.output), "host A's tables")
    second = start_host(url, "--home", home, *HOST)
    until(lambda: HOSTING.search(second.output), "host B's tables")
    mine, theirs = (set(HOSTING.search(h.output).group(1).split(", ")) for h in (first, second))
    here_url = first.wait_for_line(ADDRESS).group(1)
    there_url = second.wait_for_line(ADDRESS).group(1)
    assert not re.search(r":0$", there_url) and here_url != there_url  # the bound ports
    names = dict(_rows(url, "SELECT address, host FROM host_addresses"))
    assert set(names) == {here_url, there_url}

    async def before_the_kill() -> tuple[dict, dict]:
        ann = await open_client(here_url, token, auto=False)
        await _until(lambda: ann.of("welcome"), "the welcome at host A")
        lobby = await _lobby(ann, "before")
        await ann.close()
        assert ann.invalid == [], ann.invalid  # every frame as the published schema says
        # B's table (one where bots stand up for people: not lequ-showhand's, whose
        # owner-ante tables may be full), sat at through B's own gateway, at the address
        # A's lobby gave
        table = min(t for t in theirs if lobby[t]["room"][0] != "lequ-showhand")
        away = await open_client(lobby[table]["address"], token, auto=False)
        await _until(lambda: away.of("welcome"), "the welcome at host B")
        await away.send({"type": "sit", "table": table, "id": "sit"})
        sat = await _until(
            lambda: next((f for f in away.frames if f.get("id") == "sit"), None),
            "the answer to the sit at host B",
        )
        await away.close()
        assert sat["type"] == "snapshot" and away.invalid == [], away.frames
        return lobby, sat

    lobby, sat = asyncio.run(before_the_kill())
    assert set(lobby) == mine | theirs  # every table of both hosts
    for table in mine:
        assert lobby[table] | {"room": None} == {
            "table": table,
            "seated": lobby[table]["seated"],
            "host": names[here_url],
            "address": here_url,
            "here": True,
            "room": None,
        }
    for table in theirs:
        assert lobby[table]["host"] == names[there_url], lobby[table]
        assert lobby[table]["address"] == there_url and lobby[table]["here"] is False
    assert sat["table"] in theirs and "ann" in sat["seated"] + sat["joining"]

    assert second.stop(signal.SIGKILL) == -signal.SIGKILL
    until(lambda: set(TOOK.findall(first.output)) >= theirs, "host A taking B's tables over")

    async def after_the_takeover() -> dict:
        ann = await open_client(here_url, token, auto=False)
        await _until(lambda: ann.of("welcome"), "the welcome at host A again")
        lobby = await _lobby(ann, "after")
        await ann.close()
        return lobby

    lobby = asyncio.run(after_the_takeover())
    assert set(lobby) == mine | theirs
    for table in mine | theirs:
        assert (lobby[table]["host"], lobby[table]["address"], lobby[table]["here"]) == (
            names[here_url],
            here_url,
            True,
        ), lobby[table]
    # the dead host's address went when it expired (host A clears it as it renews its own)
    until(
        lambda: _rows(url, "SELECT address FROM host_addresses") == [(here_url,)],
        "the dead host's address cleared",
    )
    assert first.stop() == 0, first.output
    assert _rows(url, "SELECT COUNT(*) FROM host_addresses") == [(0,)]  # a clean stop


def test_a_sqlite_hosts_lobby_names_its_own_address(deployed_db, gm, start_host) -> None:
    """One host (SQLite): every table `here`, at the address it gives players
    (`--public-address`, e.g. its TLS proxy's; else the bound one)."""
    public = "wss://room.example.test/players"
    listen = ("--listen", "127.0.0.1:0", "--public-address", public)
    host = start_host(deployed_db, "--tables", "2", "--speed", "20", *listen)
    address = host.wait_for_line(ADDRESS).group(1)
    hosted = set(HOSTING.search(host.output).group(1).split(", "))
    token = gm("players", "token", "ann", "--ttl", "1h", "--db", deployed_db, "--as", "boss")

    async def read() -> tuple[dict, list]:
        ann = await open_client(address, token.stdout.strip(), auto=False)
        await _until(lambda: ann.of("welcome"), "the welcome")
        lobby = await _lobby(ann, "one")
        await ann.close()
        return lobby, ann.invalid

    lobby, invalid = asyncio.run(read())
    assert invalid == []
    assert set(lobby) == hosted
    assert {(e["address"], e["here"]) for e in lobby.values()} == {(public, True)}
    assert len({e["host"] for e in lobby.values()}) == 1
    assert host.stop() == 0


@pytest.mark.parametrize(
    "given",
    [
        "http://room.example.test/",
        "room.example.test:8765",
        "ws://",
        "ws://room.example.test:port/",
        "ws://room.example.test/?a=1",
        "ws://room example.test/",
        "ws://room.example.test/\x1b[31m",
        "ws://rööm.example.test/",
        "ws://" + "a" * 300,
    ],
)
def test_a_public_address_that_is_not_a_websocket_url_is_refused(deployed_db, gm, given) -> None:
    run = gm(
        "house",
        "run",
        "--db",
        deployed_db,
        "--listen",
        "127.0.0.1:0",
        "--public-address",
        given,
        "--duration",
        "1",
        expect=2,
    )
    assert "--public-address" in run.stderr and "ws://" in run.stderr, run.stderr
    assert run.stdout == ""


def test_a_public_address_without_a_gateway_is_refused(deployed_db, gm) -> None:
    run = gm("house", "run", "--db", deployed_db, "--public-address", "ws://h:1/", expect=2)
    assert "--listen" in run.stderr, run.stderr


def test_a_network_bot_sits_in_a_room_this_host_serves() -> None:
    """`gmtool bots` sits by room: in a room with a table here, never one whose every
    table another host serves (its sit would be refused there); a lobby from a host that
    says nothing of `here` lists only its own tables."""
    import random

    from gmtool.gateway.client import BotRefused, NetworkBot

    def room(profile: str, *here: bool | None) -> dict:
        tables = [{"table": f"{profile}-junior-{i}", "seated": 0} for i in range(len(here))]
        for table, flag in zip(tables, here, strict=True):
            if flag is not None:
                table |= {"host": "h", "address": "ws://h:1", "here": flag}
        return {"profile": profile, "tier": "junior", "tables": tables}

    def sits(*rooms: dict) -> set[str]:
        chosen = set()
        for seed in range(40):
            bot = NetworkBot("ws://h:1", "t", None, random.Random(seed), lambda game: None)  # type: ignore[arg-type]
            (sit,) = bot.receive({"type": "lobby", "rooms": list(rooms)})
            chosen.add(sit["profile"])
        return chosen

    assert sits(room("away", False, False), room("mine", False, True)) == {"mine"}
    assert sits(room("old", None), room("new", True)) == {"old", "new"}
    with pytest.raises(BotRefused):
        sits(room("away", False))


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_store_serves_the_tables_of_live_hosts_with_their_address(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """store/host_addresses.py on both backends: a table is listed while a live host holds
    its lease (not closed, not the notary's or a bot's), with its host's address (None
    when that host published none); rows of hosts whose expiry passed go at the next
    publish, a host's own stays; a clean stop removes it."""
    clock = SetClock()
    where = location(backend, tmp_path, request)
    with open_location(where, create=True, clock=clock, postgres=True) as store:
        for table in ("t1", "t2", "t3", "t4"):
            table_store.open_table(store, table, "qq", "junior", "stud5", 1)
        with store.write():
            for player in ("ann", "bea"):
                ledger.ensure_player(store, player, "human")
        table_store.publish(store, "t1", {}, ["ann", "bea"])
        table_leases.take(store, "t1", "a", 10.0)
        table_leases.take(store, "t2", "b", 10.0)
        table_leases.take(store, "t3", "nobody-listens", 10.0)
        t4 = table_leases.take(store, "t4", "a", 10.0)
        table_leases.take(store, "~notary", "a", 10.0)
        table_leases.take(store, "~bot:bot-001", "b", 10.0)
        table_store.close_table(store, "t3")
        assert t4 is not None and table_leases.release(store, t4)
        host_addresses.publish(store, "a", "ws://a:1", 10.0)
        host_addresses.publish(store, "b", "wss://b.example/x", 5.0)
        assert host_addresses.served(store) == [
            ServedTable("t1", "qq", "junior", "stud5", "a", "ws://a:1", 2),
            ServedTable("t2", "qq", "junior", "stud5", "b", "wss://b.example/x", 0),
        ]
        clock.at += 6.0  # b's address expired; its lease, not yet
        host_addresses.publish(store, "a", "ws://a:2", 10.0)
        assert host_addresses.addresses(store) == {"a": "ws://a:2"}
        assert [(t.table_id, t.address) for t in host_addresses.served(store)] == [
            ("t1", "ws://a:2"),
            ("t2", None),
        ]
        clock.at += 4.0  # every lease expired: no live host serves a table
        assert host_addresses.served(store) == []
        host_addresses.remove(store, "a")
        assert host_addresses.addresses(store) == {}
