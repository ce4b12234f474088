"""JSON Schema of the profile format, generated from the schema table.

Editors (taplo, Even Better TOML) read it through the `#:schema` line at the top of each
profile. What depends on the game or the betting style (a capped tier needs street caps,
a three-card tier its follow tables; `set_ante_s` exists only at an owner table) is
stated as `if`/`then`/`else` on the whole profile, so a standard validator accepts every
valid profile and refuses a key that does not apply. Checks that relate values to each
other (RULES Q5, H5) remain `gmtool rules validate`'s job.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gmtool.rules import schema
from gmtool.rules.schema import Field

SCHEMA_ID = "https://gmtool.invalid/profile.schema.json"


def profile_json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a rule profile."""
    root = _field(schema.ROOT)
    conditions = list(_conditions(schema.ROOT, ()))
    if conditions:
        root["allOf"] = conditions
    root["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    root["$id"] = SCHEMA_ID
    root["title"] = "gmtool rule profile"
    return root


def _conditions(spec: Field, where: tuple[str, ...]) -> Iterator[dict[str, Any]]:
    """`if`/`then`/`else` on the whole profile for every key whose presence depends on the
    game or style: required where it applies (if it is required), absent elsewhere.
    `where` is the path to `spec`: property names, and "[]" for an array's items."""
    for name, child in spec.fields.items():
        when = child.when
        required_when = child.required_when or (when if child.required else None)
        if when.json is not None:
            rule: dict[str, Any] = {
                "if": when.json,
                "else": _at(where, {"properties": {name: False}}),
            }
            if required_when is when:
                rule["then"] = _at(where, {"required": [name]})
            yield rule
        if (
            required_when is not None
            and required_when is not when
            and required_when.json is not None
        ):
            yield {"if": required_when.json, "then": _at(where, {"required": [name]})}
        if child.kind == "table":
            yield from _conditions(child, (*where, name))
        elif child.kind == "array" and child.items is not None and child.items.kind == "table":
            yield from _conditions(child.items, (*where, name, "[]"))


def _at(where: tuple[str, ...], inner: dict[str, Any]) -> dict[str, Any]:
    """`inner` placed at the object `where` points to, from the profile's root."""
    for step in reversed(where):
        inner = {"items": inner} if step == "[]" else {"properties": {step: inner}}
    return inner


def _field(spec: Field) -> dict[str, Any]:
    out: dict[str, Any] = {}
    description = _description(spec)
    if description:
        out["description"] = description
    if spec.kind == "table":
        out["type"] = "object"
        out["additionalProperties"] = False
        out["properties"] = {name: _field(child) for name, child in spec.fields.items()}
        required = [
            name
            for name, child in spec.fields.items()
            if child.required and child.when.json is None
        ]
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
