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
from collections.abc import Callable

from gmtool.bots.strength import percentiles
from gmtool.engine.config import engine_config
from gmtool.engine.games import game_of, ranking_for
from gmtool.evidence.hand_seeds import RSA
from gmtool.house import seeds
from gmtool.house.commands import CommandDesk
from gmtool.house.gateway import Gateway
from gmtool.house.notary import Notary
from gmtool.house.options import HostOptions, HostReport
from gmtool.house.ownership import Ownership
from gmtool.house.pool import BotPool
from gmtool.house.seed_source import SeedSource
from gmtool.house.table import Closed, HandSlot, HostedTable, Room
from gmtool.house.takeover import TakeoverDesk, table_rng
from gmtool.store import configs
from gmtool.store import hands as hand_store
from gmtool.store import tables as table_store
from gmtool.store.clock import Clock
from gmtool.store.db import Store, StoreError, files_of
from gmtool.store.table_leases import LeaseLost

HEARTBEAT_S = 2.0  # how often the host says its tables are alive (tables.updated_at)


class Host(CommandDesk, TakeoverDesk):
    """Hosts tables on one store; what tables may ask of it is `table.TableHost`.

    Time comes from `clock` (default: the store's), which must be the clock of the loop
    `run` is awaited on: the system clock on asyncio's own loop, or a virtual loop's
    clock (house/virtual_time.py) in tests and simulations.
    """

    def __init__(
        self,
        store: Store,
        options: HostOptions,
        notify: Callable[[str], None] = lambda message: None,
        clock: Clock | None = None,
    ) -> None:
        self.store = store
        self.options = options
        self.clock = clock or store.clock
        self.speed = max(options.speed, 0.001)
        self.chaos = options.chaos
        self.notify = notify
        self.rng = random.Random(options.seed)  # no seed: seeded from the OS's randomness
        self.report = HostReport()
        self.tables: dict[str, HostedTable] = {}
        self.tasks: dict[str, asyncio.Task] = {}
        # several hosts may share a PostgreSQL store: each table is its host's by a lease
        shared = getattr(store, "is_postgres", False)
        self.ownership = Ownership(store, options.lease) if shared else None
        self.notary = Notary(store, options.witness, notify)
        # prepared on first use (a refused start leaves no key file, no registration); on
        # a shared store each host deals with a key of its own, under its name
        self.seeds = SeedSource(
            store,
            options.seed,
            lambda: self.notary.signer,
            self.ownership.name if self.ownership is not None else None,
        )
        self.pool = BotPool(store)
        self.gateway = Gateway(self, options.listen) if options.listen else None
        self.stopping = False  # no new hands
        self.stopping_now = False  # running hands are abandoned (then voided)
        self._numbers: dict[str, int] = {}  # the next hand number of each table
        self._configs: dict[str, dict] = {}
        self._rankings: dict[str, object] = {}
        self._dispatched: set[int] = set()
        self.seen: dict[int, float] = {}  # pending command: when first seen (SYSTEM wall)
        self.signed = self.clock.monotonic()  # the last checkpoint (the start signs one)
        self._running_at_stop: set[str] = set()

    # -- set-up -----------------------------------------------------------------------

    def recover(self) -> list[int]:
        """Void every hand left running by a crash, before any table plays (stakes
        returned), and log the commands a stopped host had taken as interrupted. On a
        shared store only the tables this host takes are recovered, as it takes them
        (house/takeover.py): other hosts may be playing the rest."""
        from gmtool.house.recovery import recover

        if self.ownership is not None:
            return []
        self.report.recovered = recover(
            self.store, self.options.seed, self.notify, self.options.verbose
        )
        return self.report.recovered

    def plan_tables(self) -> list[tuple[str, str, str]]:
        """(profile, tier, game) for each table: round-robin over deployed, open rooms."""
        profiles = configs.deployed_profiles(self.store)
        if self.options.systems:
            unknown = set(self.options.systems) - set(profiles)
            if unknown:
                raise StoreError(
                    f"not deployed: {', '.join(sorted(unknown))} (deployed: "
                    f"{', '.join(profiles) or 'none'}); run `gmtool deploy`"
                )
            profiles = [p for p in profiles if p in self.options.systems]
        per_profile = []
        for profile in profiles:
            latest = self.load(configs.latest_config_id(self.store, profile))
            per_profile.append(
                [
                    (profile, tier["id"], self.room(profile, tier["id"]).config.game)
                    for tier in latest["tiers"]
                    if tier["enabled"]
                ]
            )
        # Every system gets a table before any system gets a second one.
        rooms = [
            room
            for depth in range(max(map(len, per_profile), default=0))
            for tiers in per_profile
            if depth < len(tiers)
            for room in [tiers[depth]]
        ]
        if not rooms:
            raise StoreError("no deployed room to host: run `gmtool deploy PROFILE` first")
        return [rooms[i % len(rooms)] for i in range(self.options.tables)]

    def ensure_bots(self, plan: list[tuple[str, str, str]]) -> None:
        """Enough bots for the planned tables, each opened with room to play (20x the most
        any planned room needs)."""
        need = 0
        for profile, tier_id, _ in plan:
            tier = self.room(profile, tier_id).config.tier(tier_id)
            need = max(need, tier.min_holding or 0, tier.hand_cap or 0)
        self.pool.enroll(
            max(8, 5 * len(plan)) if self.options.bots is None else self.options.bots,
            max(100_000, 20 * need),
            lambda: self.notary.signer,
            self.ownership.take_bot if self.ownership is not None else lambda name: True,
        )

    # -- services for tables (table.TableHost) -------------------------------------------

    def load(self, config_id: str) -> dict:
        if config_id not in self._configs:
            self._configs[config_id] = configs.load_config(self.store, config_id)
        return self._configs[config_id]

    def room(self, profile_id: str, tier: str) -> Room:
        """A room's active config now (read at each hand start: RULES G5) and its ranking."""
        config_id = configs.active_config_id(self.store, profile_id, tier)
        if config_id is None:
            raise StoreError(f"room {profile_id}/{tier} has no active deployment")
        config = engine_config(self.load(config_id))
        if config_id not in self._rankings:
            self._rankings[config_id] = ranking_for(config)
        return Room(config, self._rankings[config_id])

    def allocate_hand(self, table_id: str) -> HandSlot:
        """The table's next hand number and its seed, the seed key's signature over the
        slot (house/seed_source.py)."""
        if table_id not in self._numbers:
            self._numbers[table_id] = hand_store.last_number(self.store, table_id) + 1
        number = self._numbers[table_id]
        self._numbers[table_id] = number + 1
        return HandSlot(number, self.seeds.hand_seed(table_id, number))

    def table_seed(self, table_id: str) -> bytes:
        return self.seeds.table_seed(table_id)

    def hand_settled(self, table: HostedTable, settlement: dict) -> None:
        self.pool.refresh([entry["player"] for entry in settlement["entries"]], table.id)
        self.report.hands += 1
        if self.options.hands is not None and self.report.hands >= self.options.hands:
            self.stopping = True

    def checkpoint_due(self) -> None:
        """After an evidence append (a table's input, a hand settled, a command's fate):
        sign a checkpoint right here, in the same turn, if `checkpoint_every` has passed
        since the last one. So a host killed at any moment leaves at most that long of
        commits after its last checkpoint, however late its main loop runs (a starved
        event loop), and signs at most one an interval. Served witnesses cosign in the
        background as for the main loop's checkpoints; a failure is left to the main
        loop's next checkpoint, which stops the host with it."""
        now = self.clock.monotonic()
        if now - self.signed < self.options.checkpoint_every or not self.signs:
            return
        try:
            self.notary.sign(wait=False)
        except StoreError:
            return
        self.signed = now

    # -- running --------------------------------------------------------------------------

    def build_tables(self, plan: list[tuple[str, str, str]]) -> None:
        counts: dict[tuple[str, str], int] = {}
        closed = table_store.closed_ids(self.store)
        passed_over, held = [], []
        for profile, tier, game in plan:
            counts[(profile, tier)] = counts.get((profile, tier), 0) + 1
            table_id = f"{profile}-{tier}-{counts[(profile, tier)]}"
            while table_id in closed or not self.take_table(table_id):
                # closed by a GM: stays closed until a GM reopens it; or another host's
                (passed_over if table_id in closed else held).append(table_id)
                counts[(profile, tier)] += 1
                table_id = f"{profile}-{tier}-{counts[(profile, tier)]}"
            self.open_table(table_id, profile, tier, game)
        self.report.tables = list(self.tables)
        if passed_over:
            self.notify(
                f"not hosting closed table(s) {', '.join(passed_over)}: a GM closed them "
                "(`gmtool tables open TABLE` reopens one); their rooms' next tables instead"
            )
        if held:
            self.notify(
                f"not hosting table(s) {', '.join(held)}: another live host plays them; "
                "their rooms' next tables instead"
            )

    def open_table(self, table_id: str, profile: str, tier: str, game: str) -> HostedTable:
        """Open a table this host plays (taken, on a shared store): registered, fenced."""
        from gmtool.house.hand_table import HandTable
        from gmtool.house.owner_host import OwnerAnteTable

        room = self.room(profile, tier)
        config = room.config
        cls = OwnerAnteTable if game_of(config).owner_table(config) else HandTable
        if self.options.bots != 0:  # the bots' tables of this ranking, built now: at a
            percentiles(room.ranking)  # first decision they held every table up 1-3 s
        rng = table_rng(self.options.seed, table_id, self.rng)
        table_store.open_table(self.store, table_id, profile, tier, game, os.getpid())
        table = self.tables[table_id] = cls(self, table_id, profile, tier, game, rng)
        self.fence(table)
        return table

    def play(self, table: HostedTable) -> None:
        """Play a table taken over while running."""
        self.tasks[table.id] = asyncio.create_task(self._table_loop(table))

    async def _table_loop(self, table: HostedTable) -> None:
        try:
            while not table.closed and not self.stopping_now:
                hand = table.current_hand()
                if self.stopping and (hand is None or hand.is_over):
                    return
                await table.run_once()
        except Closed:
            return
        except LeaseLost:  # taken over: its new host voids the hand that was running
            table.closed = True
            if self.ownership is not None:
                self.ownership.held.pop(table.id, None)
            self.notify(f"table {table.id}: another host took it over; not playing it")
        except Exception as error:  # noqa: BLE001 - one table's bug must not stop the others
            table.closed = True
            try:
                voided = table.recorder.void("host_error", f"{type(error).__name__}: {error}")
            except Exception as void_error:  # noqa: BLE001 - the store itself failed
                voided = f"(not voided: {void_error}; the next start recovers it)"
            self.report.failed_tables.append(table.id)
            self.notify(
                f"table {table.id} stopped by an internal error ({type(error).__name__}:"
                f" {error}); its running hand {voided} was voided, stakes returned"
            )

    def interrupt(self) -> None:
        """Ctrl-C (SIGINT): the clean stop, remembered so `house run` can exit 130."""
        self.report.interrupted = True
        self.request_stop()

    def request_stop(self) -> None:
        if not self.stopping:
            self.notify("stopping: no new hands; running hands may finish")
            self._running_at_stop = {
                t.id for t in self.tables.values() if t.recorder.hand_id is not None
            }
        self.stopping = True

    async def run(
        self, progress: Callable[[Host], None] | None = None, signals: bool = True
    ) -> HostReport:
        """Play every table until stopped; with `signals`, SIGINT and SIGTERM stop it
        cleanly (they are caught before the host says it is hosting)."""
        loop = asyncio.get_running_loop()
        for signum, handler in (
            (signal.SIGINT, self.interrupt),
            (signal.SIGTERM, self.request_stop),
        ):
            try:
                if signals:
                    loop.add_signal_handler(signum, handler)
            except (RuntimeError, ValueError):
                pass  # not the main thread
        self.notify(
            f"hosting {len(self.tables)} table(s): {', '.join(self.tables)} (speed "
            f"x{self.speed:g}, chaos {self.chaos:g})"
        )
        if self.gateway is not None:
            url = await self.gateway.start()
            self.notify(f"players connect at {url} (the browser page: http{url[2:]}/play)")
        tasks = self.tasks
        tasks.update({n: asyncio.create_task(self._table_loop(t)) for n, t in self.tables.items()})
        poller = asyncio.create_task(self._poll_commands())
        self.keep_tables()  # (the start may have taken long: leases renewed first)
        started = beat = kept = self.signed = self.clock.monotonic()
        stop_at = None
        while any(not t.done() for t in list(tasks.values())):
            await asyncio.sleep(self.options.tick)
            if progress:
                progress(self)
            now = self.clock.monotonic()
            if now - beat >= HEARTBEAT_S:  # the console tells a live host from a gone one
                beat = now
                table_store.heartbeat(
                    self.store, [t.id for t in self.tables.values() if not t.closed]
                )
            if now - kept >= min(HEARTBEAT_S, self.options.lease / 4):
                kept = now
                self.keep_tables()  # a shared store: leases renewed, dead hosts' taken over
            if now - self.signed >= self.options.checkpoint_every and self.signs:
                self.signed = now  # appends of no commit that signs (a hand's first
                self.notary.sign(wait=False)  # events), and at rest; served witnesses
                # answer in the background
            if self.options.duration is not None and now - started >= self.options.duration:
                self.request_stop()
            if self.stopping and stop_at is None:
                stop_at = now + self.options.grace
            if stop_at is not None and now >= stop_at and not self.stopping_now:
                self.stopping_now = True
                for table in self.tables.values():
                    table.wake.set()  # a table may be waiting out a long reconnect window
        self.stopping_now = True
        await poller
        if self.gateway is not None:
            await self.gateway.stop()
        self._void_open_hands()
        if self.signs:  # (else the notary signs this host's last writes within its interval)
            self.notary.sign()
        self.release_tables()
        return self.report

    def _void_open_hands(self) -> None:
        for table in self.tables.values():
            if self.ownership is not None and table.id not in self.ownership.held:
                continue  # lost to another host, which voids its hand
            hand_id = table.recorder.void("host_stopped", "the host stopped before the hand ended")
            if hand_id is not None:
                self.report.voided_on_stop.append(hand_id)
            elif table.id in self._running_at_stop:
                self.report.finished_on_stop.append(table.id)
            table_store.stop_table(self.store, table.id)  # a closed table stays closed


