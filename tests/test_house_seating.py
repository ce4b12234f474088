"""Who the host seats, and a hand that cannot start (RULES H3, Q6, G5; issue 11 item 6).

The host, the hands and the sandbox ask one engine function who may sit
(`seating.coins_to_sit`). A three-card room posts the ante for everyone, so a bot
holding less than the ante is never seated, whatever the room's `min_holding` (0 in the
shipped suihua rooms). A hand that cannot start leaves the table waiting for players;
it never stops the table. Each test runs on a new store of each backend.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from backends import BACKENDS, location, pg_server_fixture  # noqa: F401
from helpers import gm_identity

from gmtool.house.host import Host, HostOptions
from gmtool.ops.deploy import deploy_profile
from gmtool.rules.edit import set_values
from gmtool.store import ledger
from gmtool.store.db import Store, open_location

RULES = Path(__file__).resolve().parent.parent / "rules"
SUIHUA = RULES / "suihua-three-card.toml"


@pytest.fixture(params=BACKENDS, name="new_store")
def new_store_fixture(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """A new store of each backend, open for writing (PostgreSQL: its host's files in a
    home of its own)."""
    where = location(request.param, tmp_path, request)
    with open_location(where, create=True, postgres=True) as store:
        if store.dialect == "postgresql":
            home = tmp_path / "home"
            home.mkdir(mode=0o700)
            store.at_home(home)  # type: ignore[attr-defined]
        yield store


def suihua_host(store: Store, hands: int | None, messages: list[str]) -> Host:
    deploy_profile(store, SUIHUA, None, gm_identity("tester"))
    with store.write():  # broke bots: 0 and 4 coins, below the 5-chip room's ante
        ledger.ensure_player(store, "bot-001", "bot")
        ledger.ensure_player(store, "bot-002", "bot")
    ledger.grant(store, "bot-002", 4, "opening_balance", kind="bot")
    host = Host(
        store,
        HostOptions(
            tables=1,
            systems=["suihua-three-card"],
            speed=10_000,
            hands=hands,
            seed="h3-seating",
            bots=8,
            grace=0,
        ),
        notify=messages.append,
    )
    plan = host.plan_tables()
    assert plan == [("suihua-three-card", "chips-5", "three-card")]
    host.ensure_bots(plan)
    host.build_tables(plan)
    return host


def test_h3_a_bot_below_the_ante_is_never_seated(new_store: Store) -> None:
    messages: list[str] = []
    host = suihua_host(new_store, hands=30, messages=messages)
    asyncio.run(host.run())
    assert host.report.hands >= 30
    assert not [m for m in messages if "internal error" in m], messages
    seats = [json.loads(row["seats"]) for row in host.store.all("SELECT seats FROM hands")]
    held = [seat["coins"] for hand in seats for seat in hand]
    assert held and min(held) >= 5
    assert not {"bot-001", "bot-002"} & {seat["player"] for hand in seats for seat in hand}


def test_q6_a_room_closed_by_a_deployment_leaves_the_table_waiting(
    new_store: Store, tmp_path: Path
) -> None:
    """G5: the table reads the active config at each hand; when a deployment has closed
    its room, no hand starts, the players stand up, and the table waits (not stopped)."""
    messages: list[str] = []
    host = suihua_host(new_store, hands=None, messages=messages)
    closed = set_values(
        SUIHUA.read_text(encoding="utf-8"), {"profile.version": 99, "tiers[0].enabled": False}
    )
    closed_path = tmp_path / "suihua-closed.toml"
    closed_path.write_text(closed, encoding="utf-8")
    deploy_profile(host.store, closed_path, None, gm_identity("tester"))
    table = next(iter(host.tables.values()))
    asyncio.run(table.run_once())
    assert not table.closed and table.seated == [] and table.state is None
    assert any("no hand could start" in m and "closed" in m for m in messages), messages
    live = host.store.one("SELECT status, live FROM tables WHERE id = ?", (table.id,))
    assert live["status"] == "open" and json.loads(live["live"])["seated"] == []
