"""The signed checkpoints a store is checked against: a checkpoint file given, else every
checkpoint in the store's witness folders, each opened with the host's verifier key; and
the one an audit takes up from. Files and keys that cannot be used are usage errors
(exit 2); checkpoints in a witness that do not verify are findings. A checkpoint a GM
signed (a GM write with no host key at hand, ops/cover.py) holds when the key the log
registered for that GM at its size signed it (store/checkpoint_signers.py).

Which folders: the witnesses the store records; a `--witness` folder instead when one is
given (with a warning when the store does not record it: a copy kept elsewhere, say); a
store that records none: `--witness`, else `<db>.witness/`, as before witnesses were
recorded (docs/evidence.md).
"""

from __future__ import annotations

from pathlib import Path

from gmtool.errors import UsageError
from gmtool.evidence import witness
from gmtool.evidence.note import Checkpoint, NoteError, Verifier, checkpoint_shape, signer_names
from gmtool.findings import Finding
from gmtool.store import witnesses
from gmtool.store.checkpoint_signers import read_signed
from gmtool.store.db import Store, files_beside
from gmtool.store.log_append import origin_of


def witness_folders(store: Store, given: str | None) -> tuple[list[Path], list[str]]:
    """The folders whose checkpoints a check reads, and the warnings to show first. A
    `--witness` that names no folder is a usage error (a typo is not deleted evidence)."""
    if given is not None and not Path(str(given)).is_dir():
        place = Path(str(given))
        raise UsageError(
            f"--witness {given} is a file, not a witness folder: name the folder that "
            "holds the checkpoints (`audit --checkpoint` takes one checkpoint file)"
            if place.exists()
            else f"--witness {given}: there is no such folder (name the folder that holds "
            "the store's checkpoints)"
        )
    recorded = witnesses.disagreement(store, given)
    if recorded is not None:
        return [Path(str(given))], [
            f"--witness {given} is not this store's witness (it records "
            f"{witnesses.named(recorded)}): checking the checkpoints in {given} instead, "
            "not the recorded witness's"
        ]
    beside = files_beside(store)
    if beside is not None:
        return witnesses.folders(store) or [witness.witness_dir(beside, given)], []
    # A PostgreSQL store: no folder beside it; a folder recorded relative to the SQLite
    # file it was copied from is nowhere until --witness says where it is.
    found = witnesses.folders(store)
    if given is not None:
        return found or [Path(given)], []
    unplaced = witnesses.unplaced(store)
    warnings = (
        [
            f"the store records the witness folder {', '.join(unplaced)} beside the SQLite "
            "file it was copied from, and a PostgreSQL store has no file: pass --witness "
            "FOLDER (where its checkpoints are kept) to check them"
        ]
        if unplaced
        else []
    )
    return found, warnings


def key_of(store: Store, key: Path | None) -> Path | None:
    """The host's verifier key file: `key`, else `<db>.checkpoint.pub` beside a SQLite
    store (a PostgreSQL store has none beside it: None)."""
    beside = files_beside(store)
    return key or (witness.public_key_path(beside) if beside is not None else None)


def signed_checkpoints(
    store: Store, checkpoint: Path | None, key: Path | None, folders: list[Path] = ()
) -> tuple[list[tuple[str, Checkpoint]], list[Finding], str]:
    """(name, checkpoint) pairs whose signature holds, the problems of those whose
    signature does not (and of a witness folder that holds none while the host signs), and
    the store's origin: of `checkpoint`, else of every checkpoint in `folders`. A file
    named on the command line that cannot be read, or a missing key, is a usage error."""
    origin = origin_of(store)
    key_file = key_of(store, key)
    if checkpoint and not checkpoint.is_file():
        raise UsageError(f"no checkpoint file at {checkpoint}")
    if checkpoint:
        _shaped_as_checkpoint(checkpoint)
    paths, problems = [checkpoint] if checkpoint else [], []
    for folder in [] if checkpoint else folders:
        found = witness.files(folder)
        paths += found
        recorded = any(witness.same_folder(folder, other) for other in witnesses.folders(store))
        present = key_file is not None and key_file.exists()
        if not found and (key is not None or present or recorded):
            why = (  # an auditor's own --key says the host signs, whatever lies beside it
                f"--key {key} was given"
                if key is not None
                else f"{key_file.name} exists"
                if key_file is not None and present
                else "the store records it"
            )
            problems.append(
                Finding(
                    "witness_missing",
                    f"the store's host signs checkpoints ({why}) but {folder} holds none: "
                    "pass --witness where they are kept, or they were deleted",
                )
            )
    if not checkpoint:  # another store's checkpoints in a witness folder: shared
        shared = [(path, other) for path in paths if (other := _origin_line(path)) != origin]
        for path, other in shared:
            if other is not None:
                paths.remove(path)
                problems.append(
                    Finding(
                        "witness_shared",
                        f"{path} is a checkpoint of another store's log ({other}), not "
                        "this one's: the witness folder is shared with another store",
                    )
                )
    if not paths:
        return [], problems, origin
    verifier = host_verifier(store, key)
    found_checkpoints = []
    for path in paths:
        try:
            found_checkpoints.append((path.name, read_signed(store, path, verifier)[0]))
        except OSError as error:
            if verifier is None and origin in _signers(path):  # the host's: its key needed
                raise UsageError(
                    f"no verifier key at {key_file}: pass --key with the host's verifier key"
                    if key_file is not None
                    else "no verifier key: a PostgreSQL store's hosts keep their files in "
                    "their home folder; set $GMTOOL_HOME to it, or pass --key with the "
                    "host's verifier key (HOME/<database>.checkpoint.pub)"
                ) from None
            if checkpoint and not _readable(path):
                raise UsageError(str(error)) from None  # the file named cannot be read
            why = (
                f"the checkpoint is not signed by the key {key_file} holds: forged or "
                "changed, or that is not its host's key"
                if checkpoint
                else "a checkpoint in the witness that its host did not sign (forged or changed)"
            )
            problems.append(Finding("checkpoint_signature", f"{error}: {why}"))
    return found_checkpoints, problems, origin


