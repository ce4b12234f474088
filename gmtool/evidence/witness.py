"""Where signed checkpoints and the key that signs them live, beside a store.

The host's checkpoint key is `<db>.checkpoint.key` (a signer key in Go's text form,
0600) with its verifier key in `<db>.checkpoint.pub`; checkpoints go to the store's
witnesses, folders holding one file per tree size (`000000001234.checkpoint`), written
whole or not at all. The store records its witnesses (`Witness`, store/witnesses.py); a
store that records none yet uses `--witness DIR`, else `<db>.witness/`. An operator puts
a witness on other storage, so a copy of the database alone cannot undo what was signed.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from gmtool.evidence.note import (
    Checkpoint,
    NoteError,
    Signer,
    Verifier,
    open_checkpoint,
)

SUFFIX = ".checkpoint"


class WitnessError(OSError):
    """A key or checkpoint file that is missing, unreadable or malformed."""


def key_path(db: Path) -> Path:
    return db.with_name(db.name + ".checkpoint.key")


def public_key_path(db: Path) -> Path:
    return db.with_name(db.name + ".checkpoint.pub")


def witness_dir(db: Path, witness: str | Path | None = None) -> Path:
    return Path(witness) if witness else db.with_name(db.name + ".witness")


FOLDER = "folder"  # a folder of checkpoint files
SERVED = "tlog-witness"  # a witness that cosigns over HTTP (C2SP tlog-witness): its URL
QUORUM = "quorum"  # not a witness: how many served witnesses must cosign (the location)


@dataclass(frozen=True)
class Witness:
    """One of a store's witnesses as the store records it. A folder's `location` is its
    path: absolute, or its name alone when it sits beside the store (`<db>.witness`), so a
    copy of the store and its witness audits wherever both are put. A served witness's
    `location` is its URL and `key` its own verifier key (cosign.CosignerKey's text); a
    folder has none."""

    type: str
    location: str
    key: str | None = None

    @property
    def served(self) -> bool:
        return self.type == SERVED

    def folder(self, db: Path) -> Path:
        """The folder this witness is, for the store at `db`."""
        if self.type != FOLDER:
            raise WitnessError(
                f"this store records a witness of type {self.type!r} ({self.location}), "
                "which this gmtool cannot use: upgrade gmtool"
            )
        path = Path(self.location)
        return path if path.is_absolute() else db.resolve().parent / path


def folder_witness(db: Path, folder: str | Path, relative: bool = True) -> Witness:
    """The folder `folder` (relative to the working directory) as a witness of the store
    at `db`, as the store records it; without `relative` (a PostgreSQL store, whose `db`
    is a host's home, not a file that moves with its witness), always by its full path."""
    path = Path(folder).resolve()
    beside = relative and path.parent == db.resolve().parent
    return Witness(FOLDER, path.name if beside else str(path))


def same_folder(one: Path, other: Path) -> bool:
    return one.resolve() == other.resolve()


class NotText(WitnessError):
    """A file read as text that is not UTF-8 (or the encoding asked) text."""


def read_text(path: Path, encoding: str = "utf-8") -> str:
    """A regular file's text; a named pipe or device is never opened (it could wait for a
    writer forever): WitnessError, as for a file that cannot be read."""
    try:
        mode = path.stat().st_mode
        if stat.S_ISDIR(mode):
            raise WitnessError(f"{path} is a folder, not a file")
        if not stat.S_ISREG(mode):
            raise WitnessError(f"{path}: not a regular file")
        return path.read_text(encoding=encoding)
    except WitnessError:
        raise
    except UnicodeDecodeError:
        raise NotText(f"{path}: not a text file") from None
    except OSError as error:
        raise WitnessError(
            f"{path}: cannot read it ({getattr(error, 'strerror', None) or error})"
        ) from None


def write_private(path: Path, text: str) -> None:
    """`text` at `path`, readable by its owner only, whole or not at all. A symbolic link
    or anything but a regular file at `path` is refused, never replaced nor written
    through (`--plan-out /dev/stdout` run as root replaced the machine's /dev/stdout)."""
    if path.is_symlink():
        raise WitnessError(f"{path} is a symbolic link: name the file itself")
    if path.exists() and not path.is_file():
        raise WitnessError(f"{path} is not a regular file: name a file to write")
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, text.encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(temporary, path)


def load_signer(db: Path, origin: str) -> Signer:
    """The host's checkpoint signer for the store at `db`, made on first use."""
    path = key_path(db)
    if not path.exists():
        signer = Signer.generate(origin)
        write_private(path, signer.text() + "\n")
        write_private(public_key_path(db), signer.verifier.text() + "\n")
        return signer
    try:
        signer = Signer.parse(read_text(path, "ascii"))
    except (OSError, NoteError) as error:
        raise WitnessError(f"{path}: not a checkpoint key ({error})") from None
    if signer.name != origin:
        raise WitnessError(
            f"{path} signs for log {signer.name}, not this store's ({origin}); "
            "it belongs to another store"
        )
    return signer


KEY_WORDS = "one line of text, NAME+KEYID+KEY: the host's <db>.checkpoint.pub"


def load_verifier(path: Path) -> Verifier:
    """The verifier key at `path`; a file that is not one (a report, a store, any file that
    is not ASCII text) is said to be so in plain words."""
    if not path.exists():
        raise WitnessError(f"no verifier key at {path}")
    text = read_text(path, "latin-1")  # any bytes decode: what they are is checked here
    if text.lstrip().startswith("{"):
        raise WitnessError(f"{path} is a JSON file, not a verifier key ({KEY_WORDS})")
    if not text.isascii():
        raise WitnessError(f"{path} is not a verifier key ({KEY_WORDS})")
    if text.startswith("PRIVATE+KEY+") or "PRIVATE KEY-----" in text[:80]:
        raise WitnessError(
            f"{path} is a signing (private) key, not a verifier key ({KEY_WORDS}); keep the "
            "private key to the host"
        )
    try:
        return Verifier.parse(text)
    except NoteError as error:
        raise WitnessError(f"{path}: not a verifier key ({error})") from None


def save(folder: Path, note: str, size: int) -> Path:
    """Write checkpoint `note` of `size` records into `folder`, unless the folder holds
    the checkpoints of another log, or another checkpoint of this size (a fork: a copy of
    the store signing into the same folder): WitnessError, and nothing is written."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    origin = note.split("\n", 1)[0]
    other = held_origin(folder)
    if other is not None and other != origin:
        raise WitnessError(
            f"{folder} holds the checkpoints of another log ({other}), not this store's "
            f"({origin}): a witness folder serves one store; give this one a folder of its own"
        )
    path = folder / f"{size:012d}{SUFFIX}"
    if path.is_file() and _head(read_text(path)) != _head(note):
        raise WitnessError(
            f"{path} holds another checkpoint of {size} records than this store's: another "
            "copy of this store signs into the folder (a fork of its history); nothing "
            "was written"
        )
    write_private(path, note)
    return path


CLAIM = ".store"  # which store's witness a folder is: its path, and the folder's own


def claimant(folder: Path, db: Path) -> Path | None:
    """The other store `folder` is the witness of, or None (no claim, this store's, or a
    claim gone stale: made for another folder, so the folder was copied or moved with a
    store, or its store is no longer where it was). Two stores with one log (a copy and
    its original) signing into one folder would each make the other read as a rollback."""
    try:
        lines = read_text(folder / CLAIM).splitlines()
    except OSError:
        return None
    if len(lines) != 2:
        return None
    store, claimed_folder = Path(lines[0]), Path(lines[1])
    if claimed_folder != folder.resolve() or store == db.resolve() or not store.exists():
        return None
    return store


def claim(folder: Path, db: Path) -> None:
    """Make `folder` the witness of the store at `db` (unless it says so already)."""
    text = f"{db.resolve()}\n{folder.resolve()}\n"
    try:
        if read_text(folder / CLAIM) == text:
            return
    except OSError:
        pass
    write_private(folder / CLAIM, text)


def held_origin(folder: Path) -> str | None:
    """The log whose checkpoints `folder` holds (its newest file's origin line), or None
    when it holds none (or none that can be read)."""
    for path in reversed(files(folder)):
        try:
            return read_text(path).split("\n", 1)[0]
        except OSError:
            continue
    return None


def _head(note: str) -> list[str]:
    return note.split("\n")[:3]  # origin, size, root: the checkpoint without signatures


def files(folder: Path) -> list[Path]:
    """The witness's checkpoint files, oldest (smallest tree) first."""
    if not folder.is_dir():
        return []
    return sorted(
        p for p in folder.iterdir() if p.name.endswith(SUFFIX) and not p.name.startswith(".")
    )


def read(path: Path, verifier: Verifier) -> Checkpoint:
    note = read_text(path)
    try:
        return open_checkpoint(note, [verifier])
    except NoteError as error:
        raise WitnessError(f"{path}: {error}") from None


def served_key(key: str) -> str:
    """A served witness's verifier key, from its KEY.pub file or the key itself;
    ValueError in words when it is none (a private key is named so, never echoed)."""
    source = Path(key)
    if not source.is_file() and ("/" in key or key.endswith((".pub", ".key"))):
        raise ValueError("no such file (the witness's KEY.pub, or the key itself)")
    try:
        given = read_text(source, "latin-1") if source.is_file() else key
    except OSError as error:
        raise ValueError(str(error)) from None
    if given.startswith("PRIVATE+KEY+") or "PRIVATE KEY-----" in given[:80]:
        raise ValueError("a signing (private) key, not the witness's verifier key (its KEY.pub)")
    if not given.isascii():
        raise ValueError("not a witness's verifier key (its KEY.pub: one line of text)")
    from gmtool.evidence.cosign import CosignerKey  # (cryptography: only when asked)

    try:
        return CosignerKey.parse(given).text()
    except NoteError as error:
        raise ValueError(f"not a witness's verifier key ({error})") from None
