"""Findings placed where they are: each at its key's line and column in the profile text.

The validator and the semantic checks (`rules/checks.py`) report through a `Collector`;
a finding's key path is shown the way people write it (`tiers.junior.hand_cap`).
"""

from __future__ import annotations

import json
import re
from typing import Any

from gmtool.rules import schema
from gmtool.rules.findings import Finding, profile_finding
from gmtool.rules.source import Path, Position, SourceMap


def display_path(path: Path, data: dict[str, Any]) -> str:
    """A dotted key path for people: tiers by their id where it is unique."""
    tiers = data.get("tiers") if isinstance(data, dict) else None
    out = ""
    for i, part in enumerate(path):
        if isinstance(part, int):
            tier_id = _tier_id(tiers, part) if path[:i] == ("tiers",) else None
            out += f".{tier_id}" if tier_id else f"[{part}]"
        else:
            part = _key_words(part)
            out += f".{part}" if out else part
    return out


def _key_words(key: str) -> str:
    """A key as TOML writes it in a dotted path: quoted unless bare ("a.b" stays one key)."""
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key, ensure_ascii=False)


def _tier_id(tiers: Any, index: int) -> str | None:
    if not isinstance(tiers, list) or index >= len(tiers) or not isinstance(tiers[index], dict):
        return None
    tier_id = tiers[index].get("id")
    ids = [t.get("id") for t in tiers if isinstance(t, dict)]
    if (
        isinstance(tier_id, str)
        and re.match(schema.ID_PATTERN, tier_id)
        and ids.count(tier_id) == 1
    ):
        return tier_id
    return None


class Collector:
    """Accumulates findings for one document, placing each at its key's position."""

    def __init__(self, file: str, data: dict[str, Any], text: str) -> None:
        self.file = file
        self.data = data
        self.text = text
        self._source: SourceMap | None = None
        self.findings: list[Finding] = []

    @property
    def source(self) -> SourceMap:
        """Built on the first finding only: a clean profile never pays for the scan."""
        if self._source is None:
            self._source = SourceMap(self.text)
        return self._source

    def add(self, path: Path, code: str, message: str, at: Position | None = None) -> None:
        line, column = at or self.source.find(path)
        self.findings.append(
            profile_finding(self.file, line, column, display_path(path, self.data), code, message)
        )
