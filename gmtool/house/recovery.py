"""Crash recovery at a host's start: what a host that stopped without finishing left behind.

Every hand left running is voided before any table plays: every stake returned, its
seed revealed when a key beside the store derives it (its commitment says so), a significant event
recorded in its table's chain. Every GM command the stopped host had taken and never
answered gets its logged fate, interrupted, so it is never carried out twice; every
command still pending whose console is gone (house/lease.py) is logged as withdrawn, so it
is never carried out at all; one whose console's word still holds is left to the host's
loop, which carries it out only on a word written after it first saw the command.
"""

from __future__ import annotations

from collections.abc import Callable

from gmtool.errors import Unavailable
from gmtool.house import seeds
from gmtool.house.lease import withdraw_abandoned
from gmtool.house.seed_source import recovery_seeds
from gmtool.store import gm
from gmtool.store import hands as hand_store
from gmtool.store.db import Store
from gmtool.store.gm import failure
from gmtool.store.table_leases import Lease


def void_unfinished(
    store: Store,
    demo_seed: str | None,
    notify: Callable[[str], None],
    verbose: bool = False,
    table: str | None = None,
    lease: Lease | None = None,
) -> list[int]:
    """Void the hands a stopped host left running (of `table` only, if given, written
    under its `lease`): their ids. Each seed is revealed if a key beside the store (or
    `--seed`'s) derives the committed one."""
    from gmtool.engine.deck import commitment

    voided = []
    for row in hand_store.unfinished_hands(store, table):
        table_id, number = row["table_id"], row["number"]
        candidates = recovery_seeds(store, table_id, number, row["host"])
        if demo_seed is not None:
            candidates.append(seeds.hand_seed(seeds.seed_key(demo_seed), table_id, number))
        revealed = next(
            (seed.hex() for seed in candidates if commitment(seed) == row["commitment"]), None
        )
        if verbose:
            notify(f"recovering hand {row['id']} ({table_id} #{number})")
        log = hand_store.TableLog(store, table_id)
        log.lease = lease
        hand_store.void_hand(
            store,
            log,
            row["id"],
            "crash_recovery",
            revealed,
            "the host stopped without finishing this hand",
        )
        voided.append(row["id"])
    return voided


def recover(
    store: Store, demo_seed: str | None, notify: Callable[[str], None], verbose: bool = False
) -> list[int]:
    """Void the unfinished hands (their ids) and log taken commands as interrupted: the
    start of a host that is the store's only one (SQLite: it holds the host lock)."""
    voided = void_unfinished(store, demo_seed, notify, verbose)
    interrupted = gm.interrupt_taken(
        store,
        failure(
            Unavailable(
                "the host stopped while carrying this command out: see the table's events for "
                "how far it got before sending it again"
            )
        ),
    )
    withdrawn, left = withdraw_abandoned(store)
    if withdrawn:
        notify(
            f"recovered: GM command(s) {', '.join(map(str, withdrawn))} left pending by a "
            "console that is gone (interrupted or killed) are logged as withdrawn, not "
            "carried out"
        )
    if left:
        notify(
            f"pending: GM command(s) {', '.join(map(str, left))} carried out only once "
            "their console says again that it waits (a console killed meanwhile never does: "
            "then withdrawn)"
        )
    if interrupted:
        notify(
            f"recovered: GM command(s) {', '.join(map(str, interrupted))} taken by "
            "the host that stopped are logged as interrupted"
        )
    if voided:
        notify(
            f"recovered: {len(voided)} unfinished hand(s) voided, every stake "
            f"returned: {', '.join(map(str, voided))}"
        )
    return voided
