"""`gmtool gm witness`: the store's witnesses, changed only by an operator's signed action.

Adding or removing a witness is a GM action like any other privileged one: a request the
operator signs, checked against their registered key, logged with its outcome (refusals
included) in the transaction that records the change (store/witnesses.py). A witness
folder is made if it is missing (and the caller says so). Once the change is recorded,
a checkpoint is signed into every witness the store now has, where the host's checkpoint
key is at hand: the new witness then holds a checkpoint at once, covering the change.
Removing a witness deletes none of its files; the last witness cannot be removed.
"""

from __future__ import annotations

from pathlib import Path

from gmtool.errors import GmtoolError, NotFound, Refused, UsageError
from gmtool.evidence import witness
from gmtool.evidence.request import Gm
from gmtool.house.notary import Notary
from gmtool.ops.gm import authorize, log, text
from gmtool.store import gm, witnesses
from gmtool.store.db import Store, StoreError
from gmtool.store.gm import failure


def listing(store: Store) -> dict:
    """The store's witnesses now and every change to them, oldest first; for a store that
    records none, the folder its checkpoint commands use until one is recorded."""
    current = witnesses.recorded(store)
    return {
        "witnesses": [
            {"type": w.type, "location": w.location, "folder": str(w.folder(store.path))}
            for w in current
        ],
        "changes": witnesses.changes(store),
        "unrecorded_default": None if current else str(witness.witness_dir(store.path).resolve()),
    }


def add(store: Store, actor: Gm, folder: str) -> dict:
    """Record `folder` as a witness of the store (made if missing): what was done."""
    path, place = _place(store, folder)
    if path.exists() and not path.is_dir():
        raise UsageError(f"{path} is not a folder: a witness is a folder of checkpoints")
    request = _authorize(store, actor, "witness_add", place)
    if place in witnesses.recorded(store):
        return {"changed": False, "folder": str(path)}
    created = not path.exists()
    if created:
        try:
            path.mkdir(mode=0o700, parents=True)
        except OSError as error:
            problem = UsageError(f"{path}: cannot make the folder: {error.strerror or error}")
            _log_failure(store, actor, "witness_add", place, request, problem)
            raise problem from None
    return {**_change(store, actor, "add", place, request), "created": created}


def remove(store: Store, actor: Gm, folder: str) -> dict:
    """Stop using `folder` as a witness (its files stay): what was done."""
    path, place = _place(store, folder)
    request = _authorize(store, actor, "witness_remove", place)
    recorded = witnesses.recorded(store)
    problem: GmtoolError | None = None
    if place not in recorded:
        problem = NotFound(
            f"{path} is not a witness of this store (it records "
            f"{witnesses.named(witnesses.folders(store)) or 'none'})"
        )
    elif len(recorded) == 1:
        problem = Refused(
            f"{path} is the store's only witness: add the new one first (`gmtool gm "
            f"witness add DIR`), then remove {path}"
        )
    if problem is not None:
        _log_failure(store, actor, "witness_remove", place, request, problem)
        raise problem
    return _change(store, actor, "remove", place, request)


def _place(store: Store, folder: str) -> tuple[Path, witness.Witness]:
    """The folder named (relative to the working directory) and its record."""
    name = text(folder, "the witness folder")
    place = witness.folder_witness(store.path, str(name))
    return place.folder(store.path), place


def _args(place: witness.Witness) -> dict:
    return {"type": place.type, "location": place.location}


def _authorize(store: Store, actor: Gm, action: str, place: witness.Witness) -> str | None:
    return authorize(store, actor, action, place.location, None, _args(place))


def _log_failure(
    store: Store,
    actor: Gm,
    action: str,
    place: witness.Witness,
    request: str | None,
    problem: GmtoolError,
) -> None:
    outcome = {**failure(problem), **_args(place)}
    log(store, actor.name, action, place.location, None, outcome, request)


def _change(
    store: Store, actor: Gm, change: str, place: witness.Witness, request: str | None
) -> dict:
    """Record the change with its GM action, then sign a checkpoint into the witnesses."""
    with store.write(durable=True):
        change_id = witnesses.next_id(store)
        action = gm.log_action(
            store,
            actor.name,
            f"witness_{change}",
            place.location,
            None,
            {"ok": True, "witness": change_id, **_args(place)},
            request,
        )
        witnesses.record(store, change, place, action)
    done = {"changed": True, "gm_action": action, "folder": str(place.folder(store.path))}
    if not witness.key_path(store.path).exists():
        return {**done, "signed": [], "unsigned": "no host has signed a checkpoint yet"}
    try:
        signed = Notary(store).sign()
    except StoreError as error:
        return {**done, "signed": [], "unsigned": str(error)}
    return {**done, "signed": [str(path) for path in signed], "unsigned": None}
