"""The console's lease on a GM command it waits for: a host carries out only a command
whose console still waits.

`gmtool tables kick/close` queues a command for the host and waits for its fate. A console
that stops waiting (Ctrl-C, `kill -9`, a closed terminal) must leave a command that no
host carries out later: the console takes an exclusive `flock` on a file beside the store
named after the command's signed request before it queues it, and holds it until the
command has a fate. The kernel releases the lock when the console exits in any way,
`kill -9` included, so a host that finds the lock free knows nobody waits for the answer,
and logs the command as withdrawn instead of carrying it out (house/host.py, and at a
host's start house/recovery.py). Ctrl-C withdraws it at once (ops/gm.py).

A lock alone proves only that some process holds it, and whoever can write the store's
folder can hold one for a console they killed (outside probe a06). So the lock file also
holds the console's word that it still waits: a signed note by the GM whose request the
command carries, naming the request (its digest) and the moment it was written; the
console writes it anew every `REFRESH_S` while it waits. A word proves the console was
alive when it wrote it, so the host carries a command out only on a word WRITTEN AFTER
THE HOST FIRST SAW THE COMMAND, under a held lock, verifying with the requesting GM's
registered key, and at most `FRESH_S` old. A killed console writes no word after its
death, so a host that first sees its command after the kill never carries it out,
whoever holds the lock and however fresh the last word still is: it waits (neither
claiming nor withdrawing) until the word goes stale, the lock is free or the word is
another's, then withdraws it. A live console's next renewal, at most `REFRESH_S` later,
lets it through. Both times are the machine's clock (`SYSTEM`), never a host's virtual
clock: this is a question about two processes on one machine, as the lock itself is.

The file holds nothing secret (the note: the request's digest, a time, a signature); it
is readable by the host's user, whoever owns the store, and removed once the command has
a fate.

A PostgreSQL store has no folder, and its console and hosts may run on other machines:
there the same word and lock are in the database (store/console_words.py). The word is a
row of `console_words` (by the request's digest), the lock a session-level advisory lock
keyed by that digest, held by the console's own connection while it waits: PostgreSQL
releases it when that connection ends, `kill -9` of the console included, and the host
reads whether it is held in `pg_locks` instead of trying a flock. Every rule above holds
as it is (signed by the requesting GM's registered key, written after the host first saw
the command, at most `FRESH_S` old, `SKEW_S`); only the clock changes: both times are the
database's (`clock_timestamp()`), the one clock every machine sharing the store reads.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
from pathlib import Path

from gmtool.errors import Unavailable
from gmtool.evidence import request as gm_request
from gmtool.evidence.note import NoteError, Signer, Verifier, open_note, sign
from gmtool.house.lock import held
from gmtool.store import console_words, gm
from gmtool.store.clock import SYSTEM
from gmtool.store.db import Store, StoreError, files_of
from gmtool.store.gm import failure

REFRESH_S = 0.25  # how often a waiting console signs its word again
FRESH_S = 15.0  # a console's word older than this: it is gone, whoever holds its lock
SKEW_S = 5.0  # a word dated this far ahead of the host's reading still counts
MAX_NOTE = 4096  # a lease file longer than this is not a console's


def _digest(request: str) -> str:
    return hashlib.sha256(request.encode("utf-8")).hexdigest()


def _shared(where: object) -> bool:
    """Whether `where` is a PostgreSQL store (the word and lock in the database)."""
    return getattr(where, "is_postgres", False)


def wall(store: Store) -> float:
    """The clock a console's word is dated by and a host's sighting of a command is taken
    on: the machine's for a SQLite store, the database's for a PostgreSQL one."""
    return console_words.database_time(store) if _shared(store) else SYSTEM.wall()


def lease_path(db_path: Path | str, request: str) -> Path:
    """The lease file of the command whose signed request is `request`."""
    db_path = Path(db_path)
    return db_path.with_name(f"{db_path.name}.command-{_digest(request)[:32]}.lock")


def _word(request: str, at: float) -> str:
    """The text a waiting console signs: the request it waits for, and when (fixed width,
    so each new word overwrites the last in place)."""
    return f"gmtool console waits\n{_digest(request)}\n{at:020.6f}\n"


def _word_time(note: bytes, request: str, key: str | None, now: float) -> float | None:
    """When `note` was written, if it is `key`'s signed word for `request` written at most
    FRESH_S before `now`; else None."""
    if key is None:
        return None
    try:
        text, _ = open_note(note.decode("utf-8"), [Verifier.parse(key)])
        head, digest, at, tail = text.split("\n")
        written = float(at)
    except (NoteError, UnicodeDecodeError, ValueError):
        return None
    if (head, digest, tail) != ("gmtool console waits", _digest(request), ""):
        return None
    return written if now - FRESH_S <= written <= now + SKEW_S else None


class ConsoleLease:
    """Held by the console from before it queues a command until the command's fate,
    with its word (signed by `signer`, the GM whose request it is) renewed by `renew`.
    `where` is the store (its lease file beside it, or its word and lock in the database
    on PostgreSQL) or a SQLite store's path."""

    def __init__(self, where: Store | Path | str, request: str, signer: Signer) -> None:
        self.store = where if _shared(where) else None
        self.path = None if self.store else lease_path(getattr(where, "path", where), request)
        self.request = request
        self.signer = signer
        self._fd: int | None = None
        self._holding = False  # the database's lock (PostgreSQL)
        self._said: float | None = None  # when it last renewed its word, on `renew`'s pace

    def acquire(self) -> ConsoleLease:
        if self.store is not None:
            return self._acquire_shared()
        assert self.path is not None
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as error:
            raise StoreError(
                f"{self.path}: the console cannot make the lease a host checks before it "
                f"carries a command out ({error.strerror or error}); run it as a user who "
                "may write the store's folder"
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            os.fchmod(fd, 0o644)  # the host may run as another user: it must open it
            os.ftruncate(fd, 0)
            self._fd = fd
            self._say()
        except OSError as error:
            self._fd = None
            os.close(fd)
            raise StoreError(
                f"{self.path}: cannot hold the command's lease ({error.strerror or error})"
            ) from None
        return self

    def _acquire_shared(self) -> ConsoleLease:
        assert self.store is not None
        if not console_words.hold(self.store, _digest(self.request)):
            raise StoreError(
                f"{self.store.path}: another session holds this command's lease: send it again"
            )
        self._holding = True
        try:
            self._say()
        except StoreError:
            self.release()
            raise
        return self

    def _say(self) -> None:
        if self.store is not None:
            at = console_words.database_time(self.store)
            note = sign(_word(self.request, at), self.signer)
            console_words.say(self.store, _digest(self.request), note, at)
        elif self._fd is not None:
            word = _word(self.request, SYSTEM.wall())
            os.pwrite(self._fd, sign(word, self.signer).encode("utf-8"), 0)

    def renew(self, now: float | None = None) -> None:
        """Sign the console's word again if `REFRESH_S` have passed (call it while waiting;
        a host carries the command out only on a word written after it first saw it).
        `now` paces the renewals: the caller's monotonic time (an in-process console on a
        host's virtual loop gives the loop's), by default the machine's; the word itself
        is always dated by the machine's clock (the database's on PostgreSQL). A word that
        cannot be written leaves the last one to go stale: the host then withdraws the
        command, the safe way to fail."""
        pace = SYSTEM.monotonic() if now is None else now
        if self._said is None:  # the first call: the word of `acquire` starts the pace
            self._said = pace
        elif (self._fd is not None or self._holding) and pace - self._said >= REFRESH_S:
            self._said = pace
            try:
                self._say()
            except (OSError, StoreError):
                pass

    def release(self) -> None:
        """Give the lease up (the command has a fate): the word goes, then the lock."""
        if self._holding and self.store is not None:
            self._holding = False
            try:
                console_words.forget(self.store, _digest(self.request))
            except StoreError:
                pass  # a host removes it later
            try:
                console_words.let_go(self.store, _digest(self.request))
            except StoreError:
                pass  # the connection is gone: so is its lock
            return
        if self._fd is None or self.path is None:
            return
        try:
            self.path.unlink(missing_ok=True)
        except OSError:
            pass  # a host removes it later
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
        self._fd = None

    def __enter__(self) -> ConsoleLease:
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()


def console_word(store: Store, request: str | None) -> float | None:
    """When the console that queued the command of `request` last said it waits (the
    machine's clock), if it still holds the lease's lock and its word there is fresh and
    signed by the GM whose request it is; else None: no file (a command queued by hand, or
    by a gmtool from before leases), the lock free (the console exited, however), the word
    stale, unsigned or another's (a killed console's lock held by someone else), or a file
    that cannot be read: a host that cannot tell carries nothing out. On PostgreSQL the
    lock and the word are the database's (the module's docstring), and so is the clock."""
    if request is None:
        return None
    try:
        if _shared(store):
            if not console_words.held(store, _digest(request)):
                return None
            text = console_words.word(store, _digest(request))
            note = b"" if text is None else text.encode("utf-8")
        else:
            path = lease_path(files_of(store), request)
            if held(path) is not True:
                return None
            with open(path, "rb") as file:
                note = file.read(MAX_NOTE + 1)
        by = gm_request.fields_of(request)["by"]
        now = wall(store)
    except (OSError, NoteError, StoreError):
        return None
    if len(note) > MAX_NOTE or not isinstance(by, str):
        return None
    return _word_time(note, request, gm.registered_key(store, by), now)


def word_since(store: Store, command: dict, seen: float) -> bool | None:
    """Whether a host that first saw `command` at `seen` (on `wall`'s clock) may carry
    it out: True when its console waits and wrote its word after `seen`; False when its
    console's word still holds but was written before (the console may be dead: wait for
    a newer one, neither claiming nor withdrawing); None when nobody waits (withdraw)."""
    written = console_word(store, command.get("request"))
    return None if written is None else written > seen


def discard(store: Store, request: str | None) -> None:
    """Remove the lease file (the word, on PostgreSQL) a console left behind (it was
    killed): its command has a fate."""
    if request is None:
        return
    try:
        if _shared(store):
            console_words.forget(store, _digest(request))
        else:
            lease_path(files_of(store), request).unlink(missing_ok=True)
    except (OSError, StoreError):
        pass


ABANDONED = (
    "withdrawn: the console that sent it stopped waiting before a host took it "
    "(interrupted or killed), so it is not carried out; send it again if it is still wanted"
)


def withdrawal(store: Store, command: dict) -> dict:
    """The fate of a command nobody waits for, withdrawn (it is never carried out); the
    lease file its console left goes."""
    discard(store, command.get("request"))
    return {**failure(Unavailable(ABANDONED)), "withdrawn": True}


def withdraw_abandoned(store: Store) -> tuple[list[int], list[int]]:
    """At a host's start, before any table plays: withdraw every pending command whose
    console is gone. The ids withdrawn, and those left pending because their console's
    word still holds (the host's loop carries one out only on a newer word)."""
    withdrawn, left = [], []
    for command in gm.pending_commands(store):
        if console_word(store, command.get("request")) is not None:
            left.append(command["id"])
        elif gm.withdraw(store, command["id"], withdrawal(store, command)):
            withdrawn.append(command["id"])
    return withdrawn, left
