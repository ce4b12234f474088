"""One host per database: an exclusive lock beside it, held while the host runs.

A second host would take the first one's running hands for a crash's leftovers and void
them, so `house run` and `demo` refuse to start while another host holds the lock. The
lock is an advisory `flock` on `<db>.host.lock`: the kernel releases it when the holder
exits in any way, `kill -9` included, so a crashed host never blocks the next one. A
host that stops (cleanly, or its start refused) removes the file while it still holds
the lock, so only a killed host leaves one behind (free: `host_running` reads "no host
since it exited"); a host that locked a file removed meanwhile sees its inode gone from
the path and tries again, so removing it never lets two hosts in.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from gmtool.store.db import StoreError, host_lock_path

STALE_S = 15.0  # a host that has not said its tables are alive for this long is gone


class HostLock:
    def __init__(self, db_path: Path) -> None:
        self.path = host_lock_path(db_path)
        self._fd: int | None = None

    def acquire(self) -> HostLock:
        for _ in range(16):
            fd = self._lock()
            if self._still_the_path(fd):
                break
            os.close(fd)  # the holder removed it as we locked it: lock the new one
        else:
            raise StoreError(f"{self.path}: the host lock keeps being replaced; try again")
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode("ascii"))
        self._fd = fd
        return self

    def _lock(self) -> int:
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as error:
            raise StoreError(
                f"{self.path}: the host cannot make its lock beside the store "
                f"({error.strerror or error}); run it where the store's folder can be written"
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 32).decode("ascii", "replace").strip() or "?"
            os.close(fd)
            raise StoreError(
                f"another host (pid {holder}) is running on this database; stop "
                "it first (one host per database)"
            ) from None
        return fd

    def _still_the_path(self, fd: int) -> bool:
        try:
            named = os.stat(self.path)
        except FileNotFoundError:
            return False
        held = os.fstat(fd)
        return (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino)

    def abandon(self) -> None:
        """Release a lock whose host never started (its start was refused)."""
        self.release()

    def release(self) -> None:
        """Remove the lock file (still holding the lock: a host opening it now sees it
        replaced and locks the new one), then release the lock."""
        if self._fd is not None:
            if self._still_the_path(self._fd):
                try:
                    os.unlink(self.path)
                except OSError:
                    pass  # a folder the host may no longer write: the free file stays
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> HostLock:
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()


def check_writable(db_path: Path) -> None:
    """Refuse, in plain words and before anything is written, a store the host could not
    write: on a read-only mount, or in a folder or file this user may not write. The host
    writes every hand into the store, and its lock, key and checkpoints beside it."""
    if not db_path.is_file():
        return  # no store there: opening it says so
    folder = db_path.resolve().parent
    try:
        read_only = bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except OSError:
        read_only = False
    if read_only:
        raise StoreError(
            f"{db_path}: the store is on a read-only file system: the host writes every "
            "hand into it (and its lock, host key and checkpoints beside it). Run `gmtool "
            "house run` on a copy in writable storage; reading commands work where it is"
        )
    if not os.access(folder, os.W_OK | os.X_OK) or not os.access(db_path, os.R_OK | os.W_OK):
        raise StoreError(
            f"{db_path}: this user may not write the store or its folder, and the host "
            "writes every hand into it (and its lock, host key and checkpoints beside it); "
            "run it as the store's owner. Reading commands work as they are"
        )


def host_running(db_path: Path) -> bool | None:
    """Whether a host holds the store's lock now: False when there is no lock file (a
    running host always has one) or it is free (no host since it was killed); None when
    that cannot be told (a file this user may not open)."""
    path = host_lock_path(db_path)
    if not path.exists() and not path.is_symlink():
        return False
    return held(path)


def held(path: Path) -> bool | None:
    """Whether some process holds an exclusive flock on `path` now: True, False (free),
    or None when that cannot be told (no such file, or one this user may not open)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return None
    finally:
        os.close(fd)
    return False


def seconds_since(stamp: str | None, now: float) -> float | None:
    """Seconds from the store's ISO time `stamp` to `now` (None when there is none)."""
    from datetime import datetime

    if not stamp:
        return None
    try:
        return max(0.0, now - datetime.fromisoformat(stamp).timestamp())
    except ValueError:
        return None
