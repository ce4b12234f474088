"""Seeds: no deck dealt twice, no hand slot used twice, and every revealed seed the one
its registered seed key gives its table and number, checked with no secret.

From the store's first `seed_key` record on (store/seed_keys.py), every hand's seed must
be the one the key in force gives its slot: the seed key's RSA signature over (store,
table, number), checked with the registered public key, or a demo store's published HMAC
(gmtool/evidence/hand_seeds.py). Each registration must be signed by the store's
checkpoint key, when the audit has its verifier key (`--key`, `<db>.checkpoint.pub`): a
host run on a copy of the store registers a key of its own with a checkpoint key of its
own, and every hand it dealt is reported. Hands from before the first registration (gmtool
before seed keys) are HMACs of the secret `<db>.key`: checked only where it is present.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from gmtool.evidence import hand_seeds
from gmtool.evidence.note import Verifier
from gmtool.findings import Finding
from gmtool.store import scan, seed_keys
from gmtool.store.db import Store, files_beside
from gmtool.store.log_append import origin_of


def verify_seeds(
    store: Store,
    key: bytes | None,
    hands: tuple[int, list[int]] | None = None,
    host_key: Verifier | None = None,
) -> Iterator[Finding]:
    """No two hands share a seed or a (table, number); every revealed seed is the one its
    registered seed key gives it (with `host_key`, each registration must be the host's),
    and with the old host key `key`, every seed from before seed keys is HMAC(key,
    "table#number"). With `hands` (first id, other ids): only those hands, against every
    hand they share a slot with, and without a key a seed.

    A full audit asks SQLite for the shared slots and seeds, so no set of them grows in
    memory with the store; from a checkpoint the few hands after it are compared here."""
    if hands is not None:
        check = _Check(store, key, host_key)
        yield from check.registrations()
        yield from _seeds_around(store, check, hands)
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
    check = _Check(store, key, host_key)
    yield from check.registrations()
    if key is not None or check.keys:
        for hand_id, table_id, number, seed, host in scan.hand_seeds(store):
            if not check.holds(hand_id, table_id, number, seed, host):  # (usually it holds)
                row = {"id": hand_id, "table_id": table_id, "number": number, "seed": seed}
                yield from check.hand({**row, "host": host})


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
    """The host key file's name, as the host keeps it beside the store (`<db>.key`; on
    PostgreSQL in the hosts' home, named after the database)."""
    place = files_beside(store)
    return f"{place.name}.key" if place is not None else "<db>.key"


def _seeds_around(store: Store, check: _Check, hands: tuple[int, list[int]]) -> Iterator[Finding]:
    seeds: dict[str, int] = {}
    numbers: dict[tuple, int] = {}
    # With every seed checked against its slot's key: a seed that is its slot's cannot be
    # another slot's, and slots are found through their index, so no pass over older
    # hands' seeds.
    for row in scan.hand_seeds_around(store, *hands, by_seed=not check.complete):
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
        yield from check.hand(row)


def _slot_of(hand_id: object, table: object, number: object) -> bool:
    """Whether a hand row names a slot its seed can be checked against: a table's name and
    a whole number, under a row id SQLite gives (from 1 on)."""
    return type(hand_id) is int and hand_id >= 1 and isinstance(table, str) and type(number) is int


@dataclass
class _Check:
    """Each hand's seed against the seed key in force for it (or the old host key)."""

    store: Store
    key: bytes | None  # the old host key, `<db>.key`, for hands from before seed keys
    host_key: Verifier | None
    keys: list[dict] = field(init=False)
    _forged: set[int] = field(init=False, default_factory=set)  # unsigned registrations

    def __post_init__(self) -> None:
        self.keys = seed_keys.registrations(self.store)
        self.origin = origin_of(self.store)
        # A shared store's hosts each deal with a key of their own (`host` in both the
        # registration and the hand); the hands of a store's one host name none.
        self.by_host: dict[object, list[dict]] = {}
        for body in self.keys:
            self.by_host.setdefault(body.get("host"), []).append(body)

    @property
    def complete(self) -> bool:
        """Whether every hand's seed is checked against its slot (a key for each)."""
        return self.key is not None or (bool(self.keys) and self.keys[0].get("id") == 1)

    def registrations(self) -> Iterator[Finding]:
        for body in self.keys:
            what = f"the seed key registered from hand {body.get('id')} (log record {body['idx']})"
            if not isinstance(body.get("id"), int) or not hand_seeds.usable(
                body.get("scheme"), body.get("key")
            ):
                self._forged.add(body["idx"])
                yield Finding("seed_key", f"{what} is no key seeds can be checked against")
            elif self.host_key is not None and not hand_seeds.key_signed(self.host_key, body):
                self._forged.add(body["idx"])
                yield Finding(
                    "seed_key",
                    f"{what} is not signed by this store's checkpoint key: a host that "
                    "did not hold it (a copy of the store hosted elsewhere) or a forged "
                    "record registered it, and every hand dealt from it is reported",
                )

    def in_force(self, hand_id: int, host: object = None) -> dict | None:
        """The key the hand's host registered last before it (no host: the store's)."""
        for body in reversed(self.by_host.get(host, [])):
            first = body.get("id")
            if isinstance(first, int) and first <= hand_id:
                return body
        return None

    def holds(
        self, hand_id: int, table: object, number: object, seed: object, host: object = None
    ) -> bool:
        """Whether `hand` finds nothing in this hand's seed, by the same tests without its
        findings (a full audit asks it first of every hand: most hold)."""
        if seed is None:
            return True
        if not _slot_of(hand_id, table, number):
            return False
        body = self.in_force(hand_id, host)
        if body is None:
            return self.key is None and host is None
        if body["idx"] in self._forged or (
            body.get("scheme") == hand_seeds.HMAC and self.key is not None
        ):
            return False  # (what `hand` says of these is its own)
        try:
            raw = bytes.fromhex(seed) if isinstance(seed, str) else b""
        except ValueError:
            return False
        return bool(raw) and hand_seeds.seed_holds(
            body["scheme"], body["key"], self.origin, table, number, raw
        )

    def hand(self, row) -> Iterator[Finding]:
        seed, number, table, hand_id = row["seed"], row["number"], row["table_id"], row["id"]
        if seed is None:
            return
        if not _slot_of(hand_id, table, number):
            # A seed is checked against its slot: a hand without one (a number written as
            # text, a row id SQLite never gives) would otherwise pass with any deck.
            yield Finding(
                "seed",
                f"hand {hand_id!r} is {table!r} #{number!r}, which is no slot a seed key "
                "signs (a table's name, a whole hand number, a positive row id): its seed "
                "cannot be checked, so nothing shows its deck was not chosen (edited or "
                "inserted)",
                hand=hand_id,
            )
            return
        host = row["host"]
        body = self.in_force(hand_id, host)
        if body is None and host is not None:
            yield Finding(
                "seed",
                f"hand {hand_id} was dealt by host {host!r}, which registered no seed key "
                "before it: nothing shows its deck was not chosen",
                hand=hand_id,
            )
            return
        if body is None:
            if self.key is not None:
                yield from _derived(self.key, row, _key_name(self.store))
            return
        try:
            raw = bytes.fromhex(seed) if isinstance(seed, str) else b""
        except ValueError:
            raw = b""
        where = f"the seed key registered from hand {body['id']}" + (
            f" by host {host!r}" if host is not None else ""
        )
        if body.get("scheme") == hand_seeds.HMAC and self.key is not None:
            if self.key.hex() != body.get("key"):  # a demo store's `<db>.key` replaced
                yield from _derived(self.key, row, _key_name(self.store))
        if body["idx"] in self._forged:
            yield Finding(
                "seed",
                f"hand {hand_id} was dealt from {where}, which is not this store's (above): "
                "nothing shows its deck was not chosen",
                hand=hand_id,
            )
        elif not raw or not hand_seeds.seed_holds(
            body["scheme"], body["key"], self.origin, table, number, raw
        ):
            yield Finding(
                "seed",
                f"hand {hand_id}'s seed is not the one {where} gives {table} #{number} "
                f"({body['scheme']}): its deck was not fixed by its slot (dealt by a host "
                "with another key, or the seed was edited)",
                hand=hand_id,
            )
