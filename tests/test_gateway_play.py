"""The player gateway (issue 25): real `websockets` clients over loopback play at a real
host (in this process, on virtual time, tests/hosting.py) through `house run --listen`'s
endpoint; every frame they receive is checked against the published server schema."""

from __future__ import annotations

from pathlib import Path

import pytest
from gateway_clients import open_client
from helpers import gm_identity

from gmtool.ops.gm import adjust
from gmtool.ops.player_tokens import mint

TABLE_PLAN = [("qq-showhand", "junior", "stud5")]
GRANT = 200_000


@pytest.fixture
def played(virtual_host, deployed_db: Path):
    """A host with one QQ junior table and its gateway on a free loopback port."""
    host = virtual_host(
        deployed_db, plan=TABLE_PLAN, tables=1, seed="gw", listen="127.0.0.1:0", grace=600.0
    )
    host.run_until(lambda: host.host.gateway.url, what="the gateway listening")
    return host


def token(host, player: str, ttl: int = 3600) -> str:
    return mint(host.store, gm_identity("boss"), player, ttl)["token"]


def join(host, player: str, coins: int = GRANT, auto: bool = True):
    """`player` connected (welcomed), granted coins by a GM, and asking to sit."""
    client = host.stepper.run(open_client(host.host.gateway.url, token(host, player), auto))
    host.run_until(lambda: client.of("welcome"), what=f"{player}'s welcome")
    if coins:
        adjust(host.store, gm_identity("boss"), player, coins, "test grant")
    table = next(iter(host.host.tables))
    host.stepper.run(client.send({"type": "sit", "table": table, "id": "s1"}))
    host.run_until(lambda: client.of("snapshot"), what=f"{player}'s snapshot")
    return client


def settled_hands(client) -> int:
    return sum(1 for _, event in client.events() if event["type"] == "settlement")


def test_a_remote_player_plays_full_hands_with_bots_and_the_audit_is_clean(
    gm, played, deployed_db: Path
) -> None:
    ann = join(played, "ann")
    played.run_until(lambda: settled_hands(ann) >= 2, what="two hands with ann", within=7200)
    assert ann.of("your_turn"), "ann was never asked to act"
    assert sum(e["type"] == "settlement" and "ann" in str(e) for _, e in ann.events()) >= 1
    seqs = [seq for seq, _ in ann.events()]
    assert seqs == sorted(set(seqs)), "events arrive numbered, in order, once"
    assert ann.invalid == []
    acted = [e["type"] for _, e in ann.events() if e.get("player") == "ann" and e["type"] != "ante"]
    assert len(acted) >= len(ann.of("your_turn")) - 1  # each turn answered (the last may run)
    played.stop()
    played.stepper.run(ann.close())
    played.close()
    audit = gm("audit", "--db", deployed_db, expect=None)
    assert audit.returncode == 0, audit.stdout + audit.stderr
