"""What a TOML "defined twice" error means, in the words of the file's keys.

tomllib stops at a key or table defined a second time with "Cannot overwrite a value" or
"Cannot declare ('table',) twice", at the end of the second definition. This module
finds, in the text up to that place, the definition that was refused and the earlier one
it clashes with: "duplicate key table.seats, first on line 7".
"""

from __future__ import annotations

from gmtool.rules.collector import display_path
from gmtool.rules.source import Definition, Path, Position, SourceMap

# The beginnings of tomllib's messages for a key or table defined twice.
REDEFINED = (
    "Cannot overwrite a value",
    "Cannot declare",
    "Cannot mutate immutable namespace",
    "Cannot redefine namespace",
    "Duplicate inline table key",
)


def redefinition(text: str, line: int, column: int) -> str | None:
    """Which definition tomllib refused at (`line`, `column`) and where the one it clashes
    with is; None if the text does not show one (tomllib's words then stand)."""
    cut = sum(len(part) + 1 for part in text.split("\n")[:line])
    defined = [d for d in SourceMap(text[:cut]).definitions if d.position <= Position(line, column)]
    if not defined or defined[-1].kind == "dotted":
        return None
    refused, earlier = defined[-1], defined[:-1]
    same = next((d for d in earlier if d.path == refused.path), None)
    if same is not None:
        return _twice(refused, same)
    holder = next((d for d in earlier if _holds(d, refused)), None)
    if holder is not None:
        return (
            f"{_shown(refused)}: {display_path(holder.path, {})} already holds a value "
            f"(line {holder.position.line})"
        )
    return None


def _twice(refused: Definition, first: Definition) -> str:
    line = first.position.line
    name = display_path(refused.path, {})
    if refused.kind == "table":
        if first.kind == "table":
            return f"duplicate table [{name}], first on line {line}"
        if first.kind == "dotted":
            return f"table [{name}] is already defined by the dotted key on line {line}"
        return f"table [{name}]: {name} already holds a value (line {line})"
    if first.kind in ("value", "inline"):
        return f"duplicate key {name}, first on line {line}"
    return f"key {name} is already a table (line {line})"


def _holds(earlier: Definition, refused: Definition) -> bool:
    """Whether `earlier` set a value at a path that `refused` would need as a table (an
    inline table is closed at the end of its line)."""
    path: Path = refused.path
    return (
        earlier.kind in ("value", "inline")
        and len(earlier.path) < len(path)
        and path[: len(earlier.path)] == earlier.path
        and (earlier.kind == "value" or refused.position.line > earlier.position.line)
    )


def _shown(definition: Definition) -> str:
    name = display_path(definition.path, {})
    return f"table [{name}]" if definition.kind == "table" else f"key {name}"
