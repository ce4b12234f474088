"""Safe in-place edits of a profile: one value changes, comments and layout stay.

`set_value` edits the text with tomlkit (the only place tomlkit is used: it is about
ten times slower than tomllib, and only an edit needs to keep the layout), validates
the result and refuses it, leaving the file untouched, if it has any error.
"""

from __future__ import annotations

import os
import re
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gmtool.errors import Refused, UsageError
from gmtool.rules.findings import Finding, profile_finding
from gmtool.rules.validate import (
    TOO_DEEP,
    ProfileFileError,
    parse_toml,
    read_profile_bytes,
    validate_text,
)

_PART = re.compile(r"^([A-Za-z0-9_-]+)((?:\[\d+\])*)$")


class KeyPathError(UsageError):
    """A KEY argument that does not name a place in the profile."""


class ValueTextError(UsageError):
    """A VALUE argument that is more than one TOML value (a value, a new line, `foo = 1`)."""


class InvalidEdit(Refused):
    """The edited profile would be invalid; the file was left unchanged."""

    def __init__(self, findings: list[Finding]) -> None:
        self.findings = findings
        super().__init__(f"refused: the result would have {len(findings)} error(s)")


@dataclass(frozen=True)
class Edit:
    """What `set_value` did: the key, the value before (None if absent) and after."""

    key: str
    old: Any
    new: Any
    text: str
    warnings: list[Finding]


def parse_value(text: str) -> Any:
    """A VALUE argument as one TOML value (`600`, `true`, `[1, 5]`, `"x"`), else, if it is
    one line, as a plain string. Nothing but a comment may follow the value: `20`, a new
    line and `foo = 1` would otherwise set 20 and silently drop the rest."""
    try:
        parsed = parse_toml(f"value = {text}")
    except tomllib.TOMLDecodeError:
        if "\n" not in text and "\r" not in text:
            return text
        parsed = {}
    if list(parsed) != ["value"]:
        raise ValueTextError(
            f"{text!r} is not one TOML value (nothing but a comment may "
            "follow the value); nothing was changed"
        )
    return parsed["value"]


def split_key(key: str) -> list[str | int]:
    """`tiers.junior.street_caps[2]` -> ["tiers", "junior", "street_caps", 2]."""
    parts: list[str | int] = []
    for piece in key.split("."):
        match = _PART.match(piece)
        if not match:
            raise KeyPathError(f"{key!r} is not a dotted key path (example: tiers.junior.hand_cap)")
        parts.append(match.group(1))
        parts.extend(int(i) for i in re.findall(r"\[(\d+)\]", match.group(2)))
    return parts


def set_value(text: str, key: str, value_text: str, file: str = "<profile>") -> Edit:
    """Set KEY to VALUE in the profile text; raises InvalidEdit if the result is invalid."""
    import tomlkit
    from tomlkit.exceptions import ParseError

    try:  # tomlkit refuses some text tomllib reads: nesting beyond 100 levels
        document = tomlkit.parse(text)
    except ParseError as error:
        message = re.sub(r" at line \d+ col \d+$", "", str(error))
        raise InvalidEdit(
            [profile_finding(file, error.line, error.col, "", "toml-syntax", message)]
        ) from None
    except RecursionError:
        raise InvalidEdit([profile_finding(file, 1, 1, "", "toml-syntax", TOO_DEEP)]) from None
    parts = split_key(key)
    container: Any = document
    for depth, part in enumerate(parts[:-1]):
        container = _step(container, part, parts[: depth + 1], key, create=True)
    last = parts[-1]
    value = parse_value(value_text)
    if isinstance(last, int):
        if not isinstance(container, list) or last >= len(container):
            raise KeyPathError(f"{key}: no element {last}")
        old = container[last]
    else:
        if not hasattr(container, "get"):
            raise KeyPathError(f"{key}: {'.'.join(map(str, parts[:-1]))} is not a table")
        old = container.get(last)
    try:  # tomlkit writes a value nested hundreds of levels deep recursively too
        container[last] = value
        new_text = tomlkit.dumps(document)
    except RecursionError:
        raise ValueTextError(f"{key}: the value is {TOO_DEEP}; nothing was changed") from None
    findings = validate_text(new_text, file)
    errors = [f for f in findings if f.severity == "error"]
    if errors:
        raise InvalidEdit(errors)
    unwrap = getattr(old, "unwrap", None)
    return Edit(
        key,
        unwrap() if unwrap else old,
        value,
        new_text,
        [f for f in findings if f.severity == "warning"],
    )


def set_values(text: str, values: dict[str, Any], file: str = "<profile>") -> str:
    """`set_value` for several keys given as values (`{"betting.raise_chips": [50, 100]}`),
    each edit checked in turn; the edited text."""
    import tomlkit

    for key, value in values.items():
        text = set_value(text, key, tomlkit.item(value).as_string(), file).text
    return text


def _step(container: Any, part: str | int, walked: list[str | int], key: str, create: bool) -> Any:
    import tomlkit

    if isinstance(container, list):
        if isinstance(part, int):
            if part < len(container):
                return container[part]
            raise KeyPathError(f"{key}: no element {part} in {'.'.join(map(str, walked[:-1]))}")
        for item in container:
            if hasattr(item, "get") and item.get("id") == part:
                return item
        ids = [str(item.get("id")) for item in container if hasattr(item, "get")]
        raise KeyPathError(f"{key}: no tier with id {part!r} (tiers: {', '.join(ids)})")
    if isinstance(part, int) or not hasattr(container, "get"):
        raise KeyPathError(f"{key}: {'.'.join(map(str, walked))} does not exist")
    if part not in container:
        if not create:
            raise KeyPathError(f"{key}: {part!r} does not exist")
        container[part] = tomlkit.table()
    return container[part]


def set_in_file(path: Path, key: str, value_text: str) -> Edit:
    """Edit the file in place (atomically: a temporary file, then a rename)."""
    raw = read_profile_bytes(path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ProfileFileError(f"{path}: not UTF-8 text") from None
    syntax = [f for f in validate_text(text, str(path)) if f.code == "toml-syntax"]
    if syntax:
        raise InvalidEdit(syntax)
    edit = set_value(text, key, value_text, str(path))
    _write_atomically(path, edit.text)
    return edit


def _write_atomically(path: Path, text: str) -> None:
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, path.stat().st_mode & 0o7777)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
