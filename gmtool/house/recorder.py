"""Writing a table's engine events into the store as they happen.

The engine yields events; the recorder routes them: table events (joins, the owner's
ante) go to the table's chain, a `hand_started` event opens a hand row (with the deck
commitment) in the same transaction as every event the start produced (antes, the deal,
the first speaker), so a crash never leaves a hand that stops short of what its start
gave; each further input's events are appended in one transaction, and the settlement
closes the hand in one durable transaction with its ledger rows.
"""

from __future__ import annotations

from collections.abc import Sequence

from gmtool.engine.deck import ALGORITHM, commitment
from gmtool.engine.events import Event
from gmtool.store import hands as hand_store
from gmtool.store.db import Store

_HAND_TAIL = {"below_minimum"}  # events the engine emits after the settlement, of the hand


class Recorder:
    """Routes one table's events to its chain; knows the hand that is open, if any."""

    def __init__(self, store: Store, table_id: str) -> None:
        self.store = store
        self.log = hand_store.TableLog(store, table_id)
        self.hand_id: int | None = None
        self.seed: bytes | None = None
        self.number = 0
        self.coins_move = True

    def record(
        self, events: Sequence[Event], seed: bytes | None = None, number: int | None = None
    ) -> dict | None:
        """Store new events; returns the settlement if a hand ended among them."""
        batch: list[dict] = []
        closing: dict | None = None  # the settlement of the open hand, once seen
        ended = None
        starting: Event | None = None  # a hand_started not yet written (with what follows)
        for item in events:
            if item.type == "hand_started":
                self._flush(batch)
                batch, starting = [], item
                continue
            if starting is not None and item.type == "settlement":
                self._begin(starting, seed, number, batch)  # a hand over at its start
                batch, starting = [], None
            if closing is not None and item.type not in _HAND_TAIL:
                self._settle(batch, closing)  # what follows belongs to the table again
                batch, ended, closing = [], closing, None
            batch.append(item.as_json())
            if item.type == "settlement" and self.hand_id is not None:
                closing = item.as_json()
        if starting is not None:
            self._begin(starting, seed, number, batch)
            return ended
        if closing is not None:
            self._settle(batch, closing)
            return closing
        self._flush(batch)
        return ended

    def _flush(self, batch: list[dict]) -> None:
        if batch:
            self.log.append(self.hand_id, batch)

    def _begin(
        self, started: Event, seed: bytes | None, number: int | None, opening: list[dict]
    ) -> None:
        """The hand's row and its first events (`hand_started`, then `opening`) at once."""
        if seed is None or number is None:
            raise ValueError("a hand needs its seed and number to be recorded")
        fields = started.fields
        self.seed, self.number = seed, number
        self.coins_move = not fields.get("training", False)
        self.hand_id = hand_store.begin_hand(
            self.store,
            self.log,
            number,
            fields.get("config_id"),
            fields.get("tier"),
            fields.get("banker"),
            fields.get("ante"),
            fields.get("seats"),
            commitment(seed),
            ALGORITHM,
            [started.as_json(), *opening],
        )

    def _settle(self, batch: list[dict], settlement: dict) -> None:
        fields = {k: v for k, v in settlement.items() if k != "type"}
        hand_store.settle_hand(
            self.store,
            self.log,
            self.hand_id,
            batch,
            fields,
            self.seed.hex(),
            coins_move=self.coins_move,
        )
        self.hand_id = None

    def void(self, reason: str, detail: str = "") -> int | None:
        """Void the open hand (stakes returned, seed revealed); returns its id."""
        hand_id = self.hand_id
        if hand_id is not None:
            hand_store.void_hand(
                self.store,
                self.log,
                hand_id,
                reason,
                self.seed.hex() if self.seed else None,
                detail,
            )
            self.hand_id = None
        return hand_id
