"""The player gateway in the host (issue 25): a WebSocket endpoint in the host's own loop.

`house run --listen HOST:PORT` serves it with `websockets`. A connection opens with
`hello` (a player token checked against the keys registered in the store, on the host's
clock); the player may then read the lobby, sit at a table, act, look and leave
(docs/protocol.md). What a connection receives of a table goes through its own
`gateway.views.TableView` (RULES G3). Frames to a connection go through its queue, written
by one task per connection: a client that does not read is closed, never waited for, so
no table and no other player is slowed. Close codes: see `CLOSE`. A plain HTTP GET on the
same port gets the browser page's files (`http_answer`, gateway.pages).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from gmtool.engine.errors import IllegalAction
from gmtool.engine.events import Action
from gmtool.engine.seating import coins_to_sit
from gmtool.gateway import pages
from gmtool.gateway.limits import RATE_PER_S, Quieted, TokenIds
from gmtool.gateway.protocol import MAX_FRAME, PROTOCOL, ClientMessage, ProtocolError, encode
from gmtool.gateway.protocol import read_client as read
from gmtool.gateway.tokens import LEEWAY_S, TokenError, keys_of, verify
from gmtool.house import lobby, owner_people, remote
from gmtool.house.connection import CLOSE, Connection
from gmtool.house.feeds import Feed
from gmtool.house.ownership import host_name
from gmtool.store import gm, ledger, log_append

if TYPE_CHECKING:
    from gmtool.house.host import Host
    from gmtool.house.table import HostedTable

HELLO_TIMEOUT_S = 10.0  # a connection that says nothing is closed (a half-open socket)
MAX_CONNECTIONS = 10_000
BACKLOG = 2048  # connections waiting to be accepted (asyncio's 100 drops a crowd's: 2,000 bots)


def http_answer(connection: Any, request: Any) -> Any:
    """A plain HTTP request on the gateway's port (no WebSocket upgrade): the player page's
    files, or 404 (gateway.pages); None lets a WebSocket handshake go on."""
    from email.utils import formatdate

    from websockets.datastructures import Headers
    from websockets.http11 import Response

    if "websocket" in request.headers.get("Upgrade", "").lower():
        return None
    page = pages.answer(request.method, request.path)
    headers = Headers([("Date", formatdate(usegmt=True)), ("Connection", "close"), *page.headers])
    return Response(page.status, page.reason, headers, page.body)


class Gateway:
    """The host's player endpoint: connections by player, a feed of events per table."""

    def __init__(self, host: Host, address: str) -> None:
        self.host = host
        self.address = address
        self.connections: dict[str, Connection] = {}
        self.feeds: dict[str, Feed] = {}
        self.remote: set[str] = set()  # players who sat through the gateway (no bot policy)
        self.turns: dict[str, tuple[Any, str, dict]] = {}  # table: (hand, player, your_turn)
        self.token_ids = TokenIds()  # the jti of each token a hello used (single use)
        self.setups: dict[str, dict] = {}  # owner-ante table: the setup its watchers have
        self.server: Any = None
        self.url = ""
        # this host as the lobby names it: its leases' name on a shared store
        self.name = host.ownership.name if host.ownership is not None else host_name()
        self._open = 0
        self.quieted = Quieted()  # refused hellos said, at most so many a minute

    def _refused(self, line: str) -> None:
        """A refused hello said on the host's output, unless too many were this minute."""
        said = self.quieted.line(self.host.clock.monotonic(), line)
        if said is not None:
            self.host.notify(said)

    # -- the server ---------------------------------------------------------------------

    async def start(self) -> str:
        from websockets.asyncio.server import serve

        name, _, port = self.address.rpartition(":")
        try:
            self.server = await serve(
                self._serve,
                name.strip("[]") or None,
                int(port),
                max_size=8 * MAX_FRAME,
                process_request=http_answer,
                backlog=BACKLOG,
                compression=None,  # frames of a few hundred bytes: deflate costs memory
            )
        except OSError as error:  # an address of another machine, a port in use
            from gmtool.errors import Unavailable

            raise Unavailable(
                f"--listen {self.address}: cannot listen there "
                f"({error.strerror or error}): name an address of this machine and a free port"
            ) from None
        bound = self.server.sockets[0].getsockname()
        self.url = f"ws://{self.address.rpartition(':')[0] or bound[0]}:{bound[1]}"
        if self.host.ownership is not None:  # the lobbies of the store's other hosts
            self.host.ownership.publish(self.public_url)
        return self.url

    @property
    def public_url(self) -> str:
        """Where the lobbies send players for this host: `--public-address`, else the
        address the gateway is bound to."""
        return self.host.options.public_address or self.url

    async def stop(self) -> None:
        for connection in list(self.connections.values()):
            connection.send({"type": "closed", "reason": "the host is stopping"})
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()

    async def _serve(self, socket: Any) -> None:
        from websockets.exceptions import ConnectionClosed

        if self._open >= MAX_CONNECTIONS:
            await socket.close(CLOSE["full"], "too many connections")
            return
        self._open += 1
        try:
            connection = await self._hello(socket)
            if connection is None:
                return
            writer = asyncio.get_running_loop().create_task(connection.write())
            try:
                async for data in socket:
                    verdict = self._count(connection)
                    if verdict == "close":
                        break
                    if verdict == "take":
                        self._handle(connection, data)
            except ConnectionClosed:
                pass
            finally:
                connection.closed = True
                connection.queue.put_nowait(None)
                for feed in self.feeds.values():  # a replaced connection too
                    feed.watchers.pop(connection, None)
                if self.connections.get(connection.player) is connection:
                    del self.connections[connection.player]
                    self._dropped(connection)
                await writer
                self._log_end(connection)
        finally:
            self._open -= 1

    def _log_end(self, connection: Connection) -> None:
        """What the host's output keeps of a connection that misbehaved."""
        said = []
        if connection.refused > 1:
            said.append(f"{connection.refused} frames refused")
        if connection.why_closed:
            said.append(f"closed by the host: {connection.why_closed}")
        if said:
            self.host.notify(f"gateway: {connection.player}'s connection ended ({'; '.join(said)})")

    def _count(self, connection: Connection) -> str:
        """A frame counted against the connection's budget (gateway.limits): only a frame
        taken is carried out; past the budget the client is told once, and a flood closes
        the connection."""
        verdict = connection.budget.take(self.host.clock.monotonic())
        if verdict == "refuse":
            message = f"more than {RATE_PER_S:g} frames a second: this one was not carried out"
            connection.send({"type": "error", "error": "too_fast", "message": message})
        elif verdict == "close":
            self.host.notify(f"gateway: {connection.player} flooded the socket: closed")
            connection.close(CLOSE["flood"], "too many frames")
        return verdict

    async def _hello(self, socket: Any) -> Connection | None:
        """The connection of a valid `hello`, welcomed; None once it is closed."""
        from websockets.exceptions import ConnectionClosed

        try:
            first = await asyncio.wait_for(socket.recv(), HELLO_TIMEOUT_S)
            message = read(first)
        except (TimeoutError, ConnectionClosed):
            await socket.close(CLOSE["hello"], "hello first")
            return None
        except ProtocolError as error:
            await socket.send(encode(error.frame()))
            await socket.close(CLOSE["hello"], error.code)
            return None
        if message.type != "hello":
            await socket.close(CLOSE["hello"], "hello first")
            return None
        store, clock = self.host.store, self.host.clock
        try:
            claims = verify(
                message["token"], self._keys(), log_append.store_id(store), clock.wall()
            )
        except TokenError as error:
            self._refused(f"gateway: a token refused ({error.code}: {error})")
            await socket.close(CLOSE["token"], error.code)
            return None
        player = claims.subject
        # A bot of this host's pool, or one a host enrolled before (a run with more
        # --bots): no person plays it, nor its coins.
        if player in self.host.pool.styles or ledger.is_bot(store, player):
            self._refused(f"gateway: a token for the bot {player} refused")
            await socket.close(CLOSE["token"], "bot")
            return None
        if claims.token_id is not None and not self.token_ids.use(
            claims.token_id, claims.expires + LEEWAY_S, clock.wall()
        ):
            self._refused(f"gateway: a used token replayed for {player} (its jti) refused")
            await socket.close(CLOSE["token"], "replayed")
            return None
        with store.write():
            ledger.ensure_player(store, player, "human")  # zero coins: a GM grants them
        connection = Connection(socket, player, clock.wall(), clock.monotonic())
        old = self.connections.get(player)
        if old is not None:
            old.close(CLOSE["replaced"], "connected again elsewhere")
        self.connections[player] = connection
        self.host.pool.refresh([player])
        connection.send(
            {
                "type": "welcome",
                "protocol": PROTOCOL,
                "player": player,
                "coins": self.host.pool.coins.get(player, 0),
                **({"id": message.id} if message.id else {}),
            }
        )
        resume = message.get("resume")
        for table in self.host.tables.values():
            if player in table.seated or player in table.joining:
                away = player in table.away
                resumed = resume is not None and resume["table"] == table.id
                if not (resumed and self._feed(table.id).resume(connection, resume["seq"])):
                    self._watch(connection, table)  # from too far back: a snapshot
                remote.reconnected(table, player)  # (away: the table asks them again)
                if not away:
                    self._turn_again(connection, table)
        return connection

    def _keys(self) -> dict:
        return keys_of(gm.token_keys(self.host.store))

    # -- client messages ----------------------------------------------------------------

    def _handle(self, connection: Connection, data: str | bytes) -> None:
        try:
            message = read(data)
            {
                "hello": self._again,
                "lobby": self._lobby,
                "sit": self._sit,
                "start": self._start,
                "act": self._act,
                "look": self._look,
                "leave": self._leave,
            }[message.type](connection, message)
        except ProtocolError as error:
            connection.refused += 1
            if connection.refused == 1:  # the first in words; the count when it ends
                self.host.notify(
                    f"gateway: a frame from {connection.player} refused ({error.code}): "
                    f"{error.message}"
                )
            connection.send(error.frame())
        except Exception as error:  # noqa: BLE001 - one frame's failure must not end the host
            self.host.notify(f"gateway: a frame from {connection.player} failed: {error!r}")
            connection.send(
                {"type": "error", "error": "internal", "message": "the host could not do it"}
            )

    def _again(self, connection: Connection, message: ClientMessage) -> None:
        raise ProtocolError("malformed", "hello comes once, first", message.id)

    def _table(self, message: ClientMessage) -> HostedTable:
        table = self.host.tables.get(message["table"])
        if table is None or table.closed:
            raise ProtocolError("no_table", f"no table {message['table']} here", message.id)
        return table

    def _lobby(self, connection: Connection, message: ClientMessage) -> None:
        frame: dict[str, Any] = {
            "type": "lobby",
            "rooms": lobby.rooms(self.host, self.name, self.public_url),
        }
        connection.send({**frame, **({"id": message.id} if message.id else {})})

    def _sit(self, connection: Connection, message: ClientMessage) -> None:
        player = connection.player
        if "table" in message.fields:
            table = self._table(message)
        else:
            found = [
                t
                for t in self.host.tables.values()
                if (t.profile_id, t.tier) == (message["profile"], message["tier"]) and not t.closed
            ]
            if not found:
                raise ProtocolError("no_table", "no table of that room here", message.id)
            # the table with the fewest people: the host's bots stand up for people (S21)
            table = min(found, key=self._people_at)
        for other in self.host.tables.values():
            if other is not table and (player in other.seated or player in other.joining):
                raise ProtocolError(
                    "seated", f"{player} sits at {other.id}: leave it first", message.id
                )
        owner_table = _owner_ante(table)
        if player in self.host.pool.benched:
            raise ProtocolError(
                "kicked", f"a GM kicked {player}: not until the host restarts", message.id
            )
        ante = (table.state.ante or None) if owner_table and table.state else None
        need = coins_to_sit(table.config, table.tier, ante) if table.config else 0
        self.host.pool.refresh([player])
        held = self.host.pool.coins.get(player, 0)
        if held < need:
            raise ProtocolError(
                "coins",
                f"{player} holds {held:,} coins; {table.id} needs {need:,} to sit (RULES S21)",
                message.id,
            )
        self.remote.add(player)
        if owner_table:
            try:
                owner_people.sit(table, player)
            except IllegalAction as illegal:
                self._illegal(connection, illegal, message.id)
                return
        elif player not in table.seated and player not in table.joining:
            table.joining.append(player)
        self._watch(connection, table, message.id)

    def _people_at(self, table: HostedTable) -> int:
        return sum(1 for name in table.seated if name in self.remote) + len(table.joining)

    def _start(self, connection: Connection, message: ClientMessage) -> None:
        table = self._table(message)
        if not _owner_ante(table):
            raise ProtocolError(
                "unsupported",
                "start is for owner-ante tables: hands here start by themselves",
                message.id,
            )
        self._between_hands(connection, table, Action("start", connection.player), message.id)

    def _between_hands(self, connection: Connection, table, action: Action, request) -> None:
        """An owner-ante table's setup or restart (RULES L2, L3, L5, L6): the engine judges."""
        try:
            owner_people.act(table, connection.player, action)
        except IllegalAction as illegal:
            self._illegal(connection, illegal, request)

    def _illegal(self, connection: Connection, illegal: IllegalAction, request) -> None:
        frame = {"type": "error", "error": "illegal", "rule": illegal.rule}
        frame["message"] = illegal.reason
        connection.send({**frame, **({"id": request} if request else {})})

    def _act(self, connection: Connection, message: ClientMessage) -> None:
        table = self._table(message)
        hand = table.current_hand()
        if message["verb"] in owner_people.BETWEEN_HANDS and _owner_ante(table):
            action = Action(
                message["verb"], connection.player, message.get("amount"), message.get("target")
            )
            self._between_hands(connection, table, action, message.id)
            return
        if hand is None or hand.is_over or connection.player not in table.seated:
            raise ProtocolError(
                "not_playing", f"{connection.player} plays no hand at {table.id} now", message.id
            )
        action = Action(
            message["verb"], connection.player, message.get("amount"), message.get("target")
        )
        try:
            remote.submit(table, hand, action)
        except IllegalAction as illegal:
            self._illegal(connection, illegal, message.id)
            return
        self._turn_goes_on(table, hand, connection.player)

    def _look(self, connection: Connection, message: ClientMessage) -> None:
        self._watch(connection, self._table(message), message.id)

    def _leave(self, connection: Connection, message: ClientMessage) -> None:
        table = self._table(message)
        if _owner_ante(table):
            owner_people.leave(table, connection.player)
        else:
            remote.leave(table, connection.player)
        self._feed(table.id).watchers.pop(connection, None)
        connection.send(self._snapshot(table, None, message.id))

    # -- what connections receive ---------------------------------------------------------

    def _feed(self, table_id: str) -> Feed:
        if table_id not in self.feeds:
            self.feeds[table_id] = Feed(table_id)
        return self.feeds[table_id]

    def _watch(self, connection: Connection, table: HostedTable, request: str | None = None):
        events = self._feed(table.id).watch(connection)
        connection.send(self._snapshot(table, events, request))

    def _snapshot(self, table: HostedTable, events: list | None, request: str | None = None):
        from gmtool.engine.view import public_view

        hand = table.current_hand()
        running = hand is not None and getattr(hand, "order", None) and not hand.is_over
        frame: dict[str, Any] = {
            "type": "snapshot",
            "table": table.id,
            "seq": self._feed(table.id).seq,
            "profile": table.profile_id,
            "tier": table.tier,
            "game": table.game,
            "seated": list(table.seated),
            "joining": list(table.joining),
            "hand": public_view(hand) if running else None,
            "events": events or [],
        }
        setup = owner_people.setup(table)
        if setup is not None:
            frame["setup"] = setup
        return {**frame, **({"id": request} if request else {})}

    def events(self, table: HostedTable, events: list[dict]) -> None:
        """A table's new events: numbered, and sent to each watcher through its view."""
        self._feed(table.id).publish(events)

    def your_turn(self, table: HostedTable, player: str, hand, deadline: float, left: int):
        frame = {
            "type": "your_turn",
            "table": table.id,
            "seq": self._feed(table.id).seq,
            "legal": [legal.as_json() for legal in hand.legal_actions()],
            "deadline": deadline,
            "seconds": left,
        }
        self.turns[table.id] = (hand, player, frame)
        connection = self.connections.get(player)
        if connection is not None:
            connection.send(frame)

    def _turn_goes_on(self, table: HostedTable, hand, player: str) -> None:
        """An action that leaves the turn with its player (a three-card look, RULES H4):
        the turn again with the legal actions as they are now, by the same deadline."""
        asked, who, frame = self.turns.get(table.id, (None, "", {}))
        if hand is asked and who == player and not hand.is_over and hand.to_act == player:
            self.your_turn(table, player, hand, frame["deadline"], frame["seconds"])

    def _turn_again(self, connection: Connection, table: HostedTable) -> None:
        """A player who connects again (a reloaded page) while their turn stands, with no
        disconnect in between (the new socket came first), gets the turn again."""
        asked, player, frame = self.turns.get(table.id, (None, "", {}))
        hand = table.current_hand()
        if hand is asked and player == connection.player and hand is not None and not hand.is_over:
            if hand.to_act == player and hand.players[player].connected:
                connection.send(frame)

    def kicked(self, table: HostedTable, player: str, reason: str | None) -> None:
        connection = self.connections.get(player)
        if connection is not None:
            connection.send({"type": "kicked", "table": table.id, "reason": reason or ""})
            connection.close(CLOSE["kicked"], "kicked")

    def setup(self, table: HostedTable) -> None:
        """An owner-ante table published: its watchers get its setup when it changed."""
        now = owner_people.setup(table)
        if now is None or self.setups.get(table.id) == now:
            return
        self.setups[table.id] = now
        for connection in list(self._feed(table.id).watchers):
            connection.send({"type": "setup", "table": table.id, "setup": now})

    def closed(self, table: HostedTable) -> None:
        for connection in self._feed(table.id).watchers:
            connection.send({"type": "closed", "table": table.id, "reason": "closed by a GM"})

    def people(self, table: HostedTable) -> list[dict]:
        """The people seated or joining at `table`: since when they are connected, or
        since when they are away (their reconnect window runs from then, S18)."""
        now, wall = self.host.clock.monotonic(), self.host.clock.wall()
        out = []
        for name in [*table.seated, *table.joining]:
            if name not in self.remote:
                continue
            connection = self.connections.get(name)
            person: dict[str, Any] = {"name": name, "joining": name in table.joining}
            person["connected_since"] = connection.since if connection else None
            away = table.away.get(name)
            person["away_since"] = wall - (now - away) if away is not None else None
            out.append(person)
        return out

    def connected(self, player: str) -> bool:
        return player in self.connections

    def _dropped(self, connection: Connection) -> None:
        if self.host.stopping_now:
            return  # the host closed the sockets: its running hands are voided next
        for table in self.host.tables.values():
            remote.disconnected(table, connection.player)


def _owner_ante(table: HostedTable) -> bool:
    from gmtool.house.owner_host import OwnerAnteTable

    return isinstance(table, OwnerAnteTable)
