"""One player's socket in the gateway: its frames go through a queue that one task writes.

A client that does not read is closed (4005) rather than waited for, so no table and no
other player is slowed by it.
"""

from __future__ import annotations

import asyncio
from typing import Any

from gmtool.gateway.limits import FrameBudget
from gmtool.gateway.protocol import encode

MAX_QUEUE = 512  # frames waiting for a client that does not read: past them it is closed
CLOSE = {
    "token": 4001,  # the token opens nothing here (reason: TokenError's code, or "bot")
    "hello": 4002,  # the first frame was not a hello, or none came in time
    "kicked": 4003,  # a GM kicked the player (a `kicked` frame first)
    "replaced": 4004,  # the same player connected again
    "slow": 4005,  # the client did not read its frames
    "full": 4006,  # too many connections
    "flood": 4007,  # frames past the connection's budget, without a pause (gateway.limits)
}


class Connection:
    """One player's socket: who it is and the frames waiting to be written to it."""

    def __init__(self, socket: Any, player: str, since: float, now: float) -> None:
        self.socket = socket
        self.budget = FrameBudget(now)  # frames it may send (on the host's monotonic clock)
        self.player = player
        self.since = since  # when it said hello (wall time on the host's clock)
        self.queue: asyncio.Queue[str | None] = asyncio.Queue()
        self.closed = False
        self.closing: asyncio.Task | None = None
        self.refused = 0  # frames refused (malformed, unknown...), for the host's output
        self.why_closed = ""  # why the host closed it, if it did

    def send(self, frame: dict[str, Any]) -> None:
        if self.closed:
            return
        if self.queue.qsize() >= MAX_QUEUE:
            self.close(CLOSE["slow"], "too many frames not read")
            return
        self.queue.put_nowait(encode(frame))

    def close(self, code: int, reason: str) -> None:
        if not self.closed:
            self.closed = True
            self.why_closed = f"{code} {reason}"
            self.queue.put_nowait(None)
            # (kept: the loop holds only a weak reference to a task)
            self.closing = asyncio.get_running_loop().create_task(self.socket.close(code, reason))

    async def write(self) -> None:
        from websockets.exceptions import ConnectionClosed

        while (text := await self.queue.get()) is not None:
            try:
                await self.socket.send(text)
            except ConnectionClosed:
                return
