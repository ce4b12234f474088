"""Safe in-place edits of a profile: the values named change, comments and layout stay.

`edit_text` edits the text with tomlkit (the only place tomlkit is used: it is about
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
    """One value an edit set: its key, the value before (None if absent) and after."""

    key: str
    old: Any
    new: Any


@dataclass(frozen=True)
class EditedProfile:
    """What `edit_text` did: each value set, in order, the edited text and its warnings."""

    edits: list[Edit]
    text: str
    warnings: list[Finding]


# A VALUE that starts like a TOML value (a number, a date, a quoted string, an array or
# an inline table) must be one; only other text is taken as a plain string.
_LOOKS_LIKE_TOML = re.compile(r"""^\s*(?:[-+0-9"'\[{]|$)""")


def parse_value(text: str) -> Any:
    """A VALUE argument as one TOML value (`600`, `true`, `[1, 5]`, `"x"`), else, if it is
    one line of words, as a plain string (`资深`). Text that starts as a TOML value but is
    not one (`[1, 2`, `"abc`, `1 2`) and text with more than one value (`20`, a new line
    and `foo = 1`) are usage errors: taken as a string, they would be written as one, or
    the rest silently dropped."""
    try:
        parsed = parse_toml(f"value = {text}")
    except tomllib.TOMLDecodeError as error:
        if "\n" in text or "\r" in text:
            parsed = {}
        elif _LOOKS_LIKE_TOML.match(text):
            shown = repr(text) if len(text) <= 60 else repr(text[:60]) + "..."
            if str(error) == TOO_DEEP:
                raise ValueTextError(
                    f"{shown}: the value is {TOO_DEEP}; nothing was changed"
                ) from None
            reason = re.sub(r" \(at .*\)$", "", str(error)).lower()
            raise ValueTextError(
                f"{shown} is not a TOML value ({reason}): write numbers as 600, lists "
                'as [1, 5], texts in double quotes ("x"); nothing was changed'
            ) from None
        else:
            return text
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


def edit_text(
    text: str, assignments: list[tuple[str, str]], file: str = "<profile>"
) -> EditedProfile:
    """Set each KEY to its VALUE (TOML text) in the profile text, in order, then validate
    the result once: values that only make sense together (RULES Q5's street-5 cap, hand
    cap and minimum holding) change in one edit. InvalidEdit if the result has an error;
    KeyPathError or ValueTextError (before anything is validated) for a key that names
    nothing, a key given twice or a value that is not one."""
    import tomlkit
    from tomlkit.exceptions import ParseError

    keys = [key for key, _ in assignments]
    twice = sorted({key for key in keys if keys.count(key) > 1})
    if twice:
        raise KeyPathError(f"{', '.join(twice)}: given twice; give each key once")
    try:  # tomlkit refuses some text tomllib reads: nesting beyond 100 levels
        document = tomlkit.parse(text)
    except ParseError as error:
        message = re.sub(r" at line \d+ col \d+$", "", str(error))
        raise InvalidEdit(
            [profile_finding(file, error.line, error.col, "", "toml-syntax", message)]
        ) from None
    except RecursionError:
        raise InvalidEdit([profile_finding(file, 1, 1, "", "toml-syntax", TOO_DEEP)]) from None
    values = [(key, split_key(key), parse_value(value_text)) for key, value_text in assignments]
    edits = [_assign(document, key, parts, value) for key, parts, value in values]
    try:  # tomlkit writes a value nested hundreds of levels deep recursively too
        new_text = tomlkit.dumps(document)
    except RecursionError:
        raise ValueTextError(f"a value is {TOO_DEEP}; nothing was changed") from None
    findings = validate_text(new_text, file)
    errors = [f for f in findings if f.severity == "error"]
    if errors:
        raise InvalidEdit(errors)
    return EditedProfile(edits, new_text, [f for f in findings if f.severity == "warning"])


def _assign(document: Any, key: str, parts: list[str | int], value: Any) -> Edit:
    """Set the value at `parts` (tables and tiers made on the way as needed): its Edit."""
    container: Any = document
    for depth, part in enumerate(parts[:-1]):
        container = _step(container, part, parts[: depth + 1], key, create=True)
    last = parts[-1]
    if isinstance(last, int):
        if not isinstance(container, list) or last >= len(container):
            raise KeyPathError(f"{key}: no element {last}")
        old = container[last]
    else:
        if not hasattr(container, "get"):
            raise KeyPathError(f"{key}: {'.'.join(map(str, parts[:-1]))} is not a table")
        old = container.get(last)
    try:
        container[last] = value
    except RecursionError:
        raise ValueTextError(f"{key}: the value is {TOO_DEEP}; nothing was changed") from None
    unwrap = getattr(old, "unwrap", None)
    return Edit(key, unwrap() if unwrap else old, value)


def set_values(text: str, values: dict[str, Any], file: str = "<profile>") -> str:
    """`edit_text` for keys given as values (`{"betting.raise_chips": [50, 100]}`), all
    validated together; the edited text."""
    import tomlkit

    assignments = [(key, tomlkit.item(value).as_string()) for key, value in values.items()]
    return edit_text(text, assignments, file).text


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


def edit_file(path: Path, assignments: list[tuple[str, str]]) -> EditedProfile:
    """Edit the file in place (atomically: a temporary file, then a rename), every value
    or none: the file is written only once the whole result is valid."""
    raw = read_profile_bytes(path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ProfileFileError(f"{path}: not UTF-8 text") from None
    syntax = [f for f in validate_text(text, str(path)) if f.code == "toml-syntax"]
    if syntax:
        raise InvalidEdit(syntax)
    edited = edit_text(text, assignments, str(path))
    _write_atomically(path, edited.text)
    return edited


def set_in_file(path: Path, key: str, value_text: str) -> EditedProfile:
    """`edit_file` of one value."""
    return edit_file(path, [(key, value_text)])


def _write_atomically(path: Path, text: str) -> None:
    """`text` into the profile at `path`, whole or not at all: through a symbolic link to
    the file it names (the link stays), a temporary file beside that file, then a rename;
    a folder that cannot be written is one plain message."""
    target = path.resolve()  # a link is written through, never replaced by a copy
    try:
        fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    except OSError as error:
        raise UsageError(
            f"{path}: cannot write it ({error.strerror or error}): nothing was changed"
        ) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, target.stat().st_mode & 0o7777)
        os.replace(temporary, target)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
