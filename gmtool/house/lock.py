"""One host per database: an exclusive lock beside it, held while the host runs.

A second host would take the first one's running hands for a crash's leftovers and void
them, so `house run` and `demo` refuse to start while another host holds the lock. The
lock is an advisory `flock` on `<db>.host.lock`: the kernel releases it when the holder
exits in any way, `kill -9` included, so a crashed host never blocks the next one.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from gmtool.store.db import StoreError, host_lock_path


class HostLock:
    def __init__(self, db_path: Path) -> None:
        self.path = host_lock_path(db_path)
        self._fd: int | None = None

    def acquire(self) -> HostLock:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 32).decode("ascii", "replace").strip() or "?"
            os.close(fd)
            raise StoreError(
                f"another host (pid {holder}) is running on this database; stop "
                "it first (one host per database)"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode("ascii"))
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> HostLock:
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()
