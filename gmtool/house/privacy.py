"""A hosted store is readable by its owner only.

While hands run, the store holds every player's face-down cards (in the database file and,
before a checkpoint of SQLite's, in its `-wal`), and beside it lie the keys that deal
and sign (`<db>.seed.key`, an older store's `<db>.key`, `<db>.checkpoint.key`). A store
copied with umask 022 is mode 0644: every user of the machine could read the cards of
running hands. Before it hosts, the
host makes these files owner-only (the group and others lose every permission) and says
so; SQLite gives the `-wal` and `-shm` it creates the database file's mode, so they stay
private. A file the host may not change (another user owns it), or a symbolic link in
place of one (the host never changes what a link points to: it could be any file of the
machine, and a host run as root could change it), is refused in plain words, before
anything is written.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from gmtool.store.db import StoreError

SECRET_SUFFIXES = (
    *("", "-wal", "-shm", ".key", ".seed.key", ".checkpoint.key"),
    ".token.key",  # mints player tokens (`players token`, issue 25)
)  # beside it
OTHERS = stat.S_IRWXG | stat.S_IRWXO  # the group's and everyone else's permissions


def exposed(db_path: Path) -> list[tuple[Path, int]]:
    """(file, mode) of each of the store's secret files the group or others may use."""
    out = []
    for suffix in SECRET_SUFFIXES:
        path = db_path.with_name(db_path.name + suffix)
        try:
            found = path.stat()
        except OSError:
            continue  # not there (yet): SQLite makes it with the database file's mode
        mode = stat.S_IMODE(found.st_mode)
        if stat.S_ISREG(found.st_mode) and mode & OTHERS:
            out.append((path, mode))
    return out


def make_private(db_path: Path) -> str | None:
    """Remove the group's and others' permissions from the store's secret files: what
    was changed, in one sentence (None when nothing was open to others). StoreError,
    with nothing changed, when a file is not this user's to change."""
    found = exposed(db_path)
    if not found:
        return None
    mine = os.geteuid()
    theirs = [path for path, _ in found if path.stat().st_uid != mine and mine != 0]
    if theirs:
        names = ", ".join(p.name for p in theirs)
        raise StoreError(
            f"{names}: readable by other users, and while hands run the store holds their "
            "face-down cards; the host may not change the mode of a file another user owns: "
            f"have its owner run `chmod go= {' '.join(str(p) for p in theirs)}`, or host as "
            "that user"
        )
    linked = [path for path, _ in found if path.is_symlink()]
    if linked:  # never change what a link points to: it may be any file of the machine
        raise StoreError(
            f"{', '.join(p.name for p in linked)}: a symbolic link to a file other users may "
            "read, and while hands run the store holds their face-down cards; the host does "
            "not change the mode of what a link points to: run `chmod go= "
            f"{' '.join(str(p.resolve()) for p in linked)}` if that is the store's own file"
        )
    changed = []
    for path, mode in found:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
            try:
                os.fchmod(fd, mode & ~OTHERS)
            finally:
                os.close(fd)
        except OSError as error:
            raise StoreError(
                f"{path}: readable by other users, and the host cannot make it private "
                f"({error.strerror or error}): run `chmod go= {path}` as its owner"
            ) from None
        changed.append(f"{path.name} {mode:04o} -> {mode & ~OTHERS:04o}")
    return (
        f"made the store's files private (owner only): {', '.join(changed)}. Other users "
        "could read them, and while hands run they hold face-down cards (the -wal too) and "
        "the keys that deal and sign; run reading commands as the store's owner"
    )
