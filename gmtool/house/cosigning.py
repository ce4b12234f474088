"""The notary's side of the served witnesses (C2SP tlog-witness): every checkpoint it signs
goes to each witness the store records, with a consistency proof from the size that
witness holds, and comes back cosigned; the cosignature lines join the checkpoint in the
folders. A witness that does not answer, or refuses, is said (`notify`) and asked again
with the next checkpoint: the host keeps playing, and the audit judges (a quorum of
witnesses must agree with the store). At a host's start, `check` refuses a store that does
not extend a checkpoint a witness cosigned (an older copy, or history rewritten).
"""

from __future__ import annotations

from collections.abc import Callable

from gmtool.evidence import witness_http
from gmtool.evidence.cosign import CosignerKey
from gmtool.evidence.note import NoteError, Verifier, open_checkpoint
from gmtool.store import log_append, log_reads, witnesses
from gmtool.store.db import Store, StoreError


class Cosigning:
    def __init__(self, store: Store, notify: Callable[[str], None]) -> None:
        self.store = store
        self.notify = notify
        self.held: dict[str, int] = {}  # URL -> the size that witness holds, as last heard
        self.missing: set[str] = set()  # witnesses the last checkpoint did not reach

    def cosign(self, note: str, size: int) -> str:
        """The cosignature lines of every served witness that cosigned `note`."""
        lines = []
        self.missing = set()
        for served in witnesses.served(self.store):
            url = served.location
            try:
                key = CosignerKey.parse(served.key or "")
                lines.append(
                    witness_http.submit(
                        url, key, note, size, self._proof(size), self.held.get(url, 0)
                    )
                )
                self.held[url] = size
            except (witness_http.Unreachable, witness_http.Refused, NoteError) as error:
                if isinstance(error, witness_http.Refused) and error.held is not None:
                    self.held[url] = error.held
                self.missing.add(url)
                self.notify(
                    f"witness {url}: {error}: the checkpoint at {size} is not cosigned by it "
                    "(the next one goes to it again)"
                )
        return "".join(lines)

    def _proof(self, size: int) -> Callable[[int], list[bytes]]:
        return lambda old: log_reads.tree(self.store).consistency(old, size)

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
