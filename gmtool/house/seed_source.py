"""Where a host's seeds come from, and the registration that lets anyone check them.

At its start (before its first hand) the host makes sure the store's newest `seed_key`
record is the key it deals with, and registers it otherwise, signed with its checkpoint
key, from the next hand on (store/seed_keys.py):

- a store hosted without `--seed`: the RSA seed key `<db>.seed.key` (made on first use);
  every seed is its signature over (store, table, number);
- `--seed TEXT` (demo and test stores): the HMAC key TEXT stands for (`<db>.key`),
  published in the record; a demo store whose newest registration is that key and whose
  `<db>.key` holds it keeps dealing from it without `--seed`, as before.

A copy of the store hosted without the checkpoint key signs its registration with a new
checkpoint key, which is not the store's: the audit reports it (audit/seeds.py).

On a store several hosts share (PostgreSQL), each host deals with a key of its own: a new
RSA seed key made at its start (`--seed`: the demo key), which it registers under its
name, from the next hand on, for its own hands alone; every hand it begins names it
(store/hands.py), and the audit checks the hand's seed against that host's key. The key
is written in the hosts' home (`<db>.seed-<digest>.key`, house/seeds.py), so the host
that takes a dead host's tables over reveals the seeds of the hands it voids.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

from gmtool.engine import deck
from gmtool.evidence import hand_seeds
from gmtool.evidence.hand_seeds import HMAC, RSA, SeedSigner
from gmtool.evidence.note import Signer
from gmtool.house import seeds
from gmtool.store import seed_keys
from gmtool.store.db import Store, StoreError, files_of
from gmtool.store.log_append import origin_of


class SeedSource:
    def __init__(
        self,
        store: Store,
        demo_seed: str | None,
        checkpoint_signer: Callable[[], Signer],
        host: str | None = None,
    ) -> None:
        self.store = store
        self.host = host  # a shared store's host: a key of its own at every start
        self.demo_seed = demo_seed
        self.checkpoint_signer = checkpoint_signer
        self.origin = origin_of(store)
        self._rsa: SeedSigner | None = None
        self._hmac: bytes | None = None
        self.key_file: Path | None = None  # the RSA key this host deals from, once loaded

    def check(self) -> None:
        """Refuse, before anything changes, a `--seed` on a store that deals from its own
        seed key: the text's key would be published, and every later deck with it."""
        if self.demo_seed is None:
            return
        found = seed_keys.registrations(self.store)
        path = seeds.seed_key_path(files_of(self.store))
        if path.exists() or (found and found[-1].get("scheme") == RSA):
            if self.host is not None and found and found[-1].get("scheme") == RSA:
                # a shared store: the key its newest host registered, in the hosts' home
                path = seeds.host_seed_key_path(files_of(self.store), str(found[-1].get("key")))
            raise StoreError(
                f"--seed {self.demo_seed!r} stands for another host key than this store's "
                f"({path.name}, registered in its evidence log), and a published one: anyone "
                "could work out every deck dealt from it. --seed is for demo and test stores; "
                "run without it (the host deals from the store's own seed key)"
            )

    @property
    def ready(self) -> bool:
        return self._rsa is not None or self._hmac is not None

    def prepare(self) -> dict | None:
        """Load the key this host deals with, registering it if the newest registration
        for this host's hands is another; returns the new registration's body, if one was
        made."""
        path = files_of(self.store)
        mine = [b for b in seed_keys.registrations(self.store) if b.get("host") == self.host]
        current = (mine[-1].get("scheme"), mine[-1].get("key")) if mine else None
        self._load(path, current)
        if self._rsa is not None:
            wanted = (RSA, self._rsa.public)
        else:
            assert self._hmac is not None
            wanted = (HMAC, self._hmac.hex())
        if current == wanted:
            return None
        signer = self.checkpoint_signer()
        return seed_keys.register(
            self.store,
            *wanted,
            lambda first, scheme, key, at: hand_seeds.sign_key(
                signer, first, scheme, key, at, self.host
            ),
            self.host,
        )

    def _load(self, path: Path, current: tuple | None) -> None:
        if self.demo_seed is not None:
            self._hmac = seeds.load_key(path, self.demo_seed)
        elif self.host is not None:
            self._rsa = seeds.new_host_seed_signer(path)  # a new key at every start
            self.key_file = seeds.host_seed_key_path(path, self._rsa.public)
        elif (
            current is not None
            and current[0] == HMAC
            and (demo := seeds.existing_key(path)) is not None
            and demo.hex() == current[1]
        ):
            self._hmac = demo  # a demo store goes on with its published key
        else:
            self._rsa = seeds.load_seed_signer(path)
            self.key_file = seeds.seed_key_path(path)

    def hand_seed(self, table_id: str, number: int) -> bytes:
        if not self.ready:
            self.prepare()
        if self._rsa is not None:
            return self._rsa.seed(self.origin, table_id, number)
        assert self._hmac is not None
        return deck.hand_seed(self._hmac, table_id, number)

    def table_seed(self, table_id: str) -> bytes:
        """The seed of a table's own draws (a new owner, L1): secret, never revealed."""
        if not self.ready:
            self.prepare()
        if self._rsa is not None:
            return hashlib.sha256(self._rsa.seed(self.origin, table_id, 0)).digest()
        assert self._hmac is not None
        return deck.hand_seed(self._hmac, table_id, 0)


def recovery_seeds(
    store: Store, table_id: str, number: int, host: str | None = None
) -> list[bytes]:
    """Every seed a key beside the store gives a slot: crash recovery reveals the one the
    hand's commitment names (its seed key's signature, else an HMAC of `<db>.key`). A hand
    of one host of a shared store: the keys that host registered, where their files are."""
    found = []
    if host is not None:
        for body in seed_keys.registrations(store):
            if body.get("host") == host and body.get("scheme") == RSA:
                path = seeds.host_seed_key_path(files_of(store), str(body.get("key")))
                try:
                    signer = seeds.read_seed_signer(path)
                except StoreError:  # gone or damaged: the seed stays secret (audit: missing)
                    continue
                found.append(signer.seed(origin_of(store), table_id, number))
    signer = seeds.existing_seed_signer(files_of(store))
    if signer is not None:
        found.append(signer.seed(origin_of(store), table_id, number))
    key = seeds.existing_key(files_of(store))
    if key is not None:
        found.append(deck.hand_seed(key, table_id, number))
    return found
