"""A hosted owner-ante table (seed 000): the owner sets the ante, the others agree.

The engine's OwnerTable runs the lifecycle (L1-L8); this driver only decides, for each
bot, when to click, agree, start, continue or leave. People at the table (the gateway,
owner_people.py) decide for themselves; while one has to, the driver tells the engine how
much time passes, so their clocks run as a bot's would (L4, L5, L6). A changed deployment
reaches the table between hands (G5): the table is rebuilt with its players and the new
rules.
"""

from __future__ import annotations

from collections.abc import Callable

from gmtool.engine.events import Action
from gmtool.engine.owner_table import OwnerTable
from gmtool.engine.play import seeded_source
from gmtool.engine.seating import coins_to_sit, enough_players
from gmtool.house.table import HostedTable

REJECT_CHANCE = 0.05


class _Rebuilt(Exception):
    """The table was rebuilt under a new config while a bot was thinking."""


LEAVE_CHANCE = 0.05


class OwnerAnteTable(HostedTable):
    table: OwnerTable | None = None

    def current_hand(self):
        table = self.state
        return table.hand if table is not None and table.phase == "playing" else None

    def extra_live(self) -> dict:
        table = self.state
        if table is None:
            return {}
        return {"owner": table.owner, "ante": table.ante, "phase": table.phase}

    def apply(self, action: Action):
        if action.verb == "start" and self.state.phase != "playing":
            self._sync_coins()  # a hand may start now: it must see today's balances
        return super().apply(action)

    def publish(self) -> None:
        """As HostedTable.publish, with the seats brought up to date first: a kick or a
        leave between hands frees the seat in the very snapshot that follows it."""
        self.sync_seats()
        super().publish()
        if self.host.gateway is not None:
            self.host.gateway.setup(self)

    def _sync_coins(self) -> None:
        """Between hands, the table's coins follow the store (GM adjustments included)."""
        self.host.pool.refresh(self.state.seated, self.id)
        for name in self.state.seated:
            self.state.coins[name] = self.host.pool.coins[name]

    def execute(self, command: dict) -> dict:
        """A kick between hands goes through the table itself (G2: the seat is freed, and
        an owner who is kicked hands the table on, L1)."""
        table = self.state
        player = command.get("player")
        if (
            command["kind"] == "kick"
            and table is not None
            and table.phase != "playing"
            and player in table.seated
        ):
            self.host.pool.bench(player)
            self.apply(Action("kick", player, reason=command.get("reason")))
            return {"ok": True, "kicked": player, "during_hand": False}
        return super().execute(command)

    def sync_seats(self) -> None:
        table = self.state
        for name in [p for p in self.seated if p not in table.seated]:
            self.seated.remove(name)
            self.host.pool.release(name)
        self.seated = [p for p in table.seated]

    def _deal(self, hand_number: int):
        """The engine's table is about to start a hand: its number and deck, allocated now."""
        return seeded_source(self.config, self.allocate().seed)

    def _rebuild(self) -> None:
        """A new OwnerTable under the active config, with the same players seated."""
        self.use_room()
        players = list(self.seated)
        self.state = OwnerTable(self.config, self.tier, self.host.table_seed(self.id), self._deal)
        self.seated = []
        for name in players:
            self._join(name)

    def join_person(self, name: str) -> None:
        """A person takes a seat between hands (the gateway's `sit`)."""
        self._join(name)

    def _person(self, name: str | None) -> bool:
        gateway = self.host.gateway
        return gateway is not None and name is not None and name in gateway.remote

    def _seat_joining(self) -> None:
        """Between hands, people who asked to sit during the hand take free seats."""
        for name in list(self.joining):
            if len(self.state.seated) >= self.config.table.seats:
                return
            self.joining.remove(name)
            self._join(name)

    async def _person_decides(self, table: OwnerTable, seconds: float) -> None:
        """A person has to decide (the owner's ante or start, a start after a hand): let
        `seconds` pass, or less if the table moves on, and tell the engine the time that
        passed, which runs their clock (L4, L5, L6)."""
        before = (table.phase, table.owner, len(table.ready))
        started = self.clock.monotonic()
        await self.sleep(
            seconds, until=lambda: (table.phase, table.owner, len(table.ready)) != before
        )
        if (table.phase, table.owner) == before[:2] and table.phase != "playing":
            passed = int((self.clock.monotonic() - started) * self.host.speed)
            if passed > 0:
                self.apply(Action("wait", amount=passed))

    def _join(self, name: str) -> None:
        before = len(self.state.events)
        self.host.pool.refresh([name], self.id)
        self.state.join(name, self.host.pool.coins[name])
        self.seated.append(name)
        self.record(self.state.events[before:])

    def _outdated(self) -> bool:
        """Between hands, whether the room's active config changed (G5)."""
        return (
            self.state.phase != "playing"
            and self.host.room(self.profile_id, self.tier).config.config_id != self.config.config_id
        )

    async def sleep(self, game_seconds: float, until: Callable[[], bool] | None = None) -> None:
        """As HostedTable.sleep, then: a deployment made meanwhile rebuilds the table before
        any bot acts again, so no hand can start under the old rules (G5)."""
        await super().sleep(game_seconds, until)
        if self.state is not None and self._outdated():
            self._rebuild()
            raise _Rebuilt()

    async def run_once(self) -> None:
        try:
            await self._run_once()
        except _Rebuilt:
            self.publish()

    async def _run_once(self) -> None:
        if self.state is None or self._outdated():
            self._rebuild()
        table = self.state
        phase = table.phase
        if phase == "playing":
            await self.play_turn(table.hand)
            return
        think = self.rng.uniform(0.5, 3.0)
        self._seat_joining()
        self._fill_seats()
        if phase == "empty" or table.owner is None:
            await self.sleep(think)
        elif phase == "setting_ante" and self._person(table.owner):
            await self._person_decides(table, 1.0)
        elif phase == "setting_ante":
            await self._owner_sets_ante(table, think)
        elif phase in ("agreeing", "countdown"):
            await self._agree_or_start(table, think)
        elif phase == "continue":
            await self._continue(table, think)
        self.publish()

    async def _continue(self, table: OwnerTable, think: float) -> None:
        """After a hand (L6): each bot presses start or leaves; people press it themselves
        while their 15 s run."""
        if any(self._person(p) for p in table.seated if p not in table.ready):
            await self._person_decides(table, 1.0)
        else:
            await self.sleep(think)
        for name in [p for p in table.seated if p not in table.ready and not self._person(p)]:
            if table.phase != "continue":
                break
            verb = "leave" if self.rng.random() < LEAVE_CHANCE else "start"
            self.apply(Action(verb, name))

    def _fill_seats(self) -> None:
        table = self.state
        capacity = self.config.table.seats
        while len(table.seated) < self.rng.randint(2, capacity) and table.phase != "playing":
            need = 2 * coins_to_sit(self.config, self.tier, table.ante)  # room to set an ante
            name = self.host.pool.take(need, self.rng)
            if name is None:
                return
            self._join(name)

    async def _owner_sets_ante(self, table: OwnerTable, think: float) -> None:
        if self.host.chaos and self.rng.random() < self.host.chaos:  # the owner dawdles (L4)
            limit = self.config.timeouts.set_ante_s
            await self.sleep(limit)
            self.apply(Action("wait", amount=limit))
            return
        await self.sleep(think)
        bound = self.host.pool.coins[table.owner] // self.config.owner_ante.max_divisor
        chips = [c for c in self.config.owner_ante.chips if c <= min(bound, 10)]
        if chips:
            self.apply(Action("ante", table.owner, amount=self.rng.choice(chips)))
        else:
            self.apply(Action("leave", table.owner))  # too poor to set any ante

    async def _agree_or_start(self, table: OwnerTable, think: float) -> None:
        if self._person(table.owner) and table.phase == "countdown":
            await self._person_decides(table, 1.0)  # the owner's 10 s to start (L5)
            return
        await self.sleep(think)
        waiting = [
            p
            for p in table.seated
            if p != table.owner and p not in table.agreed and not self._person(p)
        ]
        if waiting:
            name = self.rng.choice(waiting)
            verb = "reject" if self.rng.random() < REJECT_CHANCE else "agree"
            self.apply(Action(verb, name))
        elif not self._person(table.owner) and enough_players(self.config, len(table.agreed) + 1):
            self.apply(Action("start", table.owner))
