"""Signed notes and checkpoints in the C2SP formats (c2sp.org/signed-note,
c2sp.org/tlog-checkpoint), the ones Go's sumdb, sigsum and the transparency-dev tools
read, so a checkpoint gmtool signs can be checked without gmtool.

A checkpoint's text is three lines (origin, tree size, base64 root hash) and optional
extension lines; the signed note adds a blank line and one line per signature:
`— NAME base64(key id || Ed25519 signature)`. Keys are written as Go writes them:
`NAME+KEYID+base64(0x01 || public key)` to verify, `PRIVATE+KEY+NAME+KEYID+base64(0x01 ||
seed)` to sign, the key id being the first four bytes of SHA-256(NAME || "\\n" || 0x01 ||
public key). The signature primitive is the `cryptography` package's Ed25519.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from dataclasses import dataclass

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)

ED25519 = b"\x01"
DASH = "\u2014"  # the em dash that starts every signature line
_RAW = (serialization.Encoding.Raw, serialization.PublicFormat.Raw)


class NoteError(ValueError):
    """A malformed key or note, or a signature that does not verify."""


def _b64decode(text: str, what: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise NoteError(f"{what} is not base64") from None


def _check_name(name: str) -> None:
    if not name or any(c.isspace() or c == "+" for c in name):
        raise NoteError(f"a key name may not be empty or contain spaces or '+': {name!r}")


def key_id(name: str, public: bytes) -> bytes:
    return hashlib.sha256(name.encode() + b"\n" + ED25519 + public).digest()[:4]


@dataclass(frozen=True)
class Verifier:
    name: str
    public: bytes

    @property
    def id(self) -> bytes:
        return key_id(self.name, self.public)

    def text(self) -> str:
        return f"{self.name}+{self.id.hex()}+{base64.b64encode(ED25519 + self.public).decode()}"

    def verify(self, message: bytes, signature: bytes) -> bool:
        try:
            Ed25519PublicKey.from_public_bytes(self.public).verify(signature, message)
        except InvalidSignature:
            return False
        return True

    @classmethod
    def parse(cls, text: str) -> Verifier:
        parts = text.strip().split("+", 2)  # base64 may hold '+' too
        if len(parts) != 3:
            raise NoteError("a verifier key is NAME+KEYID+KEY")
        name, hex_id, encoded = parts
        _check_name(name)
        raw = _b64decode(encoded, "the verifier key")
        if len(raw) != 33 or raw[:1] != ED25519:
            raise NoteError("the verifier key is not an Ed25519 key")
        verifier = cls(name, raw[1:])
        if hex_id != verifier.id.hex():
            raise NoteError(f"the verifier key's id {hex_id} does not match its key")
        return verifier


@dataclass(frozen=True)
class Signer:
    name: str
    seed: bytes

    @classmethod
    def generate(cls, name: str) -> Signer:
        _check_name(name)
        return cls(name, Ed25519PrivateKey.generate().private_bytes_raw())

    @property
    def verifier(self) -> Verifier:
        key = Ed25519PrivateKey.from_private_bytes(self.seed)
        return Verifier(self.name, key.public_key().public_bytes(*_RAW))

    def sign(self, message: bytes) -> bytes:
        return Ed25519PrivateKey.from_private_bytes(self.seed).sign(message)

    def text(self) -> str:
        seed = base64.b64encode(ED25519 + self.seed).decode()
        return f"PRIVATE+KEY+{self.name}+{self.verifier.id.hex()}+{seed}"

    @classmethod
    def parse(cls, text: str) -> Signer:
        parts = text.strip().split("+", 4)
        if len(parts) != 5 or parts[:2] != ["PRIVATE", "KEY"]:
            raise NoteError("a signer key is PRIVATE+KEY+NAME+KEYID+KEY")
        name, hex_id, encoded = parts[2:]
        _check_name(name)
        raw = _b64decode(encoded, "the signer key")
        if len(raw) != 33 or raw[:1] != ED25519:
            raise NoteError("the signer key is not an Ed25519 key")
        signer = cls(name, raw[1:])
        if hex_id != signer.verifier.id.hex():
            raise NoteError(f"the signer key's id {hex_id} does not match its key")
        return signer


def sign(text: str, signer: Signer) -> str:
    """The signed note of `text` (which ends with a newline)."""
    if not text.endswith("\n") or "\n\n" in text:
        raise NoteError("a note's text ends with one newline and has no blank line")
    blob = base64.b64encode(signer.verifier.id + signer.sign(text.encode())).decode()
    return f"{text}\n{DASH} {signer.name} {blob}\n"


def signer_names(note: str) -> list[str]:
    """The key names on a signed note's signature lines, in order (none: not a note)."""
    _, sep, signatures = note.rpartition("\n\n")
    names = []
    for line in signatures.split("\n") if sep else []:
        dash, _, rest = line.partition(" ")
        name = rest.partition(" ")[0]
        if dash == DASH and name and name not in names:
            names.append(name)
    return names


