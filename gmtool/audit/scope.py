"""What an audit's global checks cover: everything, what came after a checkpoint, or what
lies in a time window (`--since`, `--until`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from gmtool.evidence.note import Verifier
from gmtool.findings import Finding
from gmtool.store import scan
from gmtool.store.db import Store


@dataclass(frozen=True)
class After:
    """Where an audit from a signed checkpoint of `size` records takes up: the first id of
    each kind of row written after it, the GM log's last hash logged before it, and the
    hands that began before it and ended after (their seeds were revealed after it)."""

    size: int
    hand: int
    ledger: int
    gm_action: int
    gm_head: str
    ended: tuple[int, ...] = ()


@dataclass(frozen=True)
class Scope:
    """One player's coins or everyone's; the host's seed key and verifier key, if at hand;
    and, in an audit from a checkpoint, `after`: a check that is cheap over the whole store
    ignores it."""

    player: str | None = None
    seed_key: bytes | None = None
    after: After | None = None
    host_key: Verifier | None = None
    window: Window | None = None


@dataclass
class Window:
    """An audit of the hands that started from `since` until `until` (either open; both
    as the store writes times, so comparing the text compares the moments). It reports a
    problem only if what it names lies in the window: a hand that started in it, a GM
    action logged in it, a ledger row, player, deployment or command written in it. A
    problem that names none of these (the evidence log's own structure, its signed
    checkpoints, the append-only guards) is about the whole store and always reported."""

    since: str | None
    until: str | None
    _moments: dict[tuple[str, object], object] = field(default_factory=dict, repr=False)

    def holds(self, moment: object) -> bool:
        """Whether a stored time lies in the window (one that is not a time cannot be placed,
        and is kept)."""
        if not isinstance(moment, str):
            return True
        return (self.since is None or moment >= self.since) and (
            self.until is None or moment < self.until
        )

    def covers(self, store: Store, finding: Finding) -> bool:
        """Whether `finding` is about something in the window (or about the whole store)."""
        if finding.at is not None:
            return self.holds(finding.at)
        for kind, ident in (("hand", finding.hand), ("gm_action", finding.gm_action)):
            if ident is not None:
                moment = self._moment(store, kind, ident)
                if moment is not None:  # (a row that is gone cannot be placed: kept)
                    return self.holds(moment)
        return True

    def _moment(self, store: Store, kind: str, ident: object) -> object:
        if (kind, ident) not in self._moments:
            self._moments[kind, ident] = scan.moment_of(store, kind, ident)
        return self._moments[kind, ident]
