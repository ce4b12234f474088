"""The bots a host seats: their coins as the store holds them, who is idle, who sits out.

A bot is idle until a table takes it, and idle again when it stands up; a bot a GM
kicked sits out the rest of the host's run. Coins are read from the store (a GM
adjustment may have changed them) whenever a table is about to seat or deal to a bot.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from gmtool.evidence import opening as signed_opening
from gmtool.evidence.note import Signer
from gmtool.house.bots import STYLE_NAMES
from gmtool.store import ledger, stakes
from gmtool.store.db import Store


class BotPool:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.coins: dict[str, int] = {}
        self.styles: dict[str, str] = {}
        self.idle: set[str] = set()
        self.benched: set[str] = set()

    def enroll(
        self,
        count: int,
        opening: int,
        signer: Callable[[], Signer],
        claim: Callable[[str], bool] = lambda name: True,
    ) -> None:
        """`count` bots, bot-001 upwards, each given `opening` coins when first created, an
        opening balance signed with `signer()`, the host's key (asked for only then); in a
        store from before signed openings, those it holds are signed first. On a store
        several hosts share, a bot another live host plays is passed over (`claim` takes
        its lease, house/ownership.py): each host seats bots of its own."""

        def vouch(ledger_id: int, player: str, amount: int) -> str:
            return signed_opening.sign(signer(), ledger_id, player, amount)

        ledger.vouch_for_older_openings(self.store, vouch)
        index = 0
        while len(self.styles) < count:
            index += 1
            name = f"bot-{index:03d}"
            if not claim(name):
                continue
            if not ledger.exists(self.store, name):
                ledger.open_account(self.store, name, opening, "bot", vouch)
            self.styles[name] = STYLE_NAMES[index % len(STYLE_NAMES)]
        for name, coins in ledger.bot_balances(self.store).items():
            self.coins[name] = coins
            if name in self.styles:
                self.idle.add(name)

    def refresh(self, players: list[str], table: str | None = None) -> None:
        """Balances from the store (a GM adjustment may have changed them between hands);
        on a store several hosts share, less what each player brought to running hands
        other than `table`'s (store/stakes.py)."""
        balances = {player: ledger.coins(self.store, player) for player in players}
        self.coins.update(stakes.free_coins(self.store, balances, table))

    def style_of(self, player: str) -> str:
        return self.styles.get(player, "cautious")

    def take(self, need: int, rng: random.Random) -> str | None:
        """An idle bot holding at least `need` coins, now seated; None if there is none."""
        rich = sorted(name for name in self.idle if self.coins.get(name, 0) >= need)
        if not rich:
            return None
        name = rng.choice(rich)
        self.idle.discard(name)
        return name

    def release(self, player: str) -> None:
        """A bot stood up: idle again (unless it sits out)."""
        if player in self.styles and player not in self.benched:
            self.idle.add(player)

    def bench(self, player: str) -> None:
        """A kicked player sits out the rest of this run (never seated again by the host)."""
        self.benched.add(player)
        self.idle.discard(player)
