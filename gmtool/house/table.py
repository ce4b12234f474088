"""One hosted table: bots play hands of the engine into the store, in (scaled) real time.

Time: the profile's limits are game seconds; `speed` divides them into clock seconds
for demos. Tables read time only from their host's clock and sleep with asyncio, so the
same code runs in real time or on virtual time (house/virtual_time.py). A bot thinks for a few
game seconds and acts; with chaos it may stall (the
host then tells the engine that `action_s` passed, and the engine folds it), disconnect
(the host reports the time away: inside the window the bot reconnects, past it the
engine counts an escape) or leave mid-hand (an escape). GM commands wake the table at
once; a kick is an escape under the profile's policy (G2), a close voids the hand.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple, Protocol

from gmtool.engine.config import EngineConfig
from gmtool.engine.events import Action
from gmtool.engine.view import public_view
from gmtool.errors import GmtoolError, NotFound
from gmtool.house import remote
from gmtool.house.bots import choose, plan_turn
from gmtool.house.options import HostOptions
from gmtool.house.pool import BotPool
from gmtool.house.recorder import Recorder
from gmtool.store import tables as table_store
from gmtool.store.clock import Clock
from gmtool.store.db import Store
from gmtool.store.gm import failure

if TYPE_CHECKING:
    from gmtool.house.gateway import Gateway


class Room(NamedTuple):
    """A room's active rules now (read at each hand's start, RULES G5) and its ranking."""

    config: EngineConfig
    ranking: object


class HandSlot(NamedTuple):
    """A hand's number at its table and its secret seed, allocated together, once."""

    number: int
    seed: bytes


class TableHost(Protocol):
    """What a hosted table needs of its host (the host implements it; tables know no more)."""

    store: Store
    clock: Clock
    pool: BotPool
    options: HostOptions
    speed: float
    chaos: float
    stopping_now: bool
    gateway: Gateway | None  # the player gateway (`house run --listen`), if any

    def room(self, profile_id: str, tier: str) -> Room: ...

    def allocate_hand(self, table_id: str) -> HandSlot:
        """The next hand's number and seed; never handed out twice (a hand that then
        cannot start leaves a gap in the numbers, never a reused seed)."""

    def table_seed(self, table_id: str) -> bytes:
        """The seed of a table's own draws (a new owner, L1)."""

    def hand_settled(self, table: HostedTable, settlement: dict) -> None: ...

    def checkpoint_due(self) -> None:
        """After an append: a checkpoint now if the host's interval has passed."""

    def claim(self, command: dict) -> bool:
        """Take a command before carrying it out: False if the console withdrew it."""

    def acknowledge(self, command: dict, outcome: dict) -> None: ...

    def notify(self, message: str) -> None: ...


class Closed(Exception):
    """The table was closed by a GM command while it waited."""