def prepare_host(
    store: Store,
    options: HostOptions,
    notify: Callable[[str], None] = lambda message: None,
    plan: list[tuple[str, str, str]] | None = None,
    clock: Clock | None = None,
) -> Host:
    """A host ready to `run`: crashed hands voided, tables planned (or `plan`), bots
    enrolled, tables opened. The one place a host's start is sequenced."""
    host = Host(store, options, notify=notify, clock=clock)
    host.notary.check_not_behind()
    plan = plan or host.plan_tables()  # refusals (nothing deployed, no such system) first
    # What could refuse the start is checked before anything is written: a failed start
    # changes nothing (no crashed hand voided, no table opened to be shown "gone").
    seeds.check_key(files_of(store), options.seed)  # a damaged key file, or another --seed
    host.seeds.check()  # --seed on a store that deals from its own seed key
    host.notary.check_writable()
    new_seeded_key = options.seed is not None and not seeds.key_path(files_of(store)).exists()
    host.recover()
    host.ensure_bots(plan)
    registered = host.seeds.prepare()  # the key file and its registration, before any hand
    if new_seeded_key:
        notify(
            f"host key: {seeds.key_path(files_of(store))} now holds the key --seed stands for; "
            "anyone who knows the seed text can work out every deck (demo and test stores only)"
        )
    if host.ownership is None or host.ownership.lead():  # the store's notary signs
        host.notary.sign()  # keys and witness files only once the start has succeeded
    if registered is not None:  # (said after the witness: the checkpoint covers it)
        notify(
            f"seed key: hands from id {registered['id']} on are dealt from "
            + (
                f"{host.seeds.key_file()}, registered in the evidence log (anyone "
                "with the log and the checkpoint key's .pub checks every seed)"
                if registered["scheme"] == RSA
                else "the key --seed stands for, published in the evidence log"
            )
        )
    host.build_tables(plan)  # last: tables are open only when the host will play them
    return host
