"""The signed checkpoints a store is checked against: a checkpoint file given, else every
checkpoint in the witness folder, each opened with the host's verifier key; and the one
an audit takes up from. Files and keys that cannot be used are usage errors (exit 2);
checkpoints in the witness that do not verify are findings."""

from __future__ import annotations

from pathlib import Path

from gmtool.errors import UsageError
from gmtool.evidence import witness
from gmtool.evidence.note import Checkpoint, Verifier
from gmtool.findings import Finding
from gmtool.store.db import Store
from gmtool.store.log_append import origin_of


def signed_checkpoints(
    store: Store, checkpoint: Path | None, key: Path | None, folder: str | None
) -> tuple[list[tuple[str, Checkpoint]], list[Finding], str]:
    """(name, checkpoint) pairs whose signature holds, the problems of those whose
    signature does not, and the store's origin. A file named on the command line that
    cannot be read, or a missing key, is a usage error (exit 2)."""
    origin = origin_of(store)
    key_file = key or witness.public_key_path(store.path)
    paths = [checkpoint] if checkpoint else witness.files(witness.witness_dir(store.path, folder))
    if checkpoint and not checkpoint.is_file():
        raise UsageError(f"no checkpoint file at {checkpoint}")
    if not paths:
        if key is None and key_file.exists():
            where = witness.witness_dir(store.path, folder)
            return (
                [],
                [
                    Finding(
                        "witness_missing",
                        f"the store's host signs checkpoints "
                        f"({key_file.name} exists) but {where} holds none: pass "
                        "--witness where they are kept, or they were deleted",
                    )
                ],
                origin,
            )
        return [], [], origin
    verifier = host_verifier(store, key)
    if verifier is None:
        raise UsageError(f"no verifier key at {key_file}: pass --key with the host's verifier key")
    found, problems = [], []
    for path in paths:
        try:
            found.append((path.name, witness.read(path, verifier)))
        except OSError as error:
            if checkpoint:
                raise UsageError(str(error)) from None
            problems.append(
                Finding(
                    "checkpoint_signature",
                    f"{error}: a checkpoint in the "
                    "witness that its host did not sign (forged or changed)",
                )
            )
    return found, problems, origin


def host_verifier(store: Store, key: Path | None) -> Verifier | None:
    """The host's verifier key: `--key`, else `<db>.checkpoint.pub` if there is one (a
    store no host has signed for has none: None). A key named or present but unreadable
    is a usage error (exit 2)."""
    key_file = key or witness.public_key_path(store.path)
    if key is None and not key_file.exists():
        return None
    try:
        return witness.load_verifier(key_file)
    except OSError as error:
        raise UsageError(f"{error}: pass --key with the host's verifier key") from None


def base_checkpoint(
    store: Store, given: str, key: Path | None, folder: str | None
) -> tuple[str, Checkpoint]:
    """(name, checkpoint) of the checkpoint an audit takes up from: a file, or the name of
    one in the witness folder (as an audit report names it), whose signature holds. Any
    other file is a usage error (exit 2): an audit never builds on what it cannot trust."""
    where = witness.witness_dir(store.path, folder)
    path = Path(given)
    if not given.strip():
        raise UsageError("--from-checkpoint is blank: name the checkpoint a clean audit covered")
    if not path.is_file() and Path(given).name == given and (where / given).is_file():
        path = where / given
    if not path.is_file():
        raise UsageError(f"no checkpoint file at {given} (nor in the witness folder {where})")
    key_file = key or witness.public_key_path(store.path)
    try:
        return path.name, witness.read(path, witness.load_verifier(key_file))
    except OSError as error:
        raise UsageError(
            f"{error}: an audit from a checkpoint needs one its host signed "
            "(pass --key with the host's verifier key)"
        ) from None
