"""`gmtool gm witness`: the store's witnesses, changed only by an operator's signed action.

Adding or removing a witness, or setting the quorum, is a GM action like any other
privileged one: a request the operator signs, checked against their registered key, logged
with its outcome (refusals included) in the transaction that records the change
(store/witnesses.py). A witness is a folder (made if it is missing, in an existing folder,
and only once the store has taken the change) or a served witness: its URL and its own
verifier key, both signed in the request. Once the change is recorded, a checkpoint is
signed into every witness the store now has (and sent to every served one), where the
host's checkpoint key is at hand, else with the acting GM's own key (ops/cover.py).
Removing a witness deletes none of its files; the last folder cannot be removed, nor a
served witness the quorum needs. On PostgreSQL the store's files are in the hosts' home
(`$GMTOOL_HOME`), and a folder is recorded by its full path, as a host records its first.
"""

from __future__ import annotations

from pathlib import Path

from gmtool.errors import GmtoolError, NotFound, Refused, UsageError
from gmtool.evidence import witness
from gmtool.evidence.request import Gm
from gmtool.evidence.witness_http import check_url
from gmtool.house.notary import Notary
from gmtool.ops.cover import Uncovered, cover
from gmtool.ops.gm import authorize, log, text
from gmtool.store import gm, log_append, witnesses
from gmtool.store.db import Store, StoreError, files_beside, files_of
from gmtool.store.gm import failure


def listing(store: Store) -> dict:
    """The store's witnesses now and every change to them, oldest first; for a store that
    records none, the folder its checkpoint commands use until one is recorded. A
    PostgreSQL store has no file: a folder it records relative to the SQLite file it was
    copied from is no folder there (`folder` None), nor is there a default one."""
    current = witnesses.recorded(store)
    beside = files_beside(store)
    return {
        "witnesses": [
            {"type": w.type, "location": w.location, "folder": _folder_of(w, beside)}
            if not w.served
            else {"type": w.type, "location": w.location, "url": w.location, "key": w.key}
            for w in current
        ],
        "quorum": witnesses.quorum(store),
        "quorum_set": witnesses.quorum_set(store),
        "changes": witnesses.changes(store),
        "unrecorded_default": None
        if current or beside is None
        else str(witness.witness_dir(beside).resolve()),
    }


def _folder_of(recorded: witness.Witness, beside: Path | None) -> str | None:
    """The folder a recorded folder witness is (None: relative to a file there is not)."""
    if beside is None and not Path(recorded.location).is_absolute():
        recorded.folder(Path("/"))  # (a type this version cannot use: its error)
        return None
    return str(recorded.folder(beside or Path("/")))


def is_url(target: str) -> bool:
    return "://" in target


def add(store: Store, actor: Gm, target: str, key: str | None = None) -> dict:
    """Record `target` (a folder, made if missing; or a served witness's URL with its
    `key`) as a witness of the store: what was done."""
    if is_url(target):
        return _add_served(store, actor, target, key)
    if key is not None:
        raise UsageError("--key is a served witness's key: a folder witness takes none")
    path, place = _place(store, target)
    if path.exists() and not path.is_dir():
        raise UsageError(f"{path} is not a folder: a witness is a folder of checkpoints")
    request = _authorize(store, actor, "witness_add", place)
    if place in witnesses.recorded(store):
        return {"changed": False, "folder": str(path)}
    make = None if path.exists() else path
    other = witness.held_origin(path)
    if other is not None and other != log_append.origin_of(store):
        problem = Refused(
            f"{path} holds the checkpoints of another store's log ({other}): a witness "
            "folder serves one store; give this one a folder of its own"
        )
        _log_failure(store, actor, "witness_add", place, request, problem)
        raise problem
    if make is not None and not make.parent.is_dir():
        problem = UsageError(
            f"{path}: its folder {make.parent} does not exist: make it first (a witness "
            "folder is made only inside an existing one)"
        )
        _log_failure(store, actor, "witness_add", place, request, problem)
        raise problem
    return {**_change(store, actor, "add", place, request, make), "created": make is not None}


def _add_served(store: Store, actor: Gm, target: str, key: str | None) -> dict:
    place = _served_place(store, target, key)
    request = _authorize(store, actor, "witness_add", place)
    same = [w for w in witnesses.served(store) if w.location == place.location]
    problem: GmtoolError | None = None
    if same and same[0].key == place.key:
        return {"changed": False, "folder": place.location}
    if same:
        problem = Refused(
            f"{place.location} is a witness of this store already, with another key "
            f"({same[0].key}): remove it first, then add it with its new key"
        )
    elif not witnesses.folders(store):
        problem = Refused(
            "this store records no witness folder yet: its first host start records one, "
            "or add one first (`gmtool gm witness add DIR`); served witnesses come beside it"
        )
    if problem is not None:
        _log_failure(store, actor, "witness_add", place, request, problem)
        raise problem
    return _change(store, actor, "add", place, request)


