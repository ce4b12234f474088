"""Real WebSocket clients (the `websockets` library over loopback) for the gateway tests.

A `Client` runs in the same event loop as the in-process host (tests/hosting.py), so the
virtual clock drives both; it keeps every frame it receives, checks each against the
published server schema, and, while `auto` is on, answers each `your_turn` with the
first of check, call, look, follow (at its least amount), pass, fold the engine offers.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from gmtool.engine.events import AMOUNT_VERBS  # a `call` entry may carry its amount: not sent

SCHEMA = json.loads(
    (
        Path(__file__).resolve().parent.parent / "gmtool/gateway/schemas/server.schema.json"
    ).read_text(encoding="utf-8")
)
VALIDATOR = Draft202012Validator(SCHEMA)
PREFERRED = ("check", "call", "look", "follow", "pass", "fold")
# Three-card hands have no street limit: people who only ever follow play one hand forever
# (with max_rounds = 0). After a few turns in a hand the client ends it: open, buy, pass.
ENDING = ("check", "call", "open", "buy", "pass", "fold")
TURNS_BEFORE_ENDING = 3


class Client:
    def __init__(self, socket: Any, auto: bool) -> None:
        self.socket = socket
        self.auto = auto
        self.frames: list[dict] = []
        self.invalid: list[str] = []
        self.close_code: int | None = None
        self.close_reason = ""
        self.task: asyncio.Task | None = None
        self.turns_in_hand = 0  # your_turn frames since the last settlement seen

    async def _read(self) -> None:
        try:
            async for data in self.socket:
                frame = json.loads(data)
                self.invalid += [e.message for e in VALIDATOR.iter_errors(frame)]
                self.frames.append(frame)
                if frame["type"] == "event" and frame["event"]["type"] == "settlement":
                    self.turns_in_hand = 0
                if self.auto and frame["type"] == "your_turn":
                    self.turns_in_hand += 1
                    await self.send(answer(frame, self.turns_in_hand > TURNS_BEFORE_ENDING))
        except ConnectionClosed:
            pass
        self.close_code = self.socket.close_code
        self.close_reason = self.socket.close_reason or ""

    async def send(self, frame: dict) -> None:
        try:
            await self.socket.send(json.dumps(frame))
        except ConnectionClosed:
            pass

    def of(self, kind: str) -> list[dict]:
        return [frame for frame in self.frames if frame["type"] == kind]

    def events(self) -> list[tuple[int, dict]]:
        """(seq, event) of every event received, in snapshots and event frames."""
        out = []
        for frame in self.frames:
            if frame["type"] == "event":
                out.append((frame["seq"], frame["event"]))
            elif frame["type"] == "snapshot":
                out += [(item["seq"], item["event"]) for item in frame["events"]]
        return out

    @property
    def closed(self) -> bool:
        return self.task is not None and self.task.done()

    async def close(self) -> None:
        await self.socket.close()
        if self.task is not None:
            await self.task


def answer(turn: dict, ending: bool = False) -> dict:
    legal = {entry["verb"]: entry for entry in turn["legal"]}
    order = ENDING if ending else PREFERRED
    verb = next((v for v in order if v in legal), turn["legal"][0]["verb"])
    act = {"type": "act", "table": turn["table"], "verb": verb}
    entry = legal[verb]
    if verb in AMOUNT_VERBS and ("min" in entry or "amounts" in entry):
        act["amount"] = entry["amounts"][0] if entry.get("amounts") else entry["min"]
    if entry.get("targets"):
        act["target"] = entry["targets"][0]
    return act


async def open_client(url: str, token: str, auto: bool = True, resume: dict | None = None):
    """A connected client that has sent its hello (the welcome, or the close, follows)."""
    socket = await connect(url)
    client = Client(socket, auto)
    hello: dict = {"type": "hello", "protocol": 1, "token": token}
    if resume is not None:
        hello["resume"] = resume
    await socket.send(json.dumps(hello))
    client.task = asyncio.get_running_loop().create_task(client._read())
    return client
