"""The host's notary: signs checkpoints of the evidence log into the store's witnesses.

The witnesses are the ones the store records (store/witnesses.py); a store that records
none yet uses `--witness DIR`, else `<db>.witness/`, and the first signing with the store
open for writing (a host's start) records that folder, as evidence. A `--witness` that
is not one the store records is refused: checkpoints never go to a second, silent place.
A witness folder is made only for a store's first checkpoint, or for a copy of a store
that has neither its checkpoint key nor its witness (announced through `notify`); a
missing folder of a store whose checkpoint key exists (its checkpoints went somewhere)
is refused.

A checkpoint is signed when the host starts (after crash recovery), while it plays
right after a commit (a table's input, a settlement, a command's fate) once
`checkpoint_every` seconds (1 by default) have passed since the last one, and by its
main loop on the same interval, and when it stops; a state already signed is not signed
again, so a host at rest writes nothing and a busy one writes one checkpoint an
interval, however many hands settled in it: a host killed with SIGKILL leaves at most
that interval of commits unsigned, however late its main loop runs (house/host.py).
Before any of that, `check_not_behind` refuses a store whose log does not extend a
witness's latest checkpoint: an older copy restored, or records deleted, would otherwise
have the host deal hands whose seeds were already revealed. Served
witnesses (house/cosigning.py) cosign each checkpoint before it is saved into the folders,
and are asked the same at the start.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from gmtool.errors import UsageError
from gmtool.evidence import witness
from gmtool.evidence.note import Checkpoint, Signer, Verifier, sign_checkpoint, signer_names
from gmtool.house.cosigning import Cosigning
from gmtool.store import log_append, log_reads, witnesses
from gmtool.store.checkpoint_signers import read_signed
from gmtool.store.db import Store, StoreError, files_of
from gmtool.store.log_append import origin_of
from gmtool.store.witnesses import disagreement, named

CHANGE_HINT = (
    "an operator changes the store's witnesses with `gmtool gm witness add DIR` (then "
    "`gmtool gm witness remove OLD`)"
)


class Notary:
    def __init__(
        self,
        store: Store,
        given: str | Path | None = None,
        notify: Callable[[str], None] = lambda message: None,
    ) -> None:
        self.store = store
        self.origin = origin_of(store)
        self.given = given
        self.notify = notify  # announces a witness folder created or recorded
        self._signer: Signer | None = None
        self.signed_size: int | None = None
        self.cosigning = Cosigning(store, notify)
        # A checkpoint key from before this notary (a host start also signs openings with
        # it, before its first checkpoint): this store's checkpoints were signed somewhere.
        self.signed_before = witness.key_path(files_of(store)).exists()
        recorded = disagreement(store, given)
        if recorded is not None:
            raise UsageError(
                f"--witness {given} is not this store's witness: it records "
                f"{named(recorded)}. Leave --witness (and $GMTOOL_WITNESS) out to use "
                f"it; {CHANGE_HINT}"
            )

    @property
    def signer(self) -> Signer:
        """The host's checkpoint key, made on first use."""
        if self._signer is None:
            try:
                self._signer = witness.load_signer(files_of(self.store), self.origin)
            except OSError as error:
                raise StoreError(str(error)) from None
        return self._signer

    def folders(self) -> tuple[list[Path], bool]:
        """Where checkpoints go now, and whether the store records it: its witnesses (read
        at every signing, so a change takes effect at the next checkpoint), else the
        `--witness` folder given, else `<db>.witness/`."""
        folders = witnesses.folders(self.store)
        if folders:
            return folders, True
        return [witness.witness_dir(files_of(self.store), self.given)], False

    def latest(self, host_only: bool = False) -> tuple[Path, Checkpoint] | None:
        """The newest checkpoint any witness holds (by tree size), opened: signed by the
        host's key or by a GM (store/checkpoint_signers.py); with `host_only`, the newest
        the host's key signed (a dispute report's proof is checked with that key alone)."""
        newest = None
        for folder in self.folders()[0]:
            found = witness.files(folder)
            if host_only:
                found = [path for path in found if not _gm_signed(path, self.signer.verifier)]
            if not found:
                continue
            other = witness.held_origin(folder)
            if other is not None and other != self.origin:
                raise StoreError(
                    f"{folder} holds the checkpoints of another store's log ({other}): a "
                    "witness folder serves one store; the host will not start. Give this "
                    "store a folder of its own (`gmtool gm witness add DIR`, then `gmtool gm "
                    f"witness remove {folder}`)"
                )
            try:
                checkpoint, _ = read_signed(self.store, found[-1], self.signer.verifier)
            except OSError as error:
                raise StoreError(
                    f"{error}; the host will not start without a readable witness. If this "
                    "store is a copy of another, give it a witness folder of its own "
                    f"(`gmtool gm witness add DIR`, then `gmtool gm witness remove {folder}`); "
                    "never delete or move checkpoints out of a witness: they are evidence"
                ) from None
            if newest is None or checkpoint.size > newest[1].size:
                newest = (found[-1], checkpoint)
        return newest

    def check_not_behind(self) -> None:
        folders, recorded = self.folders()
        for folder in folders:
            self._usable(folder, recorded)
        if witnesses.served(self.store) and witness.key_path(files_of(self.store)).exists():
            self.cosigning.check(self.signer.verifier)
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
        for folder in self.folders()[0]:
            existing = folder
            while not existing.exists() and existing != existing.parent:
                existing = existing.parent  # the folder is made at the first checkpoint
            if not existing.is_dir():
                raise StoreError(
                    f"{existing}: not a folder; the witness ({folder}) is the folder the "
                    "host signs its checkpoints into: give --witness a folder, or a path to "
                    "make one"
                )
            if not os.access(existing, os.W_OK | os.X_OK):
                raise StoreError(
                    f"{folder}: the host cannot write checkpoints there ({existing} is "
                    "read-only or not this user's to write); nothing was changed"
                )

    def _usable(self, folder: Path, recorded: bool) -> bool:
        """Whether `folder` exists (False: it may be made now); StoreError when it is no
        folder, or is missing while the checkpoint key says checkpoints went somewhere (a
        copy of a store without its key and witness starts again with new ones, as before
        witnesses were recorded)."""
        if folder.exists() or folder.is_symlink():
            if not folder.is_dir():
                raise StoreError(
                    f"{folder} is not a folder: it cannot hold this store's signed checkpoints"
                )
            return True
        if recorded and self.signed_before:
            raise StoreError(
                f"{folder}, this store's witness, does not exist (not mounted? deleted?): "
                "nothing was signed. Mount or restore it; if it is lost, " + CHANGE_HINT
            )
        if self.signed_before:
            raise StoreError(
                f"this store's checkpoints were signed before "
                f"({witness.key_path(files_of(self.store)).name} is beside it), but {folder} "
                "does not exist: they are in another folder. Pass --witness with the folder "
                "that holds them, or record it: `gmtool gm witness add DIR` (which makes "
                "it if none ever did); the store records no witness yet"
            )
        return False

    def _prepare(self, folder: Path, recorded: bool, gm: str | None = None) -> None:
        """`folder` ready for a checkpoint: made (and announced) for a store's first one;
        StoreError if it holds another log's checkpoints (before anything is recorded)."""
        other = witness.held_origin(folder)
        if other is not None and other != self.origin:
            raise StoreError(
                f"{folder} holds the checkpoints of another store's log ({other}): a witness "
                "folder serves one store; give this one a folder of its own (--witness DIR)"
            )
        if self._usable(folder, recorded):
            self._claim(folder)
            return
        try:
            folder.mkdir(mode=0o700, parents=True)
        except OSError as error:
            raise StoreError(
                f"{folder}: cannot make the witness folder: "
                f"{getattr(error, 'strerror', None) or error}"
            ) from None
        again = (
            ", this store's witness, again (it was missing, and so was the checkpoint key: "
            + (
                f"{gm}'s GM key signs for now, a new host key from the next host start"
                if gm
                else "a new key signs from now on"
            )
            + "; restore both instead if you have them)"
            if recorded
            else " for this store's signed checkpoints (keep it, or a copy, on other "
            "storage than the store)"
        )
        self.notify(f"created the witness folder {folder}{again}")
        self._claim(folder)

    def _claim(self, folder: Path) -> None:
        """`folder` made this store's witness; StoreError when it is the witness of another
        store with this log (the original of this copy, or a copy of it) at another path."""
        other = witness.claimant(folder, files_of(self.store))
        if other is not None:
            raise StoreError(
                f"{folder} is the witness of the store at {other}, which has this store's log "
                "(one of the two is a copy of the other): signing here would make that store "
                "read as an older copy. Give this one a witness of its own: `gmtool gm witness "
                f"add DIR`, then `gmtool gm witness remove {folder}` (or, if this store was "
                f"moved here for good, move {other} away)"
            )
        try:
            witness.claim(folder, files_of(self.store))
        except OSError as error:
            raise StoreError(
                f"{folder}: cannot write the checkpoint: "
                f"{getattr(error, 'strerror', None) or error}"
            ) from None

    def _record(self, folder: Path) -> None:
        """Record `folder` as the store's first witness (a writer that signs into it)."""
        with self.store.write():
            if witnesses.recorded(self.store):
                return  # recorded meanwhile
            beside = not getattr(self.store, "is_postgres", False)
            place = witness.folder_witness(files_of(self.store), folder, relative=beside)
            witnesses.record(self.store, "add", place)
        self.notify(
            f"recorded {folder} as this store's witness: checkpoints go there and the audit "
            f"reads them there (`gmtool gm witness list`); {CHANGE_HINT}"
        )

    def sign_as(self, gm: Signer) -> tuple[int, list[Path]]:
        """Sign the log's state now with a GM's own key into every witness folder (a GM
        write where the host's checkpoint key cannot be read: ops/cover.py): the size
        signed and the files written. Nothing is recorded in the store, and served
        witnesses are not asked (they cosign only what the store's key signed)."""
        folders, recorded = self.folders()
        size, root = log_append.state(self.store)
        for folder in folders:
            self._prepare(folder, recorded, gm.name)
        note = sign_checkpoint(Checkpoint(self.origin, size, root), gm)
        # a folder holding this size already (the host signed it meanwhile) keeps its file
        fresh = [f for f in folders if not (f / f"{size:012d}{witness.SUFFIX}").is_file()]
        return size, self._save(fresh, note, size)

    def sign(self, wait: bool = True) -> list[Path]:
        """Sign the log's state now into every witness (unless it is signed already): the
        files written. A store that records no witness and is open for writing records
        the folder first, so the checkpoint covers that record too. `wait=False` (the
        running host's periodic checkpoints): the served witnesses' cosignatures are added
        to the files when they come (house/cosigning.py)."""
        folders, recorded = self.folders()
        if not recorded and not self.store.read_only:
            self._prepare(folders[0], recorded)
            self._record(folders[0])
            folders, recorded = self.folders()
        size, root = log_append.state(self.store)
        if size == self.signed_size and (self.cosigning.sending or not self.cosigning.missing):
            return []
        for folder in folders:
            self._prepare(folder, recorded)
        note = sign_checkpoint(Checkpoint(self.origin, size, root), self.signer)
        later = not wait and bool(witnesses.served(self.store))
        if not later:
            note += self.cosigning.cosign(note, size)
        paths = self._save(folders, note, size)
        if later:
            self.cosigning.start(note, size, lambda lines: self._save(folders, note + lines, size))
        self.signed_size = size
        return paths

    def _save(self, folders: list[Path], note: str, size: int) -> list[Path]:
        paths = []
        for folder in folders:
            try:
                paths.append(witness.save(folder, note, size))
            except OSError as error:
                raise StoreError(
                    f"{folder}: cannot write the checkpoint: "
                    f"{getattr(error, 'strerror', None) or error}"
                ) from None
        return paths


def _gm_signed(path: Path, host: Verifier) -> bool:
    """Whether the checkpoint file at `path` bears no signature of the host's key (a GM
    signed it); an unreadable file is left to the reader that opens it."""
    try:
        names = signer_names(witness.read_text(path))
    except OSError:
        return False
    return bool(names) and host.name not in names
