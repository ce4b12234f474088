"""Seeds: no deck dealt twice, no hand slot used twice, and with the host key every
revealed seed the one it derives for its table and number."""

from __future__ import annotations

from collections.abc import Iterator

from gmtool.findings import Finding
from gmtool.store import scan
from gmtool.store.db import Store


def verify_seeds(
    store: Store, key: bytes | None, hands: tuple[int, list[int]] | None = None
) -> Iterator[Finding]:
    """No two hands share a seed or a (table, number); with the host key, every revealed
    seed is HMAC(key, "table#number"). With `hands` (first id, other ids): only those
    hands, against every hand they share a slot with, and without the key a seed.

    A full audit asks SQLite for the shared slots and seeds, so no set of them grows in
    memory with the store; from a checkpoint the few hands after it are compared here."""
    if hands is not None:
        yield from _seeds_around(store, key, hands)
        return
    for row in scan.shared_slots(store):
        yield Finding(
            "seed",
            f"hands {row['first']} and {row['id']} are both {row['table_id']} #{row['number']}",
            hand=row["id"],
        )
    for row in scan.shared_seeds(store):
        yield Finding(
            "seed",
            f"hand {row['id']} was dealt from the seed of hand {row['first']} (a deck dealt twice)",
            hand=row["id"],
        )
    if key is not None:
        for row in scan.hand_seeds(store):
            yield from _derived(key, row, _key_name(store))


def _derived(key: bytes, row, key_name: str) -> Iterator[Finding]:
    """The host key's seed of the hand's table and number, if it revealed another."""
    from gmtool.engine.deck import hand_seed

    seed = row["seed"]
    if (
        seed is not None
        and isinstance(row["number"], int)
        and isinstance(row["table_id"], str)
        and seed != hand_seed(key, row["table_id"], row["number"]).hex()
    ):
        yield Finding(
            "seed",
            f"hand {row['id']} was not dealt from this store's host key ({key_name}): its "
            f"seed is not the one the key derives for {row['table_id']} #{row['number']}, so "
            "nothing shows its deck was fixed by its table and number rather than chosen "
            "(a host with another key dealt it: `house run --seed` with another text, or a "
            "key file replaced since)",
            hand=row["id"],
        )


def _key_name(store: Store) -> str:
    """The host key file's name, as the host keeps it beside the store (`<db>.key`)."""
    return f"{store.path.name}.key"


def _seeds_around(
    store: Store, key: bytes | None, hands: tuple[int, list[int]]
) -> Iterator[Finding]:
    seeds: dict[str, int] = {}
    numbers: dict[tuple, int] = {}
    # With the key: a seed that is its slot's HMAC cannot be another slot's, and slots are
    # found through their index, so no pass over older hands' seeds.
    for row in scan.hand_seeds_around(store, *hands, by_seed=key is None):
        slot = (row["table_id"], row["number"])
        if slot in numbers:
            yield Finding(
                "seed",
                f"hands {numbers[slot]} and {row['id']} are both "
                f"{row['table_id']} #{row['number']}",
                hand=row["id"],
            )
        numbers.setdefault(slot, row["id"])
        seed = row["seed"]
        if seed is None:
            continue
        if seed in seeds:
            yield Finding(
                "seed",
                f"hand {row['id']} was dealt from the seed of hand "
                f"{seeds[seed]} (a deck dealt twice)",
                hand=row["id"],
            )
        seeds.setdefault(seed, row["id"])
        if key is not None:
            yield from _derived(key, row, _key_name(store))