def remove(store: Store, actor: Gm, target: str) -> dict:
    """Stop using `target` (a folder or a served witness's URL) as a witness (a folder's
    files stay): what was done."""
    if is_url(target):
        url = _url(target)
        place = next(
            (w for w in witnesses.served(store) if w.location == url),
            witness.Witness(witness.SERVED, url),
        )
        path = None
    else:
        path, place = _place(store, target)
    request = _authorize(store, actor, "witness_remove", place)
    recorded = witnesses.recorded(store)
    problem: GmtoolError | None = None
    name = path or place.location
    if place not in recorded:
        listed = [w.location if w.served else str(w.folder(files_of(store))) for w in recorded]
        problem = NotFound(
            f"{name} is not a witness of this store (it records {', '.join(listed) or 'none'})"
        )
    elif not place.served and len(witnesses.folders(store)) == 1:
        problem = Refused(
            f"{path} is the store's only witness folder: add the new one first (`gmtool gm "
            f"witness add DIR`), then remove {path}"
        )
    elif place.served and len(witnesses.served(store)) - 1 < witnesses.quorum(store):
        if witnesses.quorum_set(store):
            problem = Refused(
                f"the quorum is {witnesses.quorum(store)} served witnesses: lower it first "
                "(`gmtool gm witness quorum N`), then remove "
                f"{place.location}"
            )
    if problem is not None:
        _log_failure(store, actor, "witness_remove", place, request, problem)
        raise problem
    return _change(store, actor, "remove", place, request)


def set_quorum(store: Store, actor: Gm, count: int) -> dict:
    """Require `count` served witnesses to agree with the store in every audit."""
    place = witnesses.quorum_change(count)
    request = _authorize(store, actor, "witness_quorum", place)
    served = len(witnesses.served(store))
    if not 0 <= count <= served:
        problem = UsageError(
            f"the quorum is a number of served witnesses from 0 to {served} (this store "
            f"records {served})"
        )
        _log_failure(store, actor, "witness_quorum", place, request, problem)
        raise problem
    if witnesses.quorum_set(store) and witnesses.quorum(store) == count:
        return {"changed": False, "quorum": count}
    return {**_change(store, actor, "quorum", place, request), "quorum": count}


def _url(target: str) -> str:
    try:
        return check_url(str(text(target, "the witness URL")))
    except ValueError as error:
        raise UsageError(str(error)) from None


def _served_place(store: Store, target: str, key: str | None) -> witness.Witness:
    url = _url(target)
    if key is None:
        raise UsageError(
            f"{url}: give the witness's verifier key with --key (its KEY.pub, or the key "
            "itself): the audit checks its cosignatures with it"
        )
    try:
        return witness.Witness(witness.SERVED, url, witness.served_key(key))
    except ValueError as error:
        raise UsageError(f"--key {key}: {error}") from None


def _place(store: Store, folder: str) -> tuple[Path, witness.Witness]:
    """The folder named (relative to the working directory) and its record."""
    name = text(folder, "the witness folder")
    at = files_of(store)  # on PostgreSQL, in the hosts' home: recorded by its full path
    place = witness.folder_witness(at, str(name), not getattr(store, "is_postgres", False))
    return place.folder(at), place


def _args(place: witness.Witness) -> dict:
    args = {"type": place.type, "location": place.location}
    if place.key is not None:
        args["key"] = place.key
    return args


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
    store: Store,
    actor: Gm,
    change: str,
    place: witness.Witness,
    request: str | None,
    make: Path | None = None,
) -> dict:
    """Record the change with its GM action (the folder `make` made inside that write, so a
    store that cannot take the change leaves none behind), then sign a checkpoint."""
    made = False
    try:
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
            if make is not None:
                try:
                    make.mkdir(mode=0o700)
                except OSError as error:
                    raise UsageError(
                        f"{make}: cannot make the folder: {error.strerror or error}"
                    ) from None
                made = True
    except UsageError as problem:
        _log_failure(store, actor, f"witness_{change}", place, request, problem)
        raise
    except BaseException:
        if made and make is not None:
            make.rmdir()
        raise
    at = files_of(store)
    name = place.location if place.served or change == "quorum" else str(place.folder(at))
    done = {"changed": True, "gm_action": action, "folder": name}
    notes: list[str] = []
    try:
        if witness.key_path(at).exists():
            signed = [str(path) for path in Notary(store, notify=notes.append).sign()]
        else:  # no host has signed yet: the acting GM's own key signs (ops/cover.py)
            signed = cover(store, actor, notes.append)["files"]
    except (StoreError, Uncovered) as error:
        return {**done, "signed": [], "unsigned": str(error)}
    return {**done, "signed": signed, "unsigned": None, "notes": notes}


# A change of the witnesses goes on while a served witness is gone (removing it is the
# remedy): `cli/common.writing` does not first require the served witnesses to answer.
for _witness_change in (add, remove, set_quorum):
    _witness_change.changes_witnesses = True  # type: ignore[attr-defined]
