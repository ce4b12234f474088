"""A bot as a network client (issue 25 item 6): a player program that speaks only the public
protocol (docs/protocol.md) and plays the same policies as the host's own bots.

A `NetworkBot` says `hello` with its token, reads the lobby, sits in a room, answers each
`your_turn` and, when its socket drops, connects again and resumes the table from the last
event number it saw (RULES S18). It decides from what it was told and nothing else (a
`Told`: its own cards, the face-up cards, who is still in the hand, the pot) and the legal
actions of the `your_turn` frame, with `bots.policies.decide` and the strength estimate
of `bots.strength` (`Sight.told`). The ranking of the room's cards is the room's published
rules, looked up by the `config_id` its hands start with (`rules`): what any player may
know before sitting down; without it the bot plays every hand as a blind player does.

It measures what a load test needs: each action's round trip (the `your_turn` frame
received to the event of its action received, less any thinking time it was told to
take) and how long its decisions took.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gmtool.bots.policies import Policy, Rng, decide
from gmtool.bots.strength import Sight
from gmtool.engine.cards import Card
from gmtool.engine.events import AMOUNT_VERBS, Action
from gmtool.engine.games import GAMES
from gmtool.engine.hand import Legal
from gmtool.engine.view import HIDDEN
from gmtool.gateway.protocol import PROTOCOL

# Close codes after which connecting again cannot help (docs/protocol.md, Close codes).
FINAL = {4001: "token refused", 4002: "no hello", 4003: "kicked", 4004: "replaced elsewhere"}
RETRY_S = (0.5, 1.0, 2.0, 4.0, 8.0)  # pauses before each new attempt after a drop
FIRST_TRIES = 3  # first connections whose handshake timed out, tried again (a busy host)
MAX_RETRIES = 30  # attempts in a row (at 8 s: past any reconnect window of the profiles)
LEAVE_VERBS = {"fold", "pass"}  # the player's own ways out of a hand (the engine's)


class BotRefused(Exception):
    """The host refused this bot for good: `reason` says why, in a few words."""

    def __init__(self, player: str, reason: str) -> None:
        super().__init__(f"{player}: {reason}")
        self.player = player
        self.reason = reason


class Unreachable(Exception):
    """No WebSocket answered at the URL (the first connection only)."""


@dataclass
class Told:
    """What one player has been told of the running hand: nothing more."""

    me: str
    config_id: str | None = None
    blind: bool = False  # whether own cards wait for a look (three-card, H4)
    looked: bool = False
    own: list[str] = field(default_factory=list)  # own cards seen (face down)
    up: dict[str, list[str]] = field(default_factory=dict)  # face-up cards by player
    live: list[str] = field(default_factory=list)  # players still in the hand
    dealt: list[str] = field(default_factory=list)  # the players the hand started with
    pot: int = 0
    over: bool = True

    def see(self, event: dict[str, Any]) -> None:
        kind, player = event.get("type"), event.get("player")
        if kind == "hand_started":
            game = GAMES.get(str(event.get("game")))
            self.config_id = event.get("config_id")
            self.blind = game is None or game.blind_until_look
            self.looked, self.own, self.up, self.pot, self.over = False, [], {}, 0, False
            self.dealt = [seat["player"] for seat in event.get("seats", [])]
            self.live = list(self.dealt)
        elif kind == "ante":
            self.pot += int(event.get("amount") or 0)
        elif kind == "deal":
            self._dealt(event.get("cards", []))
        elif kind == "look" and player == self.me:
            self.looked, self.own = True, list(event.get("cards", []))
        elif kind in LEAVE_VERBS and player in self.live:
            self.live.remove(player)
        elif kind == "buy_result" and event.get("loser") in self.live:
            self.live.remove(event["loser"])
        elif kind in ("hand_ended", "settlement"):
            self.over = True
        if isinstance(event.get("pot"), int):
            self.pot = event["pot"]

    def _dealt(self, cards: list[dict[str, Any]]) -> None:
        for card in cards:
            code, owner = card.get("card"), card.get("player")
            if code == HIDDEN or not isinstance(code, str) or not isinstance(owner, str):
                continue
            if card.get("face") == "up":
                self.up.setdefault(owner, []).append(code)
            elif owner == self.me:
                self.own.append(code)

    def strength(self, sight: Sight | None) -> float | None:
        """The policy's strength from what was told (None: blind, or the rules unknown)."""
        if sight is None or (self.blind and not self.looked):
            return None
        deck = sight.table.ranking.deck
        try:
            mine = [deck.parse_card(code) for code in self.own + self.up.get(self.me, [])]
            others = [
                _mask([deck.parse_card(code) for code in self.up.get(name, [])])
                for name in self.live
                if name != self.me
            ]
        except ValueError:  # a card these rules do not know: judge nothing
            return None
        if not mine:
            return None
        return sight.told(mine, others)


