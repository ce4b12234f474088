"""Canonical JSON: the one serialisation that is hashed (config ids, event chains, GM log)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

ZERO_HASH = "0" * 64


def canonical_json(value: Any) -> str:
    """Sorted keys, compact separators, UTF-8 text: equal values give equal bytes."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def pretty_json(value: Any) -> str:
    """The JSON the console prints (`--json`): indented, non-ASCII kept, one final newline.
    An exported report is this text exactly, so `gmtool verify` can tell it was edited."""
    return json.dumps(value, ensure_ascii=False, indent=2) + "\n"


def chain_hash(prev_hash: str, record: Any) -> str:
    """`sha256(prev_hash + canonical_json(record))`, the link of every hash chain."""
    return hashlib.sha256((prev_hash + canonical_json(record)).encode("utf-8")).hexdigest()
