"""Who may sign a checkpoint of a store: its host's checkpoint key, or a GM.

A GM write made where the store's checkpoint key cannot be read (no host ever ran, or the
host runs as another user) is covered by a checkpoint the acting GM signs with their own
key (ops/cover.py). Such a checkpoint of `size` records holds when its GM's signature is
made with the key the log's first `size` records register for that GM (the newest
`gm_user` record of that name among them): the key the GM held when the log was in that
state, registered by a request the audit checks like every other (audit/signatures.py).
A checkpoint signed by the host's key holds as before.
"""

from __future__ import annotations

import json
from pathlib import Path

from gmtool.evidence import witness
from gmtool.evidence.note import Checkpoint, NoteError, Verifier, open_checkpoint, signer_names
from gmtool.store.db import Store


def gm_key_at(store: Store, name: str, size: int) -> Verifier | None:
    """GM `name`'s verifier key as the log's first `size` records register it (None: none
    registered then, or a registration without a key)."""
    row = store.one(
        "SELECT body FROM log WHERE kind = 'gm_user' AND tkey = ? AND idx < ? "
        "ORDER BY idx DESC LIMIT 1",
        (name, size),
    )
    if row is None:
        return None
    try:
        key = json.loads(row["body"]).get("key")
        return Verifier.parse(key) if isinstance(key, str) else None
    except (ValueError, AttributeError, NoteError):
        return None  # a damaged record: the audit's log check reports it


def open_signed(store: Store, note: str, host: Verifier | None) -> tuple[Checkpoint, str | None]:
    """The checkpoint in `note` and the GM who signed it (None: the host did), when the
    host's key signed it or a GM whose key the log registered at its size; NoteError
    otherwise (a signature of a known key that fails, or no known key's signature)."""
    try:
        return open_checkpoint(note, [host] if host else []), None
    except NoteError as error:
        text, _, _ = note.rpartition("\n\n")
        try:
            checkpoint = Checkpoint.parse(text + "\n")
        except NoteError:
            raise error from None
        keys = {
            name: key
            for name in signer_names(note)
            if (key := gm_key_at(store, name, checkpoint.size)) is not None
        }
        if not keys:
            raise
    try:
        open_checkpoint(note, list(keys.values()) + ([host] if host else []))
    except NoteError as error:
        registered = ", ".join(keys)
        raise NoteError(f"{error} (GM keys at {checkpoint.size}: {registered})") from None
    return checkpoint, sorted(keys)[0]


def read_signed(store: Store, path: Path, host: Verifier | None) -> tuple[Checkpoint, str | None]:
    """`open_signed` of the checkpoint file at `path`; WitnessError (an OSError) when it
    cannot be read or does not hold."""
    note = witness.read_text(path)
    try:
        return open_signed(store, note, host)
    except NoteError as error:
        raise witness.WitnessError(f"{path}: {error}") from None
