"""A table's events as the gateway sends them: numbered, kept for resumes, seen through
each watcher's own view (RULES G3).

Numbers (`seq`) run per table for the host's life, from 1. The feed keeps the events of
the running hand and of the one before it: a client that dropped may resume from any
number in them and gets every later event once (RULES S18); from further back it gets a
snapshot instead.
"""

from __future__ import annotations

from typing import Any, Protocol

from gmtool.gateway.views import TableView


class Watcher(Protocol):
    player: str

    def send(self, frame: dict[str, Any]) -> None: ...


class Feed:
    def __init__(self, table_id: str) -> None:
        self.table_id = table_id
        self.seq = 0
        self.events: list[tuple[int, dict[str, Any]]] = []  # since the previous hand began
        self.hand_start = 0  # where the running (or last) hand begins in `events`
        self.watchers: dict[Any, TableView] = {}

    def publish(self, events: list[dict[str, Any]]) -> None:
        for event in events:
            self.seq += 1
            if event.get("type") == "hand_started":
                del self.events[: self.hand_start]  # keep the hand before this one
                self.hand_start = len(self.events)
            self.events.append((self.seq, event))
            for watcher, view in list(self.watchers.items()):
                watcher.send(self._frame(self.seq, view.see(event)))

    def _frame(self, seq: int, event: dict[str, Any]) -> dict[str, Any]:
        return {"type": "event", "table": self.table_id, "seq": seq, "event": event}

    def watch(self, watcher: Watcher) -> list[dict[str, Any]]:
        """Follow the table from now on; the running hand's events so far, as `watcher`
        may see them (a new view learns the hand from its start: the viewer's cards)."""
        view = TableView(watcher.player)
        current = []
        for index, (seq, event) in enumerate(self.events):
            seen = view.see(event)
            if index >= self.hand_start:
                current.append({"seq": seq, "event": seen})
        self.watchers[watcher] = view
        return current

    def resume(self, watcher: Watcher, after: int) -> bool:
        """Send `watcher` every event after number `after`, then follow the table; False
        (nothing sent) when the feed no longer holds them all or never numbered `after`."""
        first = self.events[0][0] if self.events else self.seq + 1
        if after > self.seq or after + 1 < first:
            return False
        view = TableView(watcher.player)
        for seq, event in self.events:
            seen = view.see(event)
            if seq > after:
                watcher.send(self._frame(seq, seen))
        self.watchers[watcher] = view
        return True
