"""`gmtool house run --listen` end to end: a real host process on the real clock, a token
from `gmtool players token`, a coin grant from `gmtool players adjust`, and a real
WebSocket client that reads the lobby, sits and plays a hand beside the bots. The client
waits for frames (with a generous timeout), never for a fixed time. On both store backends
(`deployed_store`, tests/backends.py)."""

from __future__ import annotations

import asyncio

from backends import (  # noqa: F401
    Located,
    audit_clean,
    deployed_store_fixture,
    pg_server_fixture,
)
from gateway_clients import open_client


async def _until(predicate, timeout: float = 120.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        assert loop.time() < deadline, "the gateway did not answer in time"
        await asyncio.sleep(0.02)


def test_a_player_plays_a_hand_at_a_real_host_through_the_listening_socket(
    gm, start_host, deployed_store: Located
) -> None:
    located = deployed_store
    host = start_host(
        located.db,
        *located.host_args(),
        "--tables",
        "1",
        "--system",
        "qq-showhand",
        "--speed",
        "20",
        "--listen",
        "127.0.0.1:0",
    )
    url = host.wait_for_line(r"players connect at (ws://\S+)").group(1)
    token = gm(
        "players",
        "token",
        "ann",
        "--ttl",
        "1h",
        "--db",
        located.db,
        "--as",
        "boss",
        env=located.env(),
    )
    grant = ("players", "adjust", "ann", "500000", "--reason", "test grant")
    gm(*grant, "--db", located.db, "--as", "boss", env=located.env())  # before ann connects

    async def play() -> tuple:
        ann = await open_client(url, token.stdout.strip())
        await _until(lambda: ann.of("welcome"))
        assert ann.of("welcome")[0]["coins"] == 500_000
        await ann.send({"type": "lobby", "id": "l1"})
        await _until(lambda: ann.of("lobby"))
        room = ann.of("lobby")[0]["rooms"][0]
        await ann.send({"type": "sit", "profile": room["profile"], "tier": room["tier"]})
        await _until(
            lambda: any(e["type"] == "settlement" and "ann" in str(e) for _, e in ann.events())
        )
        await ann.close()
        return ann.of("lobby")[0], ann.of("your_turn"), ann.invalid

    lobby, turns, invalid = asyncio.run(play())
    assert lobby["id"] == "l1" and lobby["rooms"][0]["profile"] == "qq-showhand"
    assert turns and invalid == []
    assert host.stop() == 0
    audit_clean(gm, located)