def _mask(cards: list[Card]) -> int:
    mask = 0
    for card in cards:
        mask |= card.mask
    return mask


def legal_of(entries: list[dict[str, Any]]) -> list[Legal]:
    """The engine's `Legal` entries a `your_turn` frame lists (`Legal.as_json`, read back)."""
    return [
        Legal(
            entry["verb"],
            entry.get("min"),
            entry.get("max"),
            entry.get("step", 1),
            tuple(entry.get("targets", ())),
            tuple(entry.get("amounts", ())),
            tuple(entry.get("chips", ())),
            entry.get("call", 0),
        )
        for entry in entries
    ]


def act_frame(table: str, action: Action) -> dict[str, Any]:
    """The `act` (or, for an escape, the `leave`) frame of a policy's action."""
    if action.verb == "escape":
        return {"type": "leave", "table": table}
    frame: dict[str, Any] = {"type": "act", "table": table, "verb": action.verb}
    if action.verb in AMOUNT_VERBS and action.amount is not None:
        frame["amount"] = action.amount
    if action.target is not None:
        frame["target"] = action.target
    return frame


@dataclass
class Stats:
    """What a bot measured: seconds per action round trip and per decision."""

    round_trips: list[float] = field(default_factory=list)
    decisions: list[float] = field(default_factory=list)
    hands: int = 0  # hands it played to their settlement
    resumes: int = 0  # connections after a drop
    errors: list[str] = field(default_factory=list)  # error frames received


