"""A witness that cosigns checkpoints (C2SP tlog-witness), as `gmtool witness serve` runs it.

The witness knows the logs it witnesses (their origins and the host's verifier keys) and
keeps, per log, the latest checkpoint it cosigned, in its own state folder: one file per
origin, written whole (and synced) before it answers. `add_checkpoint` is the protocol's
one call: a body of `old N`, the consistency proof's lines, a blank line and the signed
checkpoint; the checkpoint is cosigned only if its log's key signed it, N is the size the
witness holds, and the proof shows the new tree extends the one it holds. Otherwise the
answer is the protocol's: 400 (malformed), 403 (not signed by the log's key), 404 (a log
it does not witness), 409 with the size it holds (`text/x.tlog.size`: the client retries
from there), 422 (the proof does not verify: someone rewrote history). `latest` serves
the cosigned checkpoint it holds to an auditor (`GET /checkpoint/ORIGIN`: the monitor
retrieval the protocol leaves open). Checking and saving are one step under a lock, so
two submissions can never roll the witness back.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import threading
from dataclasses import dataclass
from pathlib import Path

from gmtool.evidence import witness
from gmtool.evidence.cosign import Cosigner
from gmtool.evidence.merkle import verify_consistency
from gmtool.evidence.note import Checkpoint, NoteError, Verifier, open_note

MAX_BODY = 64 * 1024  # a checkpoint, 63 proof lines and a few signatures fit many times over
MAX_PROOF = 63
SIZE_TYPE = "text/x.tlog.size"
TEXT = "text/plain; charset=utf-8"


@dataclass(frozen=True)
class Reply:
    status: int
    body: str
    content_type: str = TEXT


class BadRequest(ValueError):
    pass


def request_body(old: int, proof: list[bytes], note: str) -> bytes:
    """An add-checkpoint request body."""
    lines = [f"old {old}", *(base64.b64encode(p).decode() for p in proof)]
    return ("\n".join(lines) + "\n\n" + note).encode()


def parse_request(body: bytes) -> tuple[int, list[bytes], str]:
    """(old size, consistency proof, signed note) of an add-checkpoint body."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise BadRequest("the body is not UTF-8 text") from None
    head, sep, note = text.partition("\n\n")
    if not sep or not note:
        raise BadRequest("the body is `old N`, proof lines, a blank line and a checkpoint")
    first, *proof_lines = head.split("\n")
    word, _, number = first.partition(" ")
    if word != "old" or not number.isascii() or not number.isdigit() or len(number) > 19:
        raise BadRequest("the first line is `old N`")
    if number != "0" and number.startswith("0"):
        raise BadRequest("the old size has leading zeroes")
    if len(proof_lines) > MAX_PROOF:
        raise BadRequest(f"more than {MAX_PROOF} proof lines")
    proof = []
    for line in proof_lines:
        try:
            digest = base64.b64decode(line, validate=True)
        except (binascii.Error, ValueError):
            raise BadRequest("a proof line is not base64") from None
        if len(digest) != 32:
            raise BadRequest("a proof line is not a SHA-256 hash")
        proof.append(digest)
    return int(number), proof, note


def checkpoint_text(note: str) -> str:
    text, sep, _ = note.rpartition("\n\n")
    if not sep:
        raise BadRequest("the checkpoint is not a signed note")
    return text + "\n"


class TlogWitness:
    """The witness's state and its one decision (module docstring)."""

    def __init__(self, state: Path, cosigner: Cosigner, logs: list[Verifier]) -> None:
        self.state = state
        self.cosigner = cosigner
        self.logs = {log.name: log for log in logs}
        self._lock = threading.Lock()

    def _path(self, origin: str) -> Path:
        return self.state / f"{hashlib.sha256(origin.encode()).hexdigest()[:32]}.checkpoint"

    def latest(self, origin: str) -> str | None:
        """The cosigned checkpoint held for `origin` (None: none, or not a log it knows)."""
        path = self._path(origin)
        if origin not in self.logs or not path.exists():
            return None
        return witness.read_text(path)

    def _held(self, origin: str) -> Checkpoint | None:
        note = self.latest(origin)
        if note is None:
            return None
        return Checkpoint.parse(checkpoint_text(note))

    def add_checkpoint(self, body: bytes, now: int) -> Reply:
        try:
            old, proof, note = parse_request(body)
            checkpoint = Checkpoint.parse(checkpoint_text(note))
        except (BadRequest, NoteError) as error:
            return Reply(400, f"{error}\n")
        log = self.logs.get(checkpoint.origin)
        if log is None:
            return Reply(404, "this witness does not witness that log\n")
        try:
            open_note(note, [log])
        except NoteError as error:
            return Reply(403, f"not signed by the log's key: {error}\n")
        if old > checkpoint.size:
            return Reply(400, "the old size is larger than the checkpoint's\n")
        with self._lock:
            held = self._held(checkpoint.origin)
            size = held.size if held else 0
            if old != size:
                return Reply(409, f"{size}\n", SIZE_TYPE)
            if old == 0 or old == checkpoint.size:
                if proof:
                    return Reply(400, "no proof is sent from size 0 or to the same size\n")
                if held is not None and old == checkpoint.size and held.root != checkpoint.root:
                    return Reply(409, f"{size}\n", SIZE_TYPE)
            elif held is None or not verify_consistency(
                old, checkpoint.size, held.root, checkpoint.root, proof
            ):
                return Reply(422, "the consistency proof does not verify\n")
            line = self.cosigner.cosign(checkpoint_text(note), now)
            signed = note if note.endswith("\n") else note + "\n"
            witness.write_private(self._path(checkpoint.origin), signed + line)
        return Reply(200, line)
