"""One hosted table: bots play hands of the engine into the store, in (scaled) real time.

Time: the profile's limits are game seconds; `speed` divides them into wall seconds
for demos. A bot thinks for a few game seconds and acts; with chaos it may stall (the
host then tells the engine that `action_s` passed, and the engine folds it), disconnect
(the host reports the time away: inside the window the bot reconnects, past it the
engine counts an escape) or leave mid-hand (an escape). GM commands wake the table at
once; a kick is an escape under the profile's policy (G2), a close voids the hand.
"""

from __future__ import annotations

import asyncio
import random
import time
from typing import TYPE_CHECKING

from gmtool.engine.events import Action
from gmtool.engine.view import public_view
from gmtool.errors import GmtoolError, NotFound
from gmtool.house.bots import choose, plan_turn
from gmtool.house.gm_ops import failure
from gmtool.house.recorder import Recorder
from gmtool.store import tables as table_store

if TYPE_CHECKING:
    from gmtool.house.host import Host


class Closed(Exception):
    """The table was closed by a GM command while it waited."""


class HostedTable:
    """The shared machinery of a hosted table; `run_once` plays one hand (or phase)."""

    def __init__(self, host: Host, table_id: str, profile_id: str, tier: str, game: str,
                 rng: random.Random) -> None:
        self.host = host
        self.id = table_id
        self.profile_id = profile_id
        self.tier = tier
        self.game = game
        self.rng = rng
        self.recorder = Recorder(host.store, table_id)
        self.seated: list[str] = []
        self.commands: asyncio.Queue = asyncio.Queue()
        self.wake = asyncio.Event()
        self.closed = False
        self.state = None  # the engine object being played (hand or owner table)
        self.config: dict | None = None
        self.turn_started = time.monotonic()
        self.hands_played = 0
        self.banker: str | None = None

    # -- time -------------------------------------------------------------------------

    async def sleep(self, game_seconds: float) -> None:
        """Sleep game time (scaled by speed); GM commands interrupt and are handled."""
        deadline = time.monotonic() + game_seconds / self.host.speed
        while True:
            await self.handle_commands()
            left = deadline - time.monotonic()
            if left <= 0 or self.host.stopping_now:
                return
            self.wake.clear()
            try:
                await asyncio.wait_for(self.wake.wait(), timeout=left)
            except asyncio.TimeoutError:
                pass

    # -- engine input and recording ---------------------------------------------------------

    def apply(self, action: Action) -> dict | None:
        """Apply one input, store its events, publish the snapshot; the settlement if any."""
        before = len(self.state.events)
        self.state.apply(action)
        settlement = self.record(self.state.events[before:])
        self.turn_started = time.monotonic()
        self.publish()
        return settlement

    def record(self, events) -> dict | None:
        number = self.host.next_number(self.id) if any(
            e.type == "hand_started" for e in events) else None
        seed = self.host.seed_for(self.id, number) if number else None
        settlement = self.recorder.record(events, seed=seed, number=number)
        if settlement is not None:
            self.hands_played += 1
            self.host.hand_settled(self, settlement)
        return settlement

    def current_hand(self):
        return self.state

    def publish(self) -> None:
        hand = self.current_hand()
        live = {"profile": self.profile_id, "tier": self.tier, "game": self.game,
                "config_id": self.config["config_id"] if self.config else None,
                "hand": self.recorder.hand_id,  # the id `hands show` takes
                "hand_number": self.recorder.number if self.recorder.hand_id else None,
                "seated": list(self.seated)}
        if hand is not None and not hand.is_over:
            view = public_view(hand)
            timeouts = self.config["timeouts"]
            # Deadlines in wall-clock time (and the speed), so readers compute what is left.
            started = time.time() - (time.monotonic() - self.turn_started)
            view["deadline_at"] = started + timeouts["action_s"] / self.host.speed
            view["window_deadline_at"] = started + timeouts["reconnect_min"] * 60 / self.host.speed
            view["speed"] = self.host.speed
            for player in view["players"]:
                player["coins"] = self.host.coins.get(player["name"])
            live["running"] = view
        live.update(self.extra_live())
        table_store.publish(self.host.store, self.id, live, self.seated)

    def extra_live(self) -> dict:
        return {}

    # -- a turn of a bot --------------------------------------------------------------------

    async def play_turn(self, hand) -> None:
        """Let the player to act take their turn, with chaos, in scaled real time."""
        actor = hand.to_act
        timeouts = self.config["timeouts"]
        window = timeouts["reconnect_min"] * 60
        turn = plan_turn(self.rng, self.host.chaos, timeouts["action_s"], window)
        if turn.kind == "act":
            await self.sleep(turn.seconds)
            if self._gone(hand, actor):
                return
            self.apply(choose(self.host.style_of(actor), hand.legal_actions(), actor, self.rng))
        elif turn.kind == "stall":
            await self.sleep(turn.seconds)
            if not self._gone(hand, actor):
                self.apply(Action("wait", amount=int(turn.seconds)))
        elif turn.kind == "escape":
            await self.sleep(turn.seconds)
            if not self._gone(hand, actor):
                self.apply(Action("escape", actor))
        else:
            self.apply(Action("disconnect", actor))
            await self.sleep(turn.seconds)
            if self._gone(hand, actor):
                return
            self.apply(Action("wait", amount=int(turn.seconds)))  # the window runs (S18)
            player = hand.players[actor]
            if not hand.is_over and not player.connected and not player.folded:
                self.apply(Action("reconnect", actor))

    def _gone(self, hand, actor: str) -> bool:
        """The turn no longer belongs to `actor` (a GM command changed the hand)."""
        return self.closed or hand.is_over or hand.to_act != actor

    # -- GM commands -----------------------------------------------------------------------

    async def handle_commands(self) -> None:
        while not self.commands.empty():
            command = self.commands.get_nowait()
            try:
                outcome = self.execute(command)
            except GmtoolError as error:  # refused or impossible: recorded as the outcome
                outcome = failure(error)
            self.host.acknowledge(command, outcome)
            if self.closed:
                raise Closed()

    def execute(self, command: dict) -> dict:
        hand = self.current_hand()
        running = hand is not None and not hand.is_over
        if command["kind"] == "close":
            voided = self.void("closed by GM") if running else None
            self.closed = True
            table_store.close_table(self.host.store, self.id)
            return {"ok": True, "closed": self.id, "voided_hand": voided}
        player = command["player"]
        if player not in self.seated:
            raise NotFound(f"{player} is not seated at {self.id}")
        if running and player in hand.players and not hand.players[player].folded:
            settlement = self.apply(Action("kick", player, reason=command.get("reason")))
            outcome = {"ok": True, "kicked": player, "during_hand": True,
                       "escape_policy": self.config["betting"]["escape_policy"],
                       "settlement": settlement}
        else:
            outcome = {"ok": True, "kicked": player, "during_hand": False}
        self.host.bench(player)
        self.unseat(player)
        return outcome

    def unseat(self, player: str) -> None:
        if player in self.seated:
            self.seated.remove(player)
            self.host.release(player)

    def void(self, reason: str) -> int | None:
        hand_id = self.recorder.void(reason)
        self.state = None
        return hand_id