class HostedTable:
    """The shared machinery of a hosted table; `run_once` plays one hand (or phase)."""

    def __init__(
        self,
        host: TableHost,
        table_id: str,
        profile_id: str,
        tier: str,
        game: str,
        rng: random.Random,
    ) -> None:
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
        self.config: EngineConfig | None = None
        self.ranking = None
        self.clock = host.clock
        self.turn_started = self.clock.monotonic()
        self.hands_played = 0
        self.banker: str | None = None
        self.slot: HandSlot | None = None  # allocated for the hand about to start
        self.joining: list[str] = []  # remote players waiting for the next hand's seats
        self.away: dict[str, float] = {}  # remote players disconnected in the hand: since
        self.synced = 0.0  # when the engine last heard of time, while someone is away

    # -- time -------------------------------------------------------------------------

    async def sleep(self, game_seconds: float, until: Callable[[], bool] | None = None) -> None:
        """Sleep game time (scaled by speed); GM commands interrupt and are handled, and the
        sleep ends early once `until()` holds (a command ended the turn it was waiting in)."""
        deadline = self.clock.monotonic() + game_seconds / self.host.speed
        while True:
            await self.handle_commands()
            left = deadline - self.clock.monotonic()
            if left <= 0 or self.host.stopping_now or (until is not None and until()):
                return
            self.wake.clear()
            try:
                await asyncio.wait_for(self.wake.wait(), timeout=left)
            except TimeoutError:
                pass

    # -- engine input and recording ---------------------------------------------------------

    def apply(self, action: Action) -> dict | None:
        """Apply one input, store its events, publish the snapshot; the settlement if any."""
        before = len(self.state.events)
        self.state.apply(action)
        if action.verb == "wait" and self.away:  # any wait, a bot's stall too: told once
            self.synced += (action.amount or 0) / self.host.speed
        settlement = self.record(self.state.events[before:])
        self.turn_started = self.clock.monotonic()
        self.publish()
        return settlement

    def use_room(self) -> None:
        """Read the room's active rules (at each hand's start: RULES G5)."""
        self.config, self.ranking = self.host.room(self.profile_id, self.tier)

    def allocate(self) -> HandSlot:
        """The number and seed of the hand about to start (its deck comes from the seed)."""
        self.slot = self.host.allocate_hand(self.id)
        return self.slot

    def record(self, events) -> dict | None:
        slot = None
        if any(e.type == "hand_started" for e in events):
            slot, self.slot = self.slot, None
            if slot is None:
                raise RuntimeError(f"table {self.id}: a hand started with no slot allocated")
        settlement = self.recorder.record(
            events, seed=slot and slot.seed, number=slot and slot.number
        )
        if self.host.gateway is not None:
            self.host.gateway.events(self, [event.as_json() for event in events])
        if self.host.options.verbose:
            if slot is not None:
                self.host.notify(f"hand {self.recorder.hand_id} started: {self.id} #{slot.number}")
            if settlement is not None:
                self.host.notify(
                    f"hand settled: {self.id}, winners {', '.join(settlement['winners'])}"
                )
        if settlement is not None:
            self.hands_played += 1
            self.host.hand_settled(self, settlement)
        self.host.checkpoint_due()  # what was just committed is signed within the interval
        return settlement

    def current_hand(self):
        return self.state

    def publish(self) -> None:
        hand = self.current_hand()
        live = {
            "profile": self.profile_id,
            "tier": self.tier,
            "game": self.game,
            "config_id": self.config.config_id if self.config else None,
            "hand": self.recorder.hand_id,  # the id `hands show` takes
            "hand_number": self.recorder.number if self.recorder.hand_id else None,
            "seated": list(self.seated),
        }
        if hand is not None and not hand.is_over:
            view = public_view(hand)
            timeouts = self.config.timeouts
            # Deadlines in wall-clock time (and the speed), so readers compute what is left.
            started = self.clock.wall() - (self.clock.monotonic() - self.turn_started)
            view["deadline_at"] = started + timeouts.action_s / self.host.speed
            view["window_deadline_at"] = started + timeouts.reconnect_min * 60 / self.host.speed
            view["speed"] = self.host.speed
            for player in view["players"]:
                player["coins"] = self.host.pool.coins.get(player["name"])
            live["running"] = view
        live.update(self.extra_live())
        if self.host.gateway is not None:  # people at the table: connected, or away (S18)
            live["people"] = self.host.gateway.people(self)
        live["published_at"] = self.clock.wall()  # readers measure the snapshot's age from it
        table_store.publish(self.host.store, self.id, live, self.seated)

    def extra_live(self) -> dict:
        return {}

    # -- a turn of a bot --------------------------------------------------------------------

    async def play_turn(self, hand) -> None:
        """Let the player to act take their turn, with chaos, in scaled real time."""
        actor = hand.to_act
        if self.host.gateway is not None and actor in self.host.gateway.remote:
            await remote.turn(self, hand, actor)  # the seat's driver is a person
            return
        timeouts = self.config.timeouts
        window = timeouts.reconnect_min * 60
        turn = plan_turn(self.rng, self.host.chaos, timeouts.action_s, window)

        def gone() -> bool:
            return self._gone(hand, actor)

        if turn.kind == "act":
            await self.sleep(turn.seconds, until=gone)
            remote.sync_time(self, hand)  # a person away: the engine hears the time first
            if gone():
                return
            self.apply(
                choose(
                    self.host.pool.style_of(actor), hand.legal_actions(), actor, self.rng, hand=hand
                )
            )
        elif turn.kind == "stall":
            await self.sleep(turn.seconds, until=gone)
            if not gone():
                self.apply(Action("wait", amount=int(turn.seconds)))
        elif turn.kind == "escape":
            await self.sleep(turn.seconds, until=gone)
            if not gone():
                self.apply(Action("escape", actor))
        else:
            self.apply(Action("disconnect", actor))
            await self.sleep(turn.seconds, until=gone)
            if gone():
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
            if not self.host.claim(command):
                continue  # the console gave up on it and told the GM so: never carried out
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
            if self.host.gateway is not None:
                self.host.gateway.closed(self)
            return {"ok": True, "closed": self.id, "voided_hand": voided}
        player = command["player"]
        if player not in self.seated:
            raise NotFound(f"{player} is not seated at {self.id}")
        if running and player in hand.players and not hand.players[player].folded:
            stake, pot = hand.players[player].total, hand.pot  # before the escape (S19)
            hand_id = self.recorder.hand_id
            settlement = self.apply(Action("kick", player, reason=command.get("reason")))
            outcome = {
                "ok": True,
                "kicked": player,
                "during_hand": True,
                "hand": hand_id,
                "escape_policy": self.config.betting.escape_policy,
                "stake": stake,
                "pot": pot,
                "training": bool(hand.training),
                "settlement": settlement,
            }
        else:
            outcome = {"ok": True, "kicked": player, "during_hand": False}
            if running:  # a hand they had no stake in (folded, or not dealt in): no escape
                outcome["hand"] = self.recorder.hand_id
        self.host.pool.bench(player)
        self.unseat(player)
        self.publish()  # the snapshot the kick published still seated them
        if self.host.gateway is not None:
            self.host.gateway.kicked(self, player, command.get("reason"))
        return outcome

    def unseat(self, player: str) -> None:
        if player in self.seated:
            self.seated.remove(player)
            self.host.pool.release(player)

    def void(self, reason: str) -> int | None:
        hand_id = self.recorder.void(reason)
        self.state = None
        return hand_id
