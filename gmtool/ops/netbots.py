"""`gmtool bots --connect`: bot players that reach a host through the player gateway only
(issue 25 item 6), as a load generator and as the proof that the protocol is complete.

Where the bots come from, and their coins:

- with `--db` (the operator testing their own room): `prepare` mints each bot a token with
  the key beside the store (`players token`'s key, made and registered on first use: a
  logged GM action) and, with `--grant COINS`, tops each bot up to COINS with a GM
  adjustment (`players adjust`'s, signed and logged as evidence, with its reason); nothing
  else is written;
- with `--token-file`: one token a line, minted by the operator's login service; their
  coins are whatever the operator granted.

The bots also take, from the store, the rules every room publishes (the compiled configs:
the deck and ranking a player may know before sitting); nothing else. During play the
store is not read at all: each decision comes from the frames the bot received
(gateway/client.py).
"""

from __future__ import annotations

import asyncio
import random
import signal
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gmtool.bots.policies import POLICIES, Policy, policy_named
from gmtool.bots.strength import Sight
from gmtool.engine.games import ranking_for
from gmtool.errors import Refused, Unavailable, UsageError
from gmtool.evidence.request import Gm
from gmtool.gateway.client import FINAL, BotRefused, NetworkBot, Stats, Unreachable
from gmtool.ops.gm import adjust
from gmtool.ops.player_tokens import mint
from gmtool.store import configs, ledger
from gmtool.store.db import Store

GRANT_REASON = "bots --connect: coins for network bots to play with"
RAMP_S = 0.002  # between two bots' first connections: 2,000 bots connect within 4 s


def bot_names(prefix: str, count: int) -> list[str]:
    return [f"{prefix}-{index:04d}" for index in range(1, count + 1)]


def prepare(
    store: Store, actor: Gm, names: list[str], grant: int | None, ttl_s: int
) -> dict[str, Any]:
    """A token for each of `names` (minted by `actor`'s right to, as `players token`), each
    topped up to `grant` coins by a logged GM adjustment; the rooms' published rules.
    {"tokens": [...], "granted": [(name, delta)], "rules": {config_id: compiled}}."""
    tokens = [mint(store, actor, name, ttl_s)["token"] for name in names]
    granted = []
    for name in names:
        short = (grant or 0) - (ledger.coins_or_none(store, name) or 0)
        if short > 0:
            adjust(store, actor, name, short, GRANT_REASON)
            granted.append((name, short))
    return {"tokens": tokens, "granted": granted, "rules": published_rules(store)}


def published_rules(store: Store) -> dict[str, Any]:
    """Every stored config by id: the rules of every room the store has deployed."""
    ids = [row["config_id"] for row in configs.stored_configs(store)]
    return {config_id: configs.load_config(store, config_id) for config_id in ids}


def sights(rules: Mapping[str, Any]) -> Callable[[str], Sight | None]:
    """What a bot uses to judge its cards under a config id (None: rules not known)."""

    def sight(config_id: str) -> Sight | None:
        compiled = rules.get(config_id)
        return None if compiled is None else Sight(ranking_for(compiled))

    return sight


def read_tokens(path: Path) -> list[str]:
    """The tokens of a file, one a line (blank lines and `#` comments skipped)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"--token-file {path}: cannot read it ({error})") from None
    tokens = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    if not tokens:
        raise UsageError(f"--token-file {path}: no token in it (one a line)")
    return tokens


def policies(names: list[str]) -> list[Policy]:
    """The policies named (UsageError naming the valid ones); every named one by default."""
    return [policy_named(name) for name in names] if names else list(POLICIES.values())


@dataclass
class Report:
    """What the bots did: the stats of each bot, and why any stopped early."""

    stats: list[Stats] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    interrupted: bool = False

    def summary(self) -> dict[str, Any]:
        trips = sorted(t for s in self.stats for t in s.round_trips)
        return {
            "bots": len(self.stats),
            "hands": sum(s.hands for s in self.stats),
            "actions": len(trips),
            "resumes": sum(s.resumes for s in self.stats),
            "errors": sum(len(s.errors) for s in self.stats),
            "round_trip_ms": {
                "p50": round(quantile(trips, 0.50) * 1000, 2),
                "p99": round(quantile(trips, 0.99) * 1000, 2),
            },
            "refused": self.refused,
            "interrupted": self.interrupted,
        }


def quantile(values: list[float], q: float) -> float:
    """The q-quantile of sorted `values` (nearest rank; 0 for none)."""
    if not values:
        return 0.0
    return values[min(len(values) - 1, int(q * len(values)))]


def make_bots(
    url: str,
    tokens: list[str],
    rules: Mapping[str, Any],
    styles: list[Policy],
    room: tuple[str, str] | None = None,
    hands: int = 0,
    think_s: float = 0.0,
    seed: str | None = None,
) -> list[NetworkBot]:
    """One bot a token, their policies dealt in turn, each with its own random stream."""
    master = random.Random(seed)
    sight = sights(rules)
    return [
        NetworkBot(
            url,
            token,
            styles[index % len(styles)],
            random.Random(master.getrandbits(64)),
            sight,
            room,
            hands,
            think_s,
            label=f"bot {index + 1}",
        )
        for index, token in enumerate(tokens)
    ]


async def play(bots: list[NetworkBot], stop: asyncio.Event | None = None) -> Report:
    """Run `bots` until each is done, or `stop` is set (then each leaves: cancelled)."""
    tasks = [asyncio.ensure_future(_after(i * RAMP_S, bot)) for i, bot in enumerate(bots)]
    report = Report()
    waiter = asyncio.ensure_future(stop.wait()) if stop is not None else None
    pending: set[asyncio.Future[Any]] = set(tasks)
    while pending - {waiter}:
        done, pending = await asyncio.wait(
            pending | ({waiter} if waiter else set()), return_when=asyncio.FIRST_COMPLETED
        )
        if waiter is not None and waiter in done:
            report.interrupted = True
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
            break
        for task in done:
            error = task.exception()
            token = isinstance(error, BotRefused) and error.reason.startswith(FINAL[4001])
            if isinstance(error, Unreachable) or token:
                for other in pending:
                    other.cancel()
                await asyncio.gather(*pending, return_exceptions=True)
                raise Unavailable(
                    f"the host refused the token of {error.player}: {error.reason.split(': ')[-1]}"
                    if isinstance(error, BotRefused)
                    else str(error)
                )
            if isinstance(error, BotRefused):
                report.refused.append(str(error))
            elif error is not None:
                raise error
        pending.discard(waiter)  # type: ignore[arg-type]
    if waiter is not None:
        waiter.cancel()
    report.stats = [bot.stats for bot in bots]
    if report.refused and len(report.refused) == len(bots):
        raise Refused(f"the host refused every bot; the first: {report.refused[0]}")
    return report


async def _after(seconds: float, bot: NetworkBot) -> Stats:
    await asyncio.sleep(seconds)
    return await bot.run()


def run(bots: list[NetworkBot], started: Callable[[], None] = lambda: None) -> Report:
    """`play` in a new event loop; Ctrl-C (SIGINT) or SIGTERM ends it cleanly: each bot's
    socket is closed (a drop the host counts, S18) and what was played is reported.
    `started` is called once they handle those signals."""

    async def main() -> Report:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        started()
        return await play(bots, stop)

    return asyncio.run(main())