class NetworkBot:
    """One bot player over a WebSocket (see the module's docstring)."""

    def __init__(
        self,
        url: str,
        token: str,
        policy: Policy,
        rng: Rng,
        rules: Callable[[str], Sight | None],
        room: tuple[str, str] | None = None,
        hands: int = 0,
        think_s: float = 0.0,
        timer: Callable[[], float] = time.perf_counter,
        label: str = "a bot",
    ) -> None:
        self.url, self.token, self.policy, self.rng = url, token, policy, rng
        self.rules, self.room, self.hands, self.think_s = rules, room, hands, think_s
        self.timer, self.label = timer, label  # (label: who it is before its welcome)
        self.name = ""
        self.table: str | None = None
        self.seq = 0
        self.told = Told("")
        self.stats = Stats()
        self.socket: Any = None
        self.done = False
        self._sights: dict[str, Sight | None] = {}
        self._setup_seen: tuple[Any, ...] = ()  # the owner-ante answer last sent
        self._hands_seen = 0  # the table's settlements this bot saw (owner-ante: its rounds)
        self._asked: float | None = None  # when the pending your_turn came (timer)
        self._pause = 0.0  # seconds to think before the next answer

    # -- the connection -------------------------------------------------------------------

    async def run(self) -> Stats:
        """Play until `hands` hands are played (0: until the table or host closes, or the
        task is cancelled); BotRefused or Unreachable when it cannot play at all."""
        from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

        attempt = 0
        while not self.done:
            try:
                await self._session()
                return self.stats
            except (ConnectionClosed, OSError, InvalidHandshake, TimeoutError) as error:
                code = getattr(getattr(error, "rcvd", None), "code", None)
                if code in FINAL:
                    reason = getattr(error.rcvd, "reason", "")  # type: ignore[union-attr]
                    raise BotRefused(self.name or self.label, f"{FINAL[code]}: {reason}") from None
                busy = isinstance(error, TimeoutError) and attempt < FIRST_TRIES
                if not self.name and not busy:  # (a busy host: its handshake timed out)
                    raise Unreachable(f"cannot reach {self.url}: {_why(error)}") from None
                if attempt >= MAX_RETRIES:
                    raise
                await asyncio.sleep(RETRY_S[min(attempt, len(RETRY_S) - 1)])
                attempt += 1
                self.stats.resumes += 1
            except InvalidURI as error:
                raise Unreachable(f"{self.url} is not a ws:// address: {error}") from None
        return self.stats

    async def _session(self) -> None:
        from websockets.asyncio.client import connect

        async with connect(self.url, open_timeout=10, max_size=2**20) as socket:
            self.socket = socket
            hello: dict[str, Any] = {"type": "hello", "protocol": PROTOCOL, "token": self.token}
            if self.table is not None:
                hello["resume"] = {"table": self.table, "seq": self.seq}
            await socket.send(json.dumps(hello))
            async for data in socket:
                reply = self.receive(json.loads(data))
                if reply and self._pause:
                    await asyncio.sleep(self._pause)  # thinking, as a person would
                    self._pause = 0.0
                for out in reply:
                    await socket.send(json.dumps(out))
                if self.done:
                    return
            raise_closed(socket)

    def drop(self) -> None:
        """Drop the socket as a network failure would (no close handshake): the bot then
        connects again and resumes."""
        if self.socket is not None:
            self.socket.transport.abort()

    # -- frames ---------------------------------------------------------------------------

    def receive(self, frame: dict[str, Any]) -> list[dict[str, Any]]:
        """The frames to send in answer to `frame` (and what the bot learns from it)."""
        kind = frame.get("type")
        if kind == "welcome":
            self.name = self.told.me = frame["player"]
            if self.table is None:
                return [{"type": "lobby"}]
            return [{"type": "look", "table": self.table}]  # still seated? (else: sit again)
        if kind == "lobby":
            return [self._sit(frame["rooms"])]
        if kind == "snapshot":
            return self._snapshot(frame)
        if kind == "event" and frame.get("table") == self.table:
            return self._event(frame["seq"], frame["event"])
        if kind == "your_turn" and frame.get("table") == self.table:
            return self._turn(frame)
        if kind == "setup" and frame.get("table") == self.table:
            return self._setup(frame["setup"])
        if kind == "error":
            self.stats.errors.append(f"{frame.get('error')}: {frame.get('message')}")
            if frame.get("error") in ("coins", "no_table", "kicked", "seated", "unsupported"):
                raise BotRefused(self.name, str(frame.get("message")))
        if kind in ("kicked", "closed") and frame.get("table") in (None, self.table):
            self.done = True
        return []

    def _sit(self, rooms: list[dict[str, Any]]) -> dict[str, Any]:
        if self.room is not None:
            return {"type": "sit", "profile": self.room[0], "tier": self.room[1]}
        # a room with a table this host serves (a lobby lists every host's tables; a host
        # from before says nothing of `here`: all its own). (An owner-ante room: `null`
        # to sit, the owner's ante decides.)
        open_rooms = [
            room
            for room in rooms
            if any(table.get("here", True) for table in room.get("tables", []))
        ]
        if not open_rooms:
            raise BotRefused(self.name, "the lobby lists no room a player may sit in")
        room = open_rooms[int(self.rng.random() * len(open_rooms))]
        return {"type": "sit", "profile": room["profile"], "tier": room["tier"]}

    def _snapshot(self, frame: dict[str, Any]) -> list[dict[str, Any]]:
        if self.table not in (None, frame["table"]):
            return []
        if self.name not in frame["seated"] and self.name not in frame["joining"]:
            if self.table is not None:  # stood up (a drop between hands): sit again
                return [{"type": "sit", "table": frame["table"]}]
        self.table = frame["table"]
        self.told = Told(self.name)
        for item in frame["events"]:
            self.told.see(item["event"])
        self.seq = frame["seq"]
        return self._setup(frame["setup"]) if frame.get("setup") else []

    def _setup(self, setup: dict[str, Any]) -> list[dict[str, Any]]:
        """An owner-ante table between hands (RULES L1-L6): as owner, set the smallest ante
        and start once someone agreed; else agree; after a hand, start again. Each once
        between two hands (a `setup` frame comes at every change, and an answer sent twice
        would reach the table in a later phase, where the engine refuses it)."""
        if self.name not in setup["seated"]:
            return []
        phase, mine, table = setup["phase"], setup["owner"] == self.name, self.table
        choosing = phase in ("agreeing", "countdown")
        out: dict[str, Any] | None = None
        if mine and phase == "setting_ante":
            out = {"type": "act", "table": table, "verb": "ante", "amount": setup["chips"][0]}
        elif (mine and choosing and setup["agreed"]) or (
            phase == "continue" and self.name not in setup["ready"]
        ):
            out = {"type": "start", "table": table}
        elif not mine and choosing and self.name not in setup["agreed"]:
            out = {"type": "act", "table": table, "verb": "agree"}
        if out is None:
            return []
        key = (self._hands_seen, phase, setup["owner"], setup["ante"], out.get("verb", "start"))
        if key == self._setup_seen:
            return []
        self._setup_seen = key
        return [out]

    def _event(self, seq: int, event: dict[str, Any]) -> list[dict[str, Any]]:
        if seq <= self.seq:
            return []  # (never sent twice by the host: kept safe anyway)
        self.seq = seq
        self.told.see(event)
        if event.get("type") == "settlement":
            self._hands_seen += 1
        if event.get("player") == self.name and self._asked is not None:
            self.stats.round_trips.append(self.timer() - self._asked)
            self._asked = None
        if event.get("type") == "settlement" and self.name in _players_of(event):
            self.stats.hands += 1
            if self.hands and self.stats.hands >= self.hands:
                self.done = True
                return [{"type": "leave", "table": self.table}]
        return []

    def _turn(self, frame: dict[str, Any]) -> list[dict[str, Any]]:
        started = self.timer()
        sight = self._sight(self.told.config_id)
        action = decide(
            self.policy,
            self.told.strength(sight),
            legal_of(frame["legal"]),
            self.name,
            self.rng,
            self.told.pot,
        )
        self.stats.decisions.append(self.timer() - started)
        if self.think_s:  # an exponential pause with this mean (not counted in the trip)
            self._pause = -self.think_s * math.log(1.0 - self.rng.random())
        self._asked = started + self._pause
        return [act_frame(frame["table"], action)]

    def _sight(self, config_id: str | None) -> Sight | None:
        if config_id is None:
            return None
        if config_id not in self._sights:
            self._sights[config_id] = self.rules(config_id)
        return self._sights[config_id]


def _players_of(event: dict[str, Any]) -> Any:
    """The players a settlement settles (its `results`, by player)."""
    results = event.get("results")
    return results if isinstance(results, dict) else {}


def _why(error: Exception) -> str:
    if isinstance(error, ConnectionRefusedError):
        return "connection refused (is `house run --listen` running there?)"
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    return str(error) or type(error).__name__


def raise_closed(socket: Any) -> None:
    """The iteration over a socket ended: it closed; raise as websockets does on recv."""
    from websockets.exceptions import ConnectionClosedOK

    raise ConnectionClosedOK(socket.protocol.close_rcvd, socket.protocol.close_sent)
