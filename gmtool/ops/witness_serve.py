"""What `gmtool witness serve` needs before it listens: where, its key, the logs it
witnesses and its state folder, each refused in plain words (exit 2) when unusable."""

from __future__ import annotations

import os
from pathlib import Path

from gmtool.errors import UsageError
from gmtool.evidence import witness
from gmtool.evidence.cosign import Cosigner
from gmtool.evidence.note import NoteError
from gmtool.evidence.tlog_witness import TlogWitness


def parse_listen(listen: str) -> tuple[str, int]:
    host, sep, port = listen.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isascii() or not port.isdigit() or int(port) > 65535:
        raise UsageError(f"--listen {listen!r} is not HOST:PORT (127.0.0.1:8080; port 0: any)")
    return host, int(port)


def open_witness(
    state: Path, key: Path, logs: list[Path], name: str
) -> tuple[TlogWitness, Path | None]:
    """The witness ready to serve, and the verifier key file it made (None: the key
    existed)."""
    verifiers = []
    for log in logs:
        try:
            verifiers.append(witness.load_verifier(log))
        except OSError as error:
            raise UsageError(f"--log: {error}") from None
    if state.exists() and not state.is_dir():
        raise UsageError(f"--state {state} is not a folder")
    place = state if state.exists() else state.parent
    if not place.is_dir():
        raise UsageError(f"--state {state}: its folder {state.parent} does not exist")
    if not os.access(place, os.W_OK | os.X_OK):
        raise UsageError(f"--state {state}: this user may not write there")
    if not key.exists() and not key.parent.is_dir():
        raise UsageError(f"--key {key}: its folder {key.parent} does not exist")
    cosigner, made = _key(key, name)  # (checked first: a refusal makes nothing)
    if not state.exists():
        try:
            state.mkdir(mode=0o700)
        except OSError as error:
            raise UsageError(f"--state {state}: cannot make it: {error.strerror}") from None
    return TlogWitness(state, cosigner, verifiers), made


def _key(path: Path, name: str) -> tuple[Cosigner, Path | None]:
    public = path.with_name(path.name + ".pub")
    if path.exists():
        try:
            return Cosigner.parse(witness.read_text(path, "ascii")), None
        except (OSError, NoteError) as error:
            raise UsageError(f"--key {path}: not a witness's signing key ({error})") from None
    try:
        cosigner = Cosigner.generate(name)
    except NoteError as error:
        raise UsageError(f"--name: {error}") from None
    try:
        witness.write_private(path, cosigner.text() + "\n")
        witness.write_private(public, cosigner.key.text() + "\n")
    except OSError as error:
        raise UsageError(f"--key {path}: cannot write it: {error.strerror}") from None
    return cosigner, public
