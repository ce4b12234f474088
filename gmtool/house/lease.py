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

The file holds nothing secret (the console's pid); it is readable by the host's user,
whoever owns the store, and removed once the command has a fate.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
from pathlib import Path

from gmtool.errors import Unavailable
from gmtool.house.lock import held
from gmtool.store import gm
from gmtool.store.db import Store, StoreError
from gmtool.store.gm import failure


def lease_path(db_path: Path | str, request: str) -> Path:
    """The lease file of the command whose signed request is `request`."""
    db_path = Path(db_path)
    digest = hashlib.sha256(request.encode("utf-8")).hexdigest()[:32]
    return db_path.with_name(f"{db_path.name}.command-{digest}.lock")


class ConsoleLease:
    """Held by the console from before it queues a command until the command's fate."""

    def __init__(self, db_path: Path | str, request: str) -> None:
        self.path = lease_path(db_path, request)
        self._fd: int | None = None

    def acquire(self) -> ConsoleLease:
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
            os.write(fd, f"{os.getpid()}\n".encode("ascii"))
        except OSError as error:
            os.close(fd)
            raise StoreError(
                f"{self.path}: cannot hold the command's lease ({error.strerror or error})"
            ) from None
        self._fd = fd
        return self

    def release(self) -> None:
        """Give the lease up (the command has a fate): the file goes, then the lock."""
        if self._fd is None:
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


def console_waiting(db_path: Path | str, request: str | None) -> bool:
    """Whether the console that queued the command of `request` still holds its lease.
    False when no file is there (a command queued by hand, or by a gmtool from before
    leases), when the lock is free (the console exited, however), or when the file cannot
    be opened: a host that cannot tell carries nothing out."""
    if request is None:
        return False
    return held(lease_path(db_path, request)) is True


def discard(db_path: Path | str, request: str | None) -> None:
    """Remove the lease file a console left behind (it was killed): its command has a fate."""
    if request is None:
        return
    try:
        lease_path(db_path, request).unlink(missing_ok=True)
    except OSError:
        pass


ABANDONED = (
    "withdrawn: the console that sent it stopped waiting before a host took it "
    "(interrupted or killed), so it is not carried out; send it again if it is still wanted"
)


def abandoned(db_path: Path | str, command: dict) -> dict | None:
    """A host's check before it claims `command`: None while its console waits; else the
    command's fate, withdrawn (it is never carried out)."""
    if console_waiting(db_path, command.get("request")):
        return None
    discard(db_path, command.get("request"))
    return {**failure(Unavailable(ABANDONED)), "withdrawn": True}


def withdraw_abandoned(store: Store) -> list[int]:
    """Withdraw every pending command whose console is gone (a host's start, before any
    table plays): their ids."""
    withdrawn = []
    for command in gm.pending_commands(store):
        outcome = abandoned(store.path, command)
        if outcome is not None and gm.withdraw(store, command["id"], outcome):
            withdrawn.append(command["id"])
    return withdrawn
