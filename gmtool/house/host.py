"""The table host: many tables in one asyncio process, GM commands, clean stop, recovery.

Start-up first voids every hand a crash left unfinished (stakes returned, seed revealed,
a significant event recorded) before any table plays again. SIGINT/SIGTERM stop the
host cleanly: no new hand starts, running hands get a grace period to finish, and any
still running after it are voided with every stake returned; the host says which.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import time
from dataclasses import dataclass, field
from typing import Callable

from gmtool.engine.config import ranking_for
from gmtool.errors import Unavailable
from gmtool.house import seeds
from gmtool.house.bots import STYLE_NAMES
from gmtool.house.gm_ops import failure
from gmtool.house.table import Closed, HostedTable
from gmtool.store import configs, gm, ledger
from gmtool.store import hands as hand_store
from gmtool.store import tables as table_store
from gmtool.store.db import Store, StoreError

COMMAND_POLL_S = 0.2


@dataclass
class HostOptions:
    tables: int = 4
    systems: list[str] | None = None  # profile ids; None = every deployed profile
    speed: float = 1.0
    hands: int | None = None
    duration: float | None = None
    chaos: float = 0.0
    seed: str | None = None
    bots: int | None = None
    grace: float = 10.0


@dataclass
class HostReport:
    recovered: list[int] = field(default_factory=list)
    hands: int = 0
    finished_on_stop: list[str] = field(default_factory=list)
    voided_on_stop: list[int] = field(default_factory=list)
    tables: list[str] = field(default_factory=list)
    commands: int = 0


class Host:
    def __init__(self, store: Store, options: HostOptions,
                 notify: Callable[[str], None] = lambda message: None) -> None:
        self.store = store
        self.options = options
        self.speed = max(options.speed, 0.001)
        self.chaos = options.chaos
        self.notify = notify
        self.key = seeds.load_key(store.path, options.seed)
        self.rng = random.Random(options.seed if options.seed is not None else time.time_ns())
        self.report = HostReport()
        self.tables: dict[str, HostedTable] = {}
        self.coins: dict[str, int] = {}
        self.styles: dict[str, str] = {}
        self.idle: set[str] = set()
        self.benched: set[str] = set()
        self.stopping = False  # no new hands
        self.stopping_now = False  # running hands are abandoned (then voided)
        self._numbers: dict[str, int] = {}
        self._configs: dict[str, dict] = {}
        self._rankings: dict[str, object] = {}
        self._dispatched: set[int] = set()
        self._running_at_stop: set[str] = set()

    # -- set-up -----------------------------------------------------------------------

    def recover(self) -> list[int]:
        """Void every hand left running by a crash, before any table plays (stakes returned)."""
        from gmtool.engine.deck import commitment

        voided = []
        for row in hand_store.unfinished_hands(self.store):
            seed = seeds.hand_seed(self.key, row["table_id"], row["number"])
            revealed = seed.hex() if commitment(seed) == row["commitment"] else None
            log = hand_store.TableLog(self.store, row["table_id"])
            hand_store.void_hand(self.store, log, row["id"], "crash_recovery", revealed,
                                 "the host stopped without finishing this hand")
            voided.append(row["id"])
        self.report.recovered = voided
        if voided:
            self.notify(f"recovered: {len(voided)} unfinished hand(s) voided, every stake "
                        f"returned: {', '.join(map(str, voided))}")
        return voided

    def plan_tables(self) -> list[tuple[str, str, str]]:
        """(profile, tier, game) for each table: round-robin over deployed, open rooms."""
        profiles = configs.deployed_profiles(self.store)
        if self.options.systems:
            unknown = set(self.options.systems) - set(profiles)
            if unknown:
                raise StoreError(f"not deployed: {', '.join(sorted(unknown))} (deployed: "
                                 f"{', '.join(profiles) or 'none'}); run `gmtool deploy`")
            profiles = [p for p in profiles if p in self.options.systems]
        per_profile = []
        for profile in profiles:
            per_profile.append([(profile, tier["id"], self.config_for(profile, tier["id"])["game"])
                                for tier in self._latest(profile)["tiers"] if tier["enabled"]])
        # Every system gets a table before any system gets a second one.
        rooms = [room for depth in range(max(map(len, per_profile), default=0))
                 for tiers in per_profile if depth < len(tiers) for room in [tiers[depth]]]
        if not rooms:
            raise StoreError("no deployed room to host: run `gmtool deploy PROFILE` first")
        return [rooms[i % len(rooms)] for i in range(self.options.tables)]

    def _latest(self, profile: str) -> dict:
        return self.load(configs.latest_config_id(self.store, profile))

    def ensure_bots(self, plan: list[tuple[str, str, str]]) -> None:
        count = self.options.bots or max(8, 5 * len(plan))
        need = 0
        for profile, tier_id, _ in plan:
            config = self.config_for(profile, tier_id)
            tier = next(t for t in config["tiers"] if t["id"] == tier_id)
            need = max(need, tier.get("min_holding") or 0, tier.get("hand_cap") or 0)
        opening = max(100_000, 20 * need)
        for index in range(1, count + 1):
            name = f"bot-{index:03d}"
            if not ledger.exists(self.store, name):
                ledger.grant(self.store, name, opening, "opening_balance", kind="bot")
            self.styles[name] = STYLE_NAMES[index % len(STYLE_NAMES)]
        for name, coins in ledger.bot_balances(self.store).items():
            self.coins[name] = coins
            if name in self.styles:
                self.idle.add(name)

    # -- services for tables -------------------------------------------------------------

    def load(self, config_id: str) -> dict:
        if config_id not in self._configs:
            self._configs[config_id] = configs.load_config(self.store, config_id)
        return self._configs[config_id]

    def config_for(self, profile: str, tier: str) -> dict:
        """The active config of a room now (read at each hand start: RULES G5)."""
        config_id = configs.active_config_id(self.store, profile, tier)
        if config_id is None:
            raise StoreError(f"room {profile}/{tier} has no active deployment")
        return self.load(config_id)

    def ranking(self, config: dict):
        if config["config_id"] not in self._rankings:
            self._rankings[config["config_id"]] = ranking_for(config)
        return self._rankings[config["config_id"]]

    def style_of(self, player: str) -> str:
        return self.styles.get(player, "cautious")

    def peek_number(self, table_id: str) -> int:
        if table_id not in self._numbers:
            self._numbers[table_id] = hand_store.last_number(self.store, table_id) + 1
        return self._numbers[table_id]

    def next_number(self, table_id: str) -> int:
        number = self.peek_number(table_id)
        self._numbers[table_id] = number + 1
        return number

    def seed_for(self, table_id: str, number: int) -> bytes:
        return seeds.hand_seed(self.key, table_id, number)

    def refresh_coins(self, players: list[str]) -> None:
        """Balances from the store (a GM adjustment may have changed them between hands)."""
        for player in players:
            self.coins[player] = ledger.coins(self.store, player)

    def take_idle(self, need: int, rng: random.Random) -> str | None:
        rich = sorted(name for name in self.idle if self.coins.get(name, 0) >= need)
        if not rich:
            return None
        name = rng.choice(rich)
        self.idle.discard(name)
        return name

    def release(self, player: str) -> None:
        if player in self.styles and player not in self.benched:
            self.idle.add(player)

    def bench(self, player: str) -> None:
        """A kicked player sits out the rest of this run (never re-seated by the host)."""
        self.benched.add(player)
        self.idle.discard(player)

    def hand_settled(self, table: HostedTable, settlement: dict) -> None:
        for entry in settlement["entries"]:
            self.coins[entry["player"]] = ledger.coins(self.store, entry["player"])
        self.report.hands += 1
        if self.options.hands is not None and self.report.hands >= self.options.hands:
            self.stopping = True

    def acknowledge(self, command: dict, outcome: dict) -> None:
        gm.acknowledge(self.store, command["id"], outcome.get("ok", False), outcome)
        self.report.commands += 1
        self.notify(f"command {command['id']} ({command['kind']} {command['table_id']}"
                    f"{' ' + command['player'] if command.get('player') else ''}): {outcome}")

    # -- running --------------------------------------------------------------------------

    def build_tables(self, plan: list[tuple[str, str, str]]) -> None:
        from gmtool.house.hand_table import HandTable
        from gmtool.house.owner_host import OwnerAnteTable

        counts: dict[tuple[str, str], int] = {}
        for profile, tier, game in plan:
            counts[(profile, tier)] = counts.get((profile, tier), 0) + 1
            table_id = f"{profile}-{tier}-{counts[(profile, tier)]}"
            config = self.config_for(profile, tier)
            owner = game == "stud5" and config["betting"]["style"] == "owner_ante"
            cls = OwnerAnteTable if owner else HandTable
            rng = random.Random(f"{self.options.seed}:{table_id}" if self.options.seed
                                else self.rng.random())
            table_store.open_table(self.store, table_id, profile, tier, game, os.getpid())
            self.tables[table_id] = cls(self, table_id, profile, tier, game, rng)
        self.report.tables = list(self.tables)

    async def _table_loop(self, table: HostedTable) -> None:
        try:
            while not table.closed and not self.stopping_now:
                hand = table.current_hand()
                if self.stopping and (hand is None or hand.is_over):
                    return
                await table.run_once()
        except Closed:
            return
        except Exception as error:  # noqa: BLE001 - one table's bug must not stop the others
            table.closed = True
            try:
                voided = table.recorder.void("host_error", f"{type(error).__name__}: {error}")
            except Exception as void_error:  # noqa: BLE001 - the store itself failed
                voided = f"(not voided: {void_error}; the next start recovers it)"
            self.notify(f"table {table.id} stopped by an internal error ({type(error).__name__}:"
                        f" {error}); its running hand {voided} was voided, stakes returned")

    async def _poll_commands(self) -> None:
        while not self.stopping_now:
            for command in gm.pending_commands(self.store):
                if command["id"] in self._dispatched:
                    continue
                self._dispatched.add(command["id"])
                table = self.tables.get(command["table_id"])
                if table is None or table.closed:
                    self.acknowledge(command, failure(Unavailable(
                        f"table {command['table_id']} is not hosted here")))
                    continue
                table.commands.put_nowait(command)
                table.wake.set()
            await asyncio.sleep(COMMAND_POLL_S)

    def request_stop(self) -> None:
        if not self.stopping:
            self.notify("stopping: no new hands; running hands may finish")
            self._running_at_stop = {t.id for t in self.tables.values()
                                     if t.recorder.hand_id is not None}
        self.stopping = True

    async def run(self, progress: Callable[[Host], None] | None = None) -> HostReport:
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.add_signal_handler(signum, self.request_stop)
            except (RuntimeError, ValueError):
                pass  # not the main thread (tests driving the host in-process)
        tasks = {name: asyncio.create_task(self._table_loop(t)) for name, t in self.tables.items()}
        poller = asyncio.create_task(self._poll_commands())
        started = time.monotonic()
        stop_at = None
        while any(not t.done() for t in tasks.values()):
            await asyncio.sleep(0.1)
            if progress:
                progress(self)
            if self.options.duration is not None and \
                    time.monotonic() - started >= self.options.duration:
                self.request_stop()
            if self.stopping and stop_at is None:
                stop_at = time.monotonic() + self.options.grace
            if stop_at is not None and time.monotonic() >= stop_at and not self.stopping_now:
                self.stopping_now = True
                for table in self.tables.values():
                    table.wake.set()  # a table may be waiting out a long reconnect window
        self.stopping_now = True
        await poller
        self._void_open_hands()
        return self.report

    def _void_open_hands(self) -> None:
        for table in self.tables.values():
            hand_id = table.recorder.void("host_stopped", "the host stopped before the hand ended")
            if hand_id is not None:
                self.report.voided_on_stop.append(hand_id)
            elif table.id in self._running_at_stop:
                self.report.finished_on_stop.append(table.id)
            if not table.closed:
                table_store.stop_table(self.store, table.id)
