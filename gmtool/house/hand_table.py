"""A hosted table of independent hands: QQ-style capped stud5 rooms and three-card rooms.

Between hands players come and go: a player below the room's minimum holding leaves
(S21), sometimes a bot leaves for no reason (free between hands, L14) and idle bots sit
down. Each hand reads the room's active configuration when it starts (G5).
"""

from __future__ import annotations

from gmtool.engine.hand import Seat
from gmtool.engine.play import coins_to_sit, seeded_source, start_hand
from gmtool.house.table import HostedTable

LEAVE_CHANCE = 0.1


class HandTable(HostedTable):
    async def run_once(self) -> None:
        self.config = self.host.config_for(self.profile_id, self.tier)
        self.host.refresh_coins(self.seated)
        self.reseat()
        if len(self.seated) < self.config["table"]["min_players"]:
            self.publish()
            await self.sleep(self.config["timeouts"]["continue_s"])
            return
        banker = self.banker if self.banker in self.seated else self.seated[0]
        number = self.host.peek_number(self.id)
        seed = self.host.seed_for(self.id, number)
        self.state = start_hand(self.config, self.tier,
                                [Seat(p, self.host.coins[p]) for p in self.seated], banker,
                                seeded_source(self.config, seed), ranking=self.host.ranking(
                                    self.config))
        self.record(self.state.events)
        self.publish()
        hand = self.state
        while not hand.is_over and not self.closed:
            if self.host.stopping_now:
                return
            await self.play_turn(hand)
        if hand.settlement:
            winners = hand.settlement.winners
            self.banker = winners[0] if winners else banker  # S11: the winner banks next
            for name, player in hand.players.items():
                if player.escaped:
                    self.unseat(name)
        await self.sleep(min(3.0, self.config["timeouts"]["continue_s"]))

    def reseat(self) -> None:
        """Players below the minimum leave (S21); some leave freely; idle bots sit down."""
        need = coins_to_sit(self.config, self.tier)
        for name in list(self.seated):
            if self.host.coins.get(name, 0) < need or self.rng.random() < LEAVE_CHANCE:
                self.unseat(name)
        seats = self.config["table"]["seats"]
        wanted = self.rng.randint(self.config["table"]["min_players"], seats)
        while len(self.seated) < wanted:
            name = self.host.take_idle(need, self.rng)
            if name is None:
                break
            self.seated.append(name)
            self.host.refresh_coins([name])
