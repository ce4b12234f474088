"""An independent check of an exported dispute report: RFC 9162 inclusion proofs and the
C2SP signed-note checkpoint, written from the two specifications with no gmtool code
(only the standard library and the `cryptography` package's Ed25519).

    python tests/independent_verifier.py REPORT.json HOST.pub

Checks: the checkpoint's Ed25519 signature under the verifier key (key id included),
every record's inclusion in the signed tree, that the hand's start and end records are
among them, that sha256(seed) is the commitment, and that the stored events' hash chain
reaches each batch's logged head.
"""

from __future__ import annotations

import base64
import hashlib
import json
import sys

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey


def _sha(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def open_checkpoint(note: str, vkey: str) -> tuple[str, int, bytes]:
    """(origin, size, root) of a checkpoint signed by `vkey` (NAME+HEXID+BASE64)."""
    name, key_id, encoded = vkey.strip().split("+", 2)
    raw = base64.b64decode(encoded)
    assert raw[0] == 1 and len(raw) == 33, "not an Ed25519 verifier key"
    public = raw[1:]
    assert _sha(name.encode() + b"\n" + raw)[:4].hex() == key_id, "key id mismatch"
    body, signatures = note.split("\n\n", 1)
    text = body + "\n"
    for line in signatures.splitlines():
        dash, signer, blob = line.split(" ")
        assert dash == "\u2014"
        sig = base64.b64decode(blob)
        if signer == name and sig[:4].hex() == key_id:
            try:
                Ed25519PublicKey.from_public_bytes(public).verify(sig[4:], text.encode())
            except InvalidSignature:
                raise AssertionError("bad checkpoint signature") from None
            origin, size, root = body.split("\n")[:3]
            return origin, int(size), base64.b64decode(root)
    raise AssertionError("no signature by the verifier key")


def included(leaf_data: bytes, index: int, size: int, path: list[bytes], root: bytes) -> bool:
    """RFC 9162 section 2.1.3.2, step by step."""
    if index >= size:
        return False
    fn, sn = index, size - 1
    r = _sha(b"\x00" + leaf_data)
    for p in path:
        if sn == 0:
            return False
        if fn % 2 == 1 or fn == sn:
            r = _sha(b"\x01" + p + r)
            if fn % 2 == 0:
                while fn % 2 == 0 and fn != 0:
                    fn //= 2
                    sn //= 2
        else:
            r = _sha(b"\x01" + r + p)
        fn //= 2
        sn //= 2
    return sn == 0 and r == root


def _event_hash(event: dict) -> str:
    """sha256(prev_hash + canonical JSON of the event record), payload kept as stored."""

    def text(value: str) -> str:
        return json.dumps(value, ensure_ascii=False)

    hand = "null" if event["hand_id"] is None else str(event["hand_id"])
    record = (
        f'{{"at":{text(event["created_at"])},"hand":{hand},"payload":'
        f'{event["payload"]},"seq":{event["seq"]},"table":{text(event["table_id"])},'
        f'"type":{text(event["type"])}}}'
    )
    return hashlib.sha256((event["prev_hash"] + record).encode()).hexdigest()


def verify(report: dict, vkey: str) -> list[str]:
    problems = []
    proof = report["proof"]
    _, size, root = open_checkpoint(proof["checkpoint"], vkey)
    bodies = []
    for record in proof["records"]:
        path = [bytes.fromhex(h) for h in record["proof"]]
        if not included(record["body"].encode(), record["index"], size, path, root):
            problems.append(f"record {record['index']} not included")
        bodies.append(json.loads(record["body"]))
    start = [b for b in bodies if b["kind"] == "hand" and b["id"] == report["hand"]]
    end = [b for b in bodies if b["kind"] == "hand_end" and b["id"] == report["hand"]]
    if len(start) != 1 or len(end) != 1:
        return problems + ["the hand's start or end is not proven"]
    if end[0]["seed"] != report["seed"] or start[0]["commitment"] != report["commitment"]:
        problems.append("seed or commitment differ from the proven records")
    if hashlib.sha256(bytes.fromhex(end[0]["seed"])).hexdigest() != start[0]["commitment"]:
        problems.append("the seed does not open the commitment")
    hashes = {}
    for event in proof["events"]:
        if _event_hash(event) != event["hash"]:
            problems.append(f"event {event['seq']} does not match its hash")
        hashes[event["seq"]] = event["hash"]
    for batch in (b for b in bodies if b["kind"] == "events"):
        if hashes.get(batch["last"]) != batch["head"]:
            problems.append(f"events up to {batch['last']} are not the logged ones")
    return problems


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as handle:
        found = verify(json.load(handle), open(sys.argv[2], encoding="ascii").read())
    print("\n".join(found) or "ok")
    sys.exit(1 if found else 0)