def open_note(note: str, verifiers: list[Verifier]) -> tuple[str, list[Verifier]]:
    """The note's text and the known verifiers whose signature on it holds; NoteError when
    it is malformed, a known key's signature fails, or no known key signed it."""
    text, sep, signatures = note.rpartition("\n\n")
    if not sep or not signatures.endswith("\n"):
        raise NoteError("not a signed note (no blank line before the signatures)")
    text += "\n"
    known = {(v.name, v.id): v for v in verifiers}
    good = []
    for line in signatures[:-1].split("\n"):
        dash, _, rest = line.partition(" ")
        name, _, blob = rest.partition(" ")
        if dash != DASH or not name or not blob or " " in blob:
            raise NoteError(f"malformed signature line: {line[:80]!r}")
        raw = _b64decode(blob, "a signature")
        if len(raw) < 5:
            raise NoteError("a signature is too short")
        verifier = known.get((name, raw[:4]))
        if verifier is None:
            continue  # someone else's signature (a witness's, say): not ours to judge
        if not verifier.verify(text.encode(), raw[4:]):
            raise NoteError(f"the signature of {name} does not verify (the note was changed)")
        good.append(verifier)
    if not good:
        names = ", ".join(v.name for v in verifiers) or "none"
        raise NoteError(f"the note is not signed by a known key (known: {names})")
    return text, good


@dataclass(frozen=True)
class Checkpoint:
    """A signed statement: the log called `origin` had `size` records with this `root`."""

    origin: str
    size: int
    root: bytes
    extensions: tuple[str, ...] = ()

    def text(self) -> str:
        lines = [
            self.origin,
            str(self.size),
            base64.b64encode(self.root).decode(),
            *self.extensions,
        ]
        return "\n".join(lines) + "\n"

    @classmethod
    def parse(cls, text: str) -> Checkpoint:
        lines = text.split("\n")
        if len(lines) < 4 or lines[-1] != "" or any(not line for line in lines[:-1]):
            raise NoteError("a checkpoint is an origin, a size and a root hash, one a line")
        origin, size, root, *extensions = lines[:-1]
        if not size.isascii() or not size.isdigit() or (size != "0" and size.startswith("0")):
            raise NoteError(f"the checkpoint's size {size[:30]!r} is not a number")
        digest = _b64decode(root, "the checkpoint's root hash")
        if len(digest) != 32:
            raise NoteError("the checkpoint's root hash is not 32 bytes")
        return cls(origin, int(size), digest, tuple(extensions))


def sign_checkpoint(checkpoint: Checkpoint, signer: Signer) -> str:
    return sign(checkpoint.text(), signer)


def checkpoint_shape(note: str) -> Checkpoint:
    """The checkpoint a note states, its signatures unchecked: NoteError when the note is
    not shaped as a signed checkpoint at all (a file that is no checkpoint)."""
    text, sep, signatures = note.rpartition("\n\n")
    if not sep or not signatures.endswith("\n"):
        raise NoteError("not a signed note (no blank line before the signatures)")
    for line in signatures[:-1].split("\n"):
        if not line.startswith(f"{DASH} "):
            raise NoteError(f"malformed signature line: {line[:80]!r}")
    return Checkpoint.parse(text + "\n")


def open_checkpoint(note: str, verifiers: list[Verifier]) -> Checkpoint:
    text, _ = open_note(note, verifiers)
    return Checkpoint.parse(text)
