"""People at a gateway table in tests: connecting with a token and coins, and clicking as
a person would between hands (owner-ante tables, RULES L1-L6). Their turns in a hand are
answered by the client itself (gateway_clients.py)."""

from __future__ import annotations

from gateway_clients import open_client
from helpers import gm_identity

from gmtool.ops.gm import adjust
from gmtool.ops.player_tokens import mint


def token(host, name: str) -> str:
    return mint(host.store, gm_identity("boss"), name, 3600)["token"]


def person(host, name: str, coins: int, resume: dict | None = None):
    """`name` connected (welcomed), granted `coins` by a GM when given, not yet seated."""
    client = host.stepper.run(open_client(host.host.gateway.url, token(host, name), resume=resume))
    host.run_until(lambda: client.of("welcome"), what=f"{name}'s welcome")
    if coins:
        adjust(host.store, gm_identity("boss"), name, coins, "test grant")
    return client


def send(host, client, frame: dict) -> None:
    host.stepper.run(client.send(frame))
    host.advance(0.2)


def hands_played(client, name: str) -> int:
    return sum(1 for _, e in client.events() if e["type"] == "settlement" and name in str(e))


def play_along(host, table, clients: dict, until, steps: int = 4000) -> None:
    """Each person clicks as a person at the table would: sit when standing, and at an
    owner-ante table agree to an ante, set one as owner, start once someone agreed, press
    start after a hand (L6); until `until()` holds."""
    from gmtool.house.owner_host import OwnerAnteTable

    owner_table = isinstance(table, OwnerAnteTable)
    for _ in range(steps):
        if until():
            return
        host.advance(0.5)
        state = table.state
        for name, client in clients.items():
            seats = state.seated if owner_table and state is not None else table.seated
            if name not in seats and name not in table.joining:
                send(host, client, {"type": "sit", "table": table.id})
            elif owner_table and state is not None and state.phase != "playing":
                _between_hands(host, table, state, name, client)
    state = table.state
    raise AssertionError(
        f"the people did not get there: {getattr(state, 'phase', None)} owner "
        f"{getattr(state, 'owner', None)}, seated {table.seated}, joining {table.joining}; "
        f"the host said {host.messages[-5:]}"
    )


def _between_hands(host, table, state, name: str, client) -> None:
    act = {"type": "act", "table": table.id}
    if state.phase == "setting_ante" and state.owner == name:
        send(host, client, {**act, "verb": "ante", "amount": 1})
    elif state.phase in ("agreeing", "countdown") and state.owner == name:
        if state.agreed:
            send(host, client, {"type": "start", "table": table.id})
    elif state.phase in ("agreeing", "countdown") and name not in state.agreed:
        send(host, client, {**act, "verb": "agree"})
    elif state.phase == "continue" and name not in state.ready:
        send(host, client, {"type": "start", "table": table.id})
