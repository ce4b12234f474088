"""Seeds: no deck dealt twice, no hand slot used twice, and with the host key every
revealed seed the one it derives for its table and number."""

from __future__ import annotations

from collections.abc import Iterator

from gmtool.findings import Finding
from gmtool.store import scan
from gmtool.store.db import Store


def verify_seeds(store: Store, key: bytes | None,
                 hands: tuple[int, list[int]] | None = None) -> Iterator[Finding]:
    """No two hands share a seed or a (table, number); with the host key, every revealed
    seed is HMAC(key, "table#number"). With `hands` (first id, other ids): only those
    hands, against every hand they share a slot with, and without the key a seed."""
    from gmtool.engine.deck import hand_seed

    seeds: dict[str, int] = {}
    numbers: dict[tuple, int] = {}
    # From a checkpoint with the key: a seed that is its slot's HMAC cannot be another
    # slot's, and slots are found through their index, so no pass over older hands' seeds.
    rows = scan.hand_seeds(store) if hands is None else \
        scan.hand_seeds_around(store, *hands, by_seed=key is None)
    for row in rows:
        slot = (row["table_id"], row["number"])
        if slot in numbers:
            yield Finding("seed", f"hands {numbers[slot]} and {row['id']} are both "
                          f"{row['table_id']} #{row['number']}", hand=row["id"])
        numbers.setdefault(slot, row["id"])
        seed = row["seed"]
        if seed is None:
            continue
        if seed in seeds:
            yield Finding("seed", f"hand {row['id']} was dealt from the seed of hand "
                          f"{seeds[seed]} (a deck dealt twice)", hand=row["id"])
        seeds.setdefault(seed, row["id"])
        if key is not None and isinstance(row["number"], int) and isinstance(
                row["table_id"], str) and seed != hand_seed(key, row["table_id"],
                                                            row["number"]).hex():
            yield Finding("seed", f"hand {row['id']}: its seed is not the host key's seed of "
                          f"{row['table_id']} #{row['number']}", hand=row["id"])
