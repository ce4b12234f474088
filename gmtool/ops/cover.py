"""Every GM write ends covered by a signed checkpoint in the store's witnesses.

A write after the newest checkpoint is only as safe as the database: deleted, it leaves
no trace. So a console command that wrote anything into the evidence log (an adjustment,
a GM registration, a refusal, a deployment, a witness change, a command's fate) does not
return before a checkpoint covering it is in the store's witness folders (`cover`):

1. one is there already, else
2. a host runs (its lock is held): its notary signs within its `--checkpoint-every` (1 s);
   waited for, up to `HOST_WAIT_S` (two signers would race to the served witnesses), else
3. the host's checkpoint key is beside the store and this user may read it: signed with
   it, as `checkpoint export` does (served witnesses cosign it too), else
4. the acting GM's own key signs it, when it is the key the store registers for them
   (store/checkpoint_signers.py: the audit holds a GM's checkpoint to the key the log
   registered at its size).

When none of these can be done the write stays (it is logged) and `Uncovered` says so
plainly (exit 2). The CLI calls `covering` around every command that writes.

A store being set up (it records no witness and no host ever signed for it: `db init`,
the first deploys and GM users before the first `house run`) is left as it was: there is
no witness yet to sign into, nothing of value to protect, and the first host start
records its witness and signs over all of it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from gmtool.errors import GmtoolError, Unavailable, UsageError
from gmtool.evidence import witness, witness_http
from gmtool.evidence.note import Checkpoint, Verifier
from gmtool.evidence.request import Gm
from gmtool.house.lock import held
from gmtool.house.notary import Notary
from gmtool.store import log_append, log_reads, table_leases, witnesses
from gmtool.store.checkpoint_signers import gm_key_at, read_signed
from gmtool.store.db import Store, StoreError, files_beside, files_of, host_lock_path

NOT_YET = "no host has started on this store: its first start signs over what was written"
HOST_WAIT_S = 5.0  # how long a write waits for a running host's checkpoint (it signs each 1 s)
POLL_S = 0.05


class Uncovered(Unavailable):
    """The write was made and logged, but no checkpoint could be signed over it (exit 2)."""


def cover(
    store: Store,
    actor: Gm | None,
    notify: Callable[[str], None] = lambda message: None,
    wait: float = HOST_WAIT_S,
) -> dict:
    """A checkpoint covering the log as it is now, signed where one is missing: `size`
    covered, `by` (`"host"`, the GM's name, or `None` when one was there already) and the
    `files` written. Uncovered when none can be made (the write stays)."""
    size, _ = log_append.state(store)
    beside = files_beside(store)  # (a PostgreSQL store: in its hosts' home, if given)
    if not witnesses.recorded(store) and (beside is None or not witness.key_path(beside).exists()):
        return {"size": size, "by": None, "files": [], "unsigned": NOT_YET}
    key = witness.key_path(files_of(store))
    notary = Notary(store, notify=notify)
    if _covered(store, notary, size):
        return {"size": size, "by": None, "files": []}
    if host_runs(store) and _host_signs(store, notary, size, wait):
        return {"size": size, "by": "host", "files": []}
    problems = []
    if key.exists() and os.access(key, os.R_OK):
        try:
            return {"size": size, "by": "host", "files": [str(p) for p in notary.sign()]}
        except (StoreError, OSError) as error:
            problems.append(f"the host's checkpoint key could not sign: {error}")
    elif key.exists():
        problems.append(f"this user may not read the host's checkpoint key {key}")
    if actor is not None and actor.signer is not None:
        registered = gm_key_at(store, actor.name, size)
        if registered == actor.signer.verifier:
            try:
                signed, files = notary.sign_as(actor.signer)
            except (StoreError, OSError) as error:
                problems.append(f"{actor.name}'s key could not sign: {error}")
            else:
                return {"size": signed, "by": actor.name, "files": [str(p) for p in files]}
        else:
            problems.append(f"{actor.name}'s key here is not the one the store registers")
    raise Uncovered(
        f"done and logged (it stays), but no signed checkpoint covers it yet: "
        f"{'; '.join(problems) or 'no key to sign with'}. Start the host, or run "
        "`gmtool checkpoint export` where the host's checkpoint key is"
    )


@contextmanager
def covering(
    store: Store,
    actor: Gm | None,
    notify: Callable[[str], None] = lambda message: None,
    wait: float = HOST_WAIT_S,
    witness_change: bool = False,
) -> Iterator[None]:
    """Run a command that may write, then `cover` whatever it appended to the log, also
    when it ended in an error after writing (a refusal is logged before it is raised): the
    command's own error is raised then, with the checkpoint's problem said first. Refused
    first, nothing written: a store behind its witness, and (but for a change of the
    witnesses themselves, which must stay possible with one gone) a write whose served
    witnesses could not cosign it."""
    if files_beside(store) is None and witnesses.recorded(store):
        raise UsageError(
            f"{store.path}: a GM write here is covered by a checkpoint of its witnesses, "
            "signed with its hosts' checkpoint key (or checked with its .pub and signed with "
            "your GM key): set $GMTOOL_HOME to the hosts' home folder (`house run --home`). "
            "Nothing was written"
        )
    if not witness_change:  # (a copy gives itself a witness of its own: the remedy)
        refuse_behind(store)
        refuse_unwitnessed(store)
    before, _ = log_append.state(store)
    try:
        yield
    except (GmtoolError, KeyboardInterrupt) as error:
        if log_append.state(store)[0] != before:
            try:  # after Ctrl-C, no waiting for a host
                cover(store, actor, notify, 0.0 if isinstance(error, KeyboardInterrupt) else wait)
            except GmtoolError as uncovered:
                notify(str(uncovered))
        raise
    if log_append.state(store)[0] != before:
        cover(store, actor, notify, wait)


def host_runs(store: Store) -> bool:
    """Whether a host plays the store now: its lock is held (SQLite), or a table's lease
    has not expired (PostgreSQL, several hosts: each renews its leases)."""
    if getattr(store, "is_postgres", False):
        now = store.clock.wall()
        return any(lease.expires > now for lease in table_leases.leases(store))
    return bool(held(host_lock_path(store.path)))


def _host_verifier(store: Store) -> Verifier | None:
    path = witness.public_key_path(files_of(store))
    try:
        return witness.load_verifier(path) if path.exists() else None
    except OSError:
        return None


def _newest(store: Store, notary: Notary) -> Checkpoint | None:
    """The newest checkpoint in the store's witness folders whose signature holds (each
    folder's newest file: sizes only grow); a file that does not open is passed over (the
    audit reports it)."""
    host, newest = _host_verifier(store), None
    for folder in notary.folders()[0]:
        found = witness.files(folder)
        if not found:
            continue
        try:
            checkpoint = read_signed(store, found[-1], host)[0]
        except OSError:
            continue
        if newest is None or checkpoint.size > newest.size:
            newest = checkpoint
    return newest


def _ours(store: Store, checkpoint: Checkpoint) -> bool:
    """Whether `checkpoint` signs this log's history: its first records, by their root."""
    size, _ = log_append.state(store)
    return checkpoint.size <= size and (
        checkpoint.size == 0 or log_reads.tree(store).hash(0, checkpoint.size) == checkpoint.root
    )


