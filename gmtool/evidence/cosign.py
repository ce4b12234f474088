"""Witness cosignatures in the C2SP `tlog-cosignature` format (cosignature/v1, Ed25519).

A witness that checked a checkpoint's consistency with the last one it saw cosigns it: a
note signature line `— NAME base64(key id || timestamp || signature)`, the timestamp a
big-endian u64 of POSIX seconds and the Ed25519 signature over `cosignature/v1\\n`,
`time T\\n` and the checkpoint's text. Its keys are written as the signed-note keys of
note.py with the algorithm byte 0x04 (so a cosigner key is never taken for a log key):
`NAME+KEYID+base64(0x04 || public key)`, and `PRIVATE+KEY+NAME+KEYID+base64(0x04 ||
seed)` to sign. The signature primitive is the `cryptography` package's Ed25519.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)

from gmtool.evidence.note import DASH, NoteError, _b64decode, _check_name

COSIGNATURE = b"\x04"
_RAW = (serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def message(text: str, timestamp: int) -> bytes:
    """What a cosignature/v1 signs: the header, the time and the checkpoint's text."""
    return f"cosignature/v1\ntime {timestamp}\n{text}".encode()


def _key_id(name: str, public: bytes) -> bytes:
    return hashlib.sha256(name.encode() + b"\n" + COSIGNATURE + public).digest()[:4]


@dataclass(frozen=True)
class CosignerKey:
    """A witness's verifier key: checks its cosignatures."""

    name: str
    public: bytes

    @property
    def id(self) -> bytes:
        return _key_id(self.name, self.public)

    def text(self) -> str:
        encoded = base64.b64encode(COSIGNATURE + self.public).decode()
        return f"{self.name}+{self.id.hex()}+{encoded}"

    @classmethod
    def parse(cls, text: str) -> CosignerKey:
        parts = text.strip().split("+", 2)
        if len(parts) != 3:
            raise NoteError("a witness key is NAME+KEYID+KEY")
        name, hex_id, encoded = parts
        _check_name(name)
        raw = _b64decode(encoded, "the witness key")
        if len(raw) != 33 or raw[:1] != COSIGNATURE:
            raise NoteError(
                "not a witness's cosignature key (an Ed25519 cosigner key, type 0x04): "
                "a witness prints it when it starts, and writes it into KEY.pub"
            )
        key = cls(name, raw[1:])
        if hex_id != key.id.hex():
            raise NoteError(f"the witness key's id {hex_id} does not match its key")
        return key

    def timestamp(self, text: str, line: str) -> int | None:
        """The time of this key's cosignature `line` over the checkpoint `text`; None when
        the line is another key's; NoteError when it is this key's and does not verify."""
        dash, _, rest = line.partition(" ")
        name, _, blob = rest.partition(" ")
        if dash != DASH or name != self.name:
            return None
        raw = _b64decode(blob, "a cosignature")
        if raw[:4] != self.id:
            return None
        if len(raw) != 4 + 8 + 64:
            raise NoteError(f"the cosignature of {name} is not a cosignature/v1")
        timestamp = int.from_bytes(raw[4:12], "big")
        try:
            Ed25519PublicKey.from_public_bytes(self.public).verify(
                raw[12:], message(text, timestamp)
            )
        except InvalidSignature:
            raise NoteError(
                f"the cosignature of {name} does not verify (the checkpoint was changed)"
            ) from None
        return timestamp

    def cosigned(self, note: str) -> int | None:
        """When this key cosigned the signed note `note` (its newest cosignature there);
        None when it did not; NoteError when its cosignature there does not verify."""
        text, sep, signatures = note.rpartition("\n\n")
        if not sep:
            raise NoteError("not a signed note (no blank line before the signatures)")
        times = [
            found
            for line in signatures.splitlines()
            if (found := self.timestamp(text + "\n", line)) is not None
        ]
        return max(times) if times else None


@dataclass(frozen=True)
class Cosigner:
    """A witness's signing key."""

    name: str
    seed: bytes

    @classmethod
    def generate(cls, name: str) -> Cosigner:
        _check_name(name)
        return cls(name, Ed25519PrivateKey.generate().private_bytes_raw())

    @property
    def key(self) -> CosignerKey:
        private = Ed25519PrivateKey.from_private_bytes(self.seed)
        return CosignerKey(self.name, private.public_key().public_bytes(*_RAW))

    def text(self) -> str:
        seed = base64.b64encode(COSIGNATURE + self.seed).decode()
        return f"PRIVATE+KEY+{self.name}+{self.key.id.hex()}+{seed}"

    @classmethod
    def parse(cls, text: str) -> Cosigner:
        parts = text.strip().split("+", 4)
        if len(parts) != 5 or parts[:2] != ["PRIVATE", "KEY"]:
            raise NoteError("a witness's signing key is PRIVATE+KEY+NAME+KEYID+KEY")
        name, hex_id, encoded = parts[2:]
        _check_name(name)
        raw = _b64decode(encoded, "the witness's signing key")
        if len(raw) != 33 or raw[:1] != COSIGNATURE:
            raise NoteError("not a witness's signing key (an Ed25519 cosigner key, type 0x04)")
        signer = cls(name, raw[1:])
        if hex_id != signer.key.id.hex():
            raise NoteError(f"the witness's signing key's id {hex_id} does not match its key")
        return signer

    def cosign(self, text: str, timestamp: int) -> str:
        """The cosignature line (ending with a newline) over the checkpoint `text`."""
        signature = Ed25519PrivateKey.from_private_bytes(self.seed).sign(message(text, timestamp))
        stamp = timestamp.to_bytes(8, "big")
        blob = base64.b64encode(self.key.id + stamp + signature).decode()
        return f"{DASH} {self.name} {blob}\n"
