"""The notary's side of the served witnesses (C2SP tlog-witness): every checkpoint it signs
goes to each witness the store records, with a consistency proof from the size that
witness holds, and comes back cosigned; the cosignature lines join the checkpoint in the
folders. A witness that does not answer, or refuses, is said (`notify`) and asked again
with the next checkpoint: the host keeps playing, and the audit judges (a quorum of
witnesses must agree with the store). At a host's start, `check` refuses a store that does
not extend a checkpoint a witness cosigned (an older copy, or history rewritten).

The running host's periodic checkpoints go out in the background (`start`): the proofs
are read from the store first, in the host's thread, and a thread sends them and adds the
cosignatures to the saved files, so a witness that does not answer never stalls the
tables. One round at a time; a witness that holds another size than the proofs read gets
its proof with the next checkpoint. Every other signing (`cosign`) waits for the answers,
after any round still on its way.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from gmtool.evidence import witness_http
from gmtool.evidence.cosign import CosignerKey
from gmtool.evidence.note import NoteError, Verifier, open_checkpoint
from gmtool.evidence.witness import Witness
from gmtool.store import log_append, log_reads, witnesses
from gmtool.store.db import Store, StoreError


class Cosigning:
    def __init__(self, store: Store, notify: Callable[[str], None]) -> None:
        self.store = store
        self.notify = notify
        self.held: dict[str, int] = {}  # URL -> the size that witness holds, as last heard
        self.missing: set[str] = set()  # witnesses the last checkpoint did not reach
        self._round: threading.Thread | None = None

    @property
    def sending(self) -> bool:
        return self._round is not None and self._round.is_alive()

    def cosign(self, note: str, size: int) -> str:
        """The cosignature lines of every served witness that cosigned `note`."""
        self.join()
        tree = log_reads.tree(self.store)
        return self._send(note, size, lambda old: tree.consistency(old, size))

    def start(self, note: str, size: int, save: Callable[[str], object]) -> None:
        """Send `note` to every served witness in a thread, then `save(lines)` with the
        cosignatures (the caller goes on meanwhile); nothing while a round is on its way."""
        if self.sending:
            return
        served = witnesses.served(self.store)
        tree = log_reads.tree(self.store)
        olds = {self.held.get(one.location, 0) for one in served}
        proofs = {old: tree.consistency(old, size) for old in olds if 0 < old < size}

        def proof(old: int) -> list[bytes]:
            if old not in proofs:
                raise _Later(old)
            return proofs[old]

        def run() -> None:
            lines = self._send(note, size, proof, served)
            if lines:
                try:
                    save(lines)
                except (OSError, StoreError) as error:
                    self.notify(f"the cosigned checkpoint at {size} was not saved: {error}")

        self._round = threading.Thread(target=run, name="cosigning", daemon=True)
        self._round.start()

    def join(self) -> None:
        if self._round is not None:
            self._round.join()

    def _send(
        self,
        note: str,
        size: int,
        proof: Callable[[int], list[bytes]],
        served: list[Witness] | None = None,
    ) -> str:
        lines = []
        missing = set()
        for one in witnesses.served(self.store) if served is None else served:
            url = one.location
            try:
                key = CosignerKey.parse(one.key or "")
                held = self.held.get(url, 0)
                lines.append(witness_http.submit(url, key, note, size, proof, held))
                self.held[url] = size
            except _Later as later:  # it holds another size: a proof from it next round
                self.held[url] = later.old
                missing.add(url)
            except (witness_http.Unreachable, witness_http.Refused, NoteError) as error:
                if isinstance(error, witness_http.Refused) and error.held is not None:
                    self.held[url] = error.held
                missing.add(url)
                self.notify(
                    f"witness {url}: {error}: the checkpoint at {size} is not cosigned by it "
                    "(the next one goes to it again)"
                )
        self.missing = missing
        return "".join(lines)

    def check(self, verifier: Verifier) -> None:
        """StoreError when the store does not extend the checkpoint a served witness holds;
        a witness that cannot be asked is said, and the host starts."""
        size, _ = log_append.state(self.store)
        for served in witnesses.served(self.store):
            url = served.location
            try:
                note = witness_http.fetch(url, log_append.origin_of(self.store))
                if note is None:
                    continue
                checkpoint = open_checkpoint(note, [verifier])
            except (witness_http.Unreachable, witness_http.Refused, NoteError) as error:
                self.notify(f"witness {url}: {error}: the start was not checked against it")
                continue
            self.held[url] = checkpoint.size
            if checkpoint.size > size:
                raise StoreError(
                    f"{self.store.path} holds {size} evidence records, but the witness {url} "
                    f"cosigned a checkpoint at {checkpoint.size}: this is an older copy of the "
                    "store, or records were deleted. The host will not deal hands again from "
                    "it; run `gmtool audit` and restore the newest copy"
                )
            if (
                checkpoint.size
                and log_reads.tree(self.store).hash(0, checkpoint.size) != checkpoint.root
            ):
                raise StoreError(
                    f"{self.store.path}: its first {checkpoint.size} evidence records are not "
                    f"the ones the witness {url} cosigned (history was rewritten); the host "
                    "will not start on it: run `gmtool audit`"
                )


class _Later(Exception):
    """A witness holds another size than the proofs read for this round."""

    def __init__(self, old: int) -> None:
        super().__init__(old)
        self.old = old