def host_verifier(store: Store, key: Path | None) -> Verifier | None:
    """The host's verifier key: `--key`, else `<db>.checkpoint.pub` if there is one (a
    store no host has signed for has none: None). A key named or present but unreadable
    is a usage error (exit 2)."""
    key_file = key_of(store, key)
    if key_file is None or (key is None and not key_file.exists()):
        return None
    try:
        return witness.load_verifier(key_file)
    except OSError as error:
        raise UsageError(f"{error}: pass --key with the host's verifier key") from None


def store_host_key(store: Store, key: Path | None) -> tuple[Verifier | None, list[Finding]]:
    """The host's verifier key (`--key`, else `<db>.checkpoint.pub`) when it is this
    store's log's; a key of another log is no key, with a `verifier_key` finding: what it
    signed (openings, seed key registrations) cannot be checked with it."""
    host_key = host_verifier(store, key)
    origin = origin_of(store)
    if host_key is None or host_key.name == origin:
        return host_key, []
    return None, [
        Finding(
            "verifier_key",
            f"the verifier key {key_of(store, key)} is log "
            f"{host_key.name}'s, not this store's ({origin}): "
            "the host's signatures over opening balances and seed keys were not checked",
        )
    ]


def base_checkpoint(
    store: Store, given: str, key: Path | None, folders: list[Path]
) -> tuple[str, Checkpoint]:
    """(name, checkpoint) of the checkpoint an audit takes up from: a file, or the name of
    one in a witness folder (as an audit report names it), whose signature holds. Any
    other file is a usage error (exit 2): an audit never builds on what it cannot trust."""
    path = Path(given)
    if not given.strip():
        raise UsageError("--from-checkpoint is blank: name the checkpoint a clean audit covered")
    if not path.is_file() and path.name == given:
        path = next((folder / given for folder in folders if (folder / given).is_file()), path)
    if not path.is_file():
        raise UsageError(
            f"no checkpoint file at {given} (nor in the witness folder {witnesses.named(folders)})"
        )
    _shaped_as_checkpoint(path)
    key_file = key_of(store, key)
    try:
        verifier = (
            witness.load_verifier(key_file)
            if key_file is not None and (key or key_file.exists())
            else None
        )
        return path.name, read_signed(store, path, verifier)[0]
    except OSError as error:
        raise UsageError(
            f"{error}: an audit from a checkpoint needs one its host signed "
            "(pass --key with the host's verifier key)"
        ) from None


def _shaped_as_checkpoint(path: Path) -> None:
    """A file named as a checkpoint that is none (not text, or not an origin, size and root
    with signature lines) is a usage error: the wrong file was given, nothing was forged."""
    try:
        checkpoint_shape(witness.read_text(path))
    except witness.NotText:
        raise UsageError(f"{path} is not a checkpoint (not a text file)") from None
    except OSError as error:
        raise UsageError(str(error)) from None
    except NoteError as error:
        raise UsageError(f"{path} is not a checkpoint ({error})") from None


def _readable(path: Path) -> bool:
    """Whether `path` is a text file this user can read (a checkpoint that does not verify
    is a finding; a file that cannot be read, a usage error)."""
    try:
        witness.read_text(path)
    except OSError:
        return False
    return True


def _origin_line(path: Path) -> str | None:
    """The log a checkpoint file names on its first line (None: unreadable)."""
    try:
        return witness.read_text(path).split("\n", 1)[0]
    except OSError:
        return None


def _signers(path: Path) -> list[str]:
    """The key names that signed the checkpoint file at `path` (none: unreadable)."""
    try:
        return signer_names(witness.read_text(path))
    except OSError:
        return []
