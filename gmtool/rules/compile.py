"""Compilation: a validated profile to canonical engine configuration with a content id.

The compiled form resolves every default, expands the deck strings into card lists and
is serialised as canonical JSON (sorted keys, compact separators, UTF-8). `config_id` is
the sha256 of that JSON without `config_id` itself, so comments, whitespace and key
order in the TOML never change it and any change of value always does.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from gmtool.canonical import canonical_json
from gmtool.errors import FindingError
from gmtool.rules import schema
from gmtool.rules.deckspec import parse_ranks, parse_suits
from gmtool.rules.findings import Finding
from gmtool.rules.schema import Context, Field
from gmtool.rules.validate import (
    ProfileFileError,
    context_of,
    parse_toml,
    read_profile_bytes,
    validate_bytes,
    validate_text,
)


class InvalidProfile(FindingError):
    """A profile with errors cannot be compiled; `findings` says why."""

    def __init__(self, findings: list[Finding]) -> None:
        self.findings = findings
        errors = [f for f in findings if f.severity == "error"]
        super().__init__(
            f"invalid profile, {len(errors)} error(s):\n"
            + "\n".join(f"  {error}" for error in errors)
        )


def config_id_of(compiled: dict[str, Any]) -> str:
    body = {k: v for k, v in compiled.items() if k != "config_id"}
    return hashlib.sha256(canonical_json(body).encode("utf-8")).hexdigest()


def compile_text(text: str, file: str = "<profile>") -> dict[str, Any]:
    """Validate and compile one profile text; raises InvalidProfile on any error."""
    findings = validate_text(text, file)
    if any(f.severity == "error" for f in findings):
        raise InvalidProfile(findings)
    return compile_data(parse_toml(text))


def compile_file(path: str | Path) -> dict[str, Any]:
    """Read, validate and compile one profile file."""
    path = Path(path)
    if not path.exists():
        raise ProfileFileError(f"no such profile file: {path}")
    raw = read_profile_bytes(path)  # once: a file that changes meanwhile compiles as checked
    findings = validate_bytes(raw, str(path))
    if any(f.severity == "error" for f in findings):
        raise InvalidProfile(findings)
    return compile_data(parse_toml(raw.decode("utf-8")))


def compile_data(data: dict[str, Any]) -> dict[str, Any]:
    """Compile parsed, already validated profile data."""
    ctx = context_of(data)
    compiled: dict[str, Any] = {"schema_version": schema.SCHEMA_VERSION, "game": ctx.game}
    for name, spec in schema.ROOT.fields.items():
        if name == "tiers":
            continue
        if not spec.applies(ctx) or (spec.optional_table and name not in data):
            compiled[name] = None
            continue
        compiled[name] = _resolve_table(spec, data.get(name, {}), ctx)
    compiled["tiers"] = [_resolve_table(schema.TIER, tier, ctx) for tier in data["tiers"]]
    if all(tier["coins"] for tier in compiled["tiers"]):
        compiled["scoring"] = None  # scores count only in training rooms (S22)
    ranks = parse_ranks(compiled["deck"]["ranks"])
    suits = parse_suits(compiled["deck"]["suits"])
    compiled["deck"] = {
        "ranks": ranks,
        "suits": suits,
        "cards": [rank + suit for rank in ranks for suit in suits],
    }
    compiled["config_id"] = config_id_of(compiled)
    return compiled


def _resolve_table(spec: Field, table: dict[str, Any], ctx: Context) -> dict[str, Any]:
    resolved: dict[str, Any] = {}
    for key, child in spec.fields.items():
        if not child.applies(ctx):
            continue
        if key in table:
            value = table[key]
            if child.kind == "table":
                value = _resolve_table(child, value, ctx)
            elif child.kind == "array" and child.items is not None and child.items.kind == "table":
                value = [_resolve_table(child.items, item, ctx) for item in value]
        elif child.kind == "table":
            value = _resolve_table(child, {}, ctx)
        else:
            value = child.default.resolve(ctx, table) if child.default else None
        resolved[key] = value
    return resolved
