"""A seat held by a person over the gateway instead of a bot (issue 25).

The table asks the seat's driver for the action: a bot's policy, or here the remote
player, whose `act` frame the engine alone judges (`submit`). Time runs on the host's
clock: the player to act has the profile's `action_s` (S17); when it runs out, the table
tells the engine that much time passed, as it does for a bot that stalls, and the engine
folds (passes) for them. A dropped socket is a `disconnect` at once (S18): from then on,
while anyone at the table is away, the table tells the engine how much time passed
before each input (`sync_time`), so the window runs from the disconnect whoever is to
act; a reconnect inside it resumes the seat, past it the engine counts an escape (S19).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from gmtool.engine.events import Action

if TYPE_CHECKING:
    from gmtool.house.table import HostedTable


def sync_time(table: HostedTable, hand) -> None:
    """Tell the engine the whole seconds that passed since it last heard of time, while a
    remote player at the table is away (else nothing: bots' tables play as before)."""
    if not table.away or hand is None or hand.is_over:
        return
    seconds = int((table.clock.monotonic() - table.synced) * table.host.speed)
    if seconds > 0:
        table.apply(Action("wait", amount=seconds))  # (apply moves `synced` on)


def submit(table: HostedTable, hand, action: Action) -> None:
    """A remote player's action, judged by the engine (IllegalAction names the rule)."""
    sync_time(table, hand)
    table.apply(action)
    table.wake.set()


async def turn(table: HostedTable, hand, actor: str) -> None:
    """Wait for the remote player to act: their action comes through `submit`; their
    clock runs out (S17), or their window does while they are away (S18, S19)."""
    assert table.config is not None
    timeouts = table.config.timeouts
    gateway = table.host.gateway
    player = hand.players[actor]

    def gone() -> bool:
        return table._gone(hand, actor)

    if player.connected:
        left = max(timeouts.action_s - player.action_elapsed, 1)
        deadline = table.clock.wall() + left / table.host.speed
        if gateway is not None:
            gateway.your_turn(table, actor, hand, deadline, left)
        await table.sleep(left, until=lambda: gone() or not player.connected)
        if gone() or not player.connected:
            return  # acted, or dropped: the next turn waits for the window
        sync_time(table, hand)
        if not gone():  # S17: the clock ran out; the engine folds (passes) for them
            table.apply(Action("wait", amount=max(timeouts.action_s - player.action_elapsed, 1)))
        return
    window = timeouts.reconnect_min * 60
    since = table.away.get(actor, table.clock.monotonic())
    left = window + 1 - (table.clock.monotonic() - since) * table.host.speed
    await table.sleep(max(left, 0), until=lambda: gone() or player.connected)
    if gone() or player.connected:
        return
    sync_time(table, hand)
    if not gone() and not player.connected:  # past the window: an escape (S19)
        table.apply(Action("wait", amount=max(window + 1 - player.window_elapsed, 1)))


def disconnected(table: HostedTable, name: str) -> None:
    """`name`'s socket dropped: a disconnect in their running hand (S18), the window
    running from now; not seated in a hand: they stand up at the next hand."""
    if name in table.joining:
        table.joining.remove(name)
    hand = table.current_hand()
    if hand is None or hand.is_over or name not in getattr(hand, "players", {}):
        return
    player = hand.players[name]
    if player.folded or not player.connected:
        return
    sync_time(table, hand)
    if not table.away and hand.to_act == name:
        # The seconds of their turn so far count against their clock (S17): told now, or
        # a drop and a resume would give them a fresh clock each time (an outside probe
        # held a table's turn for minutes so). A part of a second counts as one.
        used = math.ceil((table.clock.monotonic() - table.turn_started) * table.host.speed)
        if used > 0:
            table.apply(Action("wait", amount=used))
    if hand.is_over or player.folded:
        return
    if not table.away:
        table.synced = table.clock.monotonic()  # the engine's time is kept from now on
    table.away[name] = table.clock.monotonic()
    table.apply(Action("disconnect", name))
    table.wake.set()


def reconnected(table: HostedTable, name: str) -> None:
    """`name` is back: inside the window, the seat is theirs again (S18)."""
    hand = table.current_hand()
    if name not in table.away:
        return
    if hand is not None and not hand.is_over and name in hand.players:
        sync_time(table, hand)
        player = hand.players[name]
        if not hand.is_over and not player.connected and not player.folded:
            table.apply(Action("reconnect", name))
    table.away.pop(name, None)
    table.wake.set()


def leave(table: HostedTable, name: str) -> None:
    """`name` stands up: during a hand they are in, an escape (S19)."""
    if name in table.joining:
        table.joining.remove(name)
    hand = table.current_hand()
    if hand is not None and not hand.is_over and name in getattr(hand, "players", {}):
        if not hand.players[name].folded:
            sync_time(table, hand)
            if not hand.is_over and not hand.players[name].folded:
                table.apply(Action("escape", name))
    table.away.pop(name, None)
    table.unseat(name)
    table.publish()
    table.wake.set()


def reseat(table: HostedTable, need: int) -> None:
    """Between hands: remote players who left, dropped or hold too little stand up (S21);
    those who asked to sit take the seats, a bot standing up for each when none is free
    (bots stand in for people, never the reverse)."""
    gateway = table.host.gateway
    if gateway is None:
        return
    table.away.clear()
    pool = table.host.pool
    for name in list(table.seated):
        if name in gateway.remote and (
            not gateway.connected(name) or pool.coins.get(name, 0) < need
        ):
            table.unseat(name)
    assert table.config is not None
    for name in list(table.joining):
        pool.refresh([name], table.id)
        bots = [seated for seated in table.seated if seated not in gateway.remote]
        if len(table.seated) >= table.config.table.seats:
            if not bots:
                break
            table.unseat(bots[-1])
        table.joining.remove(name)
        if pool.coins.get(name, 0) >= need and gateway.connected(name):
            table.seated.append(name)
