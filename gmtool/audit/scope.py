"""What an audit's global checks cover: everything, or what came after a checkpoint."""

from __future__ import annotations

from dataclasses import dataclass

from gmtool.evidence.note import Verifier


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
