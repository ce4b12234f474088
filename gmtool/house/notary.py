"""The host's notary: signs checkpoints of the evidence log into the witness folder.

A checkpoint is signed when the host starts (after crash recovery), every
`checkpoint_every` seconds while it plays, and when it stops; a state already signed is
not signed again. Before any of that, `check_not_behind` refuses a store whose log does
not extend the witness's latest checkpoint: an older copy restored, or records deleted,
would otherwise have the host deal hands whose seeds were already revealed.
"""

from __future__ import annotations

import os
from pathlib import Path

from gmtool.evidence import witness
from gmtool.evidence.note import Checkpoint, Signer, sign_checkpoint
from gmtool.store import log_append, log_reads
from gmtool.store.db import Store, StoreError
from gmtool.store.log_append import origin_of


class Notary:
    def __init__(self, store: Store, folder: str | Path | None = None) -> None:
        self.store = store
        self.origin = origin_of(store)
        self.folder = witness.witness_dir(store.path, folder)
        self._signer: Signer | None = None
        self.signed_size: int | None = None

    @property
    def signer(self) -> Signer:
        """The host's checkpoint key, made on first use."""
        if self._signer is None:
            try:
                self._signer = witness.load_signer(self.store.path, self.origin)
            except OSError as error:
                raise StoreError(str(error)) from None
        return self._signer

    def latest(self) -> tuple[Path, Checkpoint] | None:
        found = witness.files(self.folder)
        if not found:
            return None
        try:
            return found[-1], witness.read(found[-1], self.signer.verifier)
        except OSError as error:
            raise StoreError(
                f"{error}; the host will not start without a readable witness "
                "(move the file away only if you know it is not this store's)"
            ) from None

    def check_not_behind(self) -> None:
        latest = self.latest()
        if latest is None:
            return
        path, checkpoint = latest
        size, _ = log_append.state(self.store)
        if checkpoint.size > size:
            raise StoreError(
                f"{self.store.path} holds {size} evidence records, but {path} was signed at "
                f"{checkpoint.size}: this is an older copy of the store, or records were "
                "deleted. The host will not deal hands again from it; run `gmtool audit` and "
                "restore the newest copy"
            )
        if (
            checkpoint.size
            and log_reads.tree(self.store).hash(0, checkpoint.size) != checkpoint.root
        ):
            raise StoreError(
                f"{self.store.path}: its first {checkpoint.size} evidence records "
                f"are not the ones {path} signed (history was rewritten); the "
                "host will not start on it: run `gmtool audit`"
            )

    def check_writable(self) -> None:
        """Refuse, before the host changes anything, a witness it could not sign into: a
        path that is not a folder, or one this user may not write (a read-only mount)."""
        folder = self.folder
        existing = folder
        while not existing.exists() and existing != existing.parent:
            existing = existing.parent  # the folder is made at the first checkpoint
        if not existing.is_dir():
            raise StoreError(
                f"{existing}: not a folder; the witness ({folder}) is the folder the host "
                "signs its checkpoints into: give --witness a folder, or a path to make one"
            )
        if not os.access(existing, os.W_OK | os.X_OK):
            raise StoreError(
                f"{folder}: the host cannot write checkpoints there ({existing} is read-only "
                "or not this user's to write); nothing was changed"
            )

    def sign(self) -> Path | None:
        """Sign the log's state now into the witness (unless it is signed already)."""
        size, root = log_append.state(self.store)
        if size == self.signed_size:
            return None
        note = sign_checkpoint(Checkpoint(self.origin, size, root), self.signer)
        try:
            path = witness.save(self.folder, note, size)
        except OSError as error:
            raise StoreError(
                f"{self.folder}: cannot write the checkpoint: "
                f"{getattr(error, 'strerror', None) or error}"
            ) from None
        self.signed_size = size
        return path
