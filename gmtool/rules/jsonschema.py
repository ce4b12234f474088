"""JSON Schema of the profile format, generated from the schema table.

Editors (taplo, Even Better TOML) read it through the `#:schema` line at the top of each
profile. Conditions that depend on the game or betting style are stated in each key's
description; the full checks are `gmtool rules validate`'s job.
"""

from __future__ import annotations

from typing import Any

from gmtool.rules import schema
from gmtool.rules.schema import Field

SCHEMA_ID = "https://gmtool.invalid/profile.schema.json"


def profile_json_schema() -> dict:
    """The JSON Schema (draft 2020-12) of a rule profile."""
    root = _field(schema.ROOT)
    root["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    root["$id"] = SCHEMA_ID
    root["title"] = "gmtool rule profile"
    return root


def _field(spec: Field) -> dict[str, Any]:
    out: dict[str, Any] = {}
    description = _description(spec)
    if description:
        out["description"] = description
    if spec.kind == "table":
        out["type"] = "object"
        out["additionalProperties"] = False
        out["properties"] = {name: _field(child) for name, child in spec.fields.items()}
        required = [name for name, child in spec.fields.items() if child.required]
        if required:
            out["required"] = required
    elif spec.kind == "array":
        out["type"] = "array"
        if spec.items is not None:
            out["items"] = _field(spec.items)
        if spec.min_items is not None:
            out["minItems"] = spec.min_items
        if spec.max_items is not None:
            out["maxItems"] = spec.max_items
    else:
        out["type"] = spec.kind
        if spec.choices:
            out["enum"] = list(spec.choices)
        if spec.pattern:
            out["pattern"] = spec.pattern
        if spec.minimum is not None:
            out["minimum"] = spec.minimum
        if spec.maximum is not None:
            out["maximum"] = spec.maximum
    return out


def _description(spec: Field) -> str:
    parts = [spec.doc] if spec.doc else []
    if spec.rule:
        parts.append(f"RULES {spec.rule}.")
    if spec.default is not None:
        parts.append(f"Default: {spec.default.doc}.")
    if spec.when.text:
        parts.append(f"Applies where {spec.when.text}.")
    return " ".join(parts)
