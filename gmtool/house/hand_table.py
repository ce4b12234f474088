"""A hosted table of independent hands: QQ-style capped stud5 rooms and three-card rooms.

Between hands players come and go: a player below the room's minimum holding leaves
(S21), sometimes a bot leaves for no reason (free between hands, L14) and idle bots sit
down. Each hand reads the room's active configuration when it starts (G5).
"""

from __future__ import annotations

from gmtool.engine.errors import SetupError
from gmtool.engine.hand import Seat
from gmtool.engine.play import seeded_source, start_hand
from gmtool.engine.seating import coins_to_sit, enough_players, first_banker
from gmtool.house import remote
from gmtool.house.table import HostedTable
from gmtool.store.stakes import NotCovered

LEAVE_CHANCE = 0.1


class HandTable(HostedTable):
    async def run_once(self) -> None:
        self.use_room()
        self.host.pool.refresh(self.seated, self.id)
        self.reseat()
        if not enough_players(self.config, len(self.seated)):
            self.publish()
            await self.sleep(self.config.timeouts.continue_s)
            return
        banker = first_banker(self.config, self.seated, previous_winner=self.banker)
        slot = self.allocate()
        coins = self.host.pool.coins
        try:
            self.state = start_hand(
                self.config,
                self.tier,
                [Seat(p, coins[p]) for p in self.seated],
                banker,
                seeded_source(self.config, slot.seed),
                ranking=self.ranking,
            )
        except SetupError as error:  # e.g. a deployment closed the room: wait, never die
            await self._cannot_start(error)
            return
        try:
            self.record(self.state.events)
        except NotCovered as error:  # another host's hand holds a player's coins
            self.host.pool.refresh(self.seated, self.id)
            await self._cannot_start(error)
            return
        self.turn_started = self.clock.monotonic()  # the first speaker's clock starts now
        self.publish()
        hand = self.state
        while not hand.is_over and not self.closed:
            if self.host.stopping_now:
                return
            await self.play_turn(hand)
        if hand.settlement:
            winners = hand.settlement.winners
            self.banker = winners[0] if winners else None  # S11: the winner banks next
            for name, player in hand.players.items():
                if player.escaped:
                    self.unseat(name)
        await self.sleep(min(3.0, self.config.timeouts.continue_s))

    async def _cannot_start(self, error: SetupError | NotCovered) -> None:
        """A hand that cannot start leaves the table waiting for players: whoever may not
        sit stands up (everyone, when the room itself is closed), and the table tries
        again after `continue_s`."""
        self.state = self.slot = None
        try:
            need = coins_to_sit(self.config, self.tier)
            standing = [p for p in self.seated if self.host.pool.coins.get(p, 0) < need]
        except SetupError:
            standing = list(self.seated)
        for name in standing or list(self.seated):
            self.unseat(name)
        self.host.notify(f"table {self.id}: no hand could start ({error}); waiting for players")
        self.publish()
        await self.sleep(self.config.timeouts.continue_s)

    def reseat(self) -> None:
        """Players below the minimum leave (S21); some leave freely; idle bots sit down."""
        try:
            need = coins_to_sit(self.config, self.tier)
        except SetupError:  # the room is gone from the active config: nobody sits
            return
        pool = self.host.pool
        remote.reseat(self, need)  # people first: they leave and sit as they asked
        people = self.host.gateway.remote if self.host.gateway is not None else set()
        for name in list(self.seated):
            if name in people:
                continue
            if pool.coins.get(name, 0) < need or self.rng.random() < LEAVE_CHANCE:
                self.unseat(name)
        seats = self.config.table.seats
        wanted = self.rng.randint(self.config.table.min_players, seats)
        while len(self.seated) < wanted:
            name = pool.take(need, self.rng)
            if name is None:
                break
            self.seated.append(name)
            pool.refresh([name], self.id)