def refuse_behind(store: Store) -> None:
    """Before a write: StoreError (nothing written) when the store's witness signed a longer
    or another history than the store holds: an older copy restored, records deleted, or
    history rewritten. A checkpoint of the other history would seem to cover the write, and
    the write would fork the log (house run refuses such a store the same way)."""
    beside = files_beside(store)
    if beside is None:
        return  # (PostgreSQL without its hosts' home: refused by the CLI before this)
    if not witnesses.recorded(store) and not witness.key_path(beside).exists():
        return
    try:
        checkpoint = _newest(store, Notary(store))
    except (StoreError, OSError):
        return  # a witness that cannot be read: the cover after the write says so
    if checkpoint is None or _ours(store, checkpoint):
        return
    size, _ = log_append.state(store)
    why = (
        f"its witness signed {checkpoint.size:,} records and the store holds {size:,}: an "
        "older copy of the store, or records were deleted"
        if checkpoint.size > size
        else f"its first {checkpoint.size:,} evidence records are not the ones its witness "
        "signed: history was rewritten"
    )
    raise StoreError(
        f"{store.path}: {why}. Nothing was written: run `gmtool audit`, and restore the "
        "newest copy of the store"
    )


def refuse_unwitnessed(store: Store) -> None:
    """Before a write the console would sign itself (the host's key is readable here):
    Unavailable, nothing written, when fewer of the store's served witnesses answer than
    its quorum. The write would be covered by the witness folders alone, which whoever can
    write them can cut (outside probe a48)."""
    beside = files_beside(store)
    key = witness.key_path(beside) if beside is not None else None
    served = witnesses.served(store) if key is not None else []
    if not served or key is None or not os.access(key, os.R_OK):
        return
    need, origin, silent = witnesses.quorum(store), log_append.origin_of(store), []
    for place in served:
        try:
            witness_http.fetch(place.location, origin)
        except (witness_http.Unreachable, witness_http.Refused) as error:
            silent.append(f"{place.location} ({error})")
        if len(served) - len(silent) >= need:
            return
    raise Unavailable(
        f"{len(served) - len(silent)} of the store's {len(served)} served witness(es) answer, "
        f"the quorum is {need}: {'; '.join(silent)}. Nothing was written (the witness folders "
        "alone would cover it). Try again once they answer, or remove a witness that is gone "
        "for good: `gmtool gm witness remove URL`"
    )


def _covered(store: Store, notary: Notary, size: int) -> bool:
    """Whether a witness folder holds a checkpoint of at least `size` records, whose
    signature holds, of this log's history."""
    host = _host_verifier(store)
    for folder in notary.folders()[0]:
        found = witness.files(folder)
        try:
            checkpoint = read_signed(store, found[-1], host)[0] if found else None
        except OSError:
            continue
        if checkpoint is not None and checkpoint.size >= size:
            return True  # (a store behind its witness is refused before it writes)
    return False


def _host_signs(store: Store, notary: Notary, size: int, wait: float) -> bool:
    """Whether the running host signs a checkpoint of at least `size` within `wait`."""
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if _covered(store, notary, size):
            return True
        time.sleep(POLL_S)
    return _covered(store, notary, size)
