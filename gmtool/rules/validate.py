"""Validation of rule profiles: every finding (docs/profile-reference.md) at once, placed.

`validate_text` checks one document; `validate_paths` checks files and folders. Both
return findings instead of raising or exiting, so every caller (the CLI, `rules set`,
tests, the store's deploy) reports them its own way.
"""

from __future__ import annotations

import difflib
import re
import stat
import tomllib
from pathlib import Path as FsPath
from typing import Any, cast

from gmtool.errors import UsageError
from gmtool.rules import checks, schema
from gmtool.rules.collector import Collector
from gmtool.rules.findings import Finding, Report, profile_finding
from gmtool.rules.redefinition import REDEFINED, redefinition
from gmtool.rules.schema import Context, Field
from gmtool.rules.source import Path, Position

_TOML_ERROR_AT = re.compile(r"\(at line (\d+), column (\d+)\)")
TOO_DEEP = "nested too deeply to read (arrays or tables inside one another, hundreds of levels)"


class ProfileFileError(UsageError):
    """A profile path that cannot be read at all (missing, a directory, no permission)."""


def context_of(data: dict[str, Any]) -> Context:
    """The game and betting style a profile declares, for applicability and defaults."""
    profile = data.get("profile")
    game = profile.get("game") if isinstance(profile, dict) else None
    betting = data.get("betting")
    style = betting.get("style") if isinstance(betting, dict) else None
    return Context(
        game if game in schema.GAMES else None,
        style if style in (schema.CAPPED, schema.OWNER_ANTE) else schema.CAPPED,
    )


def parse_toml(text: str) -> dict[str, Any]:
    """`tomllib.loads`, where text nested deeper than Python's stack is a TOMLDecodeError too,
    so every reader of profiles and scenarios reports it as it reports any syntax error."""
    try:
        return tomllib.loads(text)
    except RecursionError:
        raise tomllib.TOMLDecodeError(TOO_DEEP) from None


def parse_error_finding(
    file: str, error: tomllib.TOMLDecodeError, text: str | None = None
) -> Finding:
    """A TOML syntax error as a finding at the line and column tomllib names; with the
    `text`, a key or table defined twice names both places (rules/redefinition.py)."""
    message = str(error)
    match = _TOML_ERROR_AT.search(message)
    line, column = (int(match.group(1)), int(match.group(2))) if match else (1, 1)
    message = _TOML_ERROR_AT.sub("", message).strip()
    if text is not None and message.startswith(REDEFINED):
        message = redefinition(text, line, column) or message
    return profile_finding(file, line, column, "", "toml-syntax", message)


def validate_text(
    text: str, file: str = "<profile>", data: dict[str, Any] | None = None
) -> list[Finding]:
    """Every finding for one profile text (`data` = the text already parsed), by position."""
    if data is None:
        try:
            data = parse_toml(text)
        except tomllib.TOMLDecodeError as error:
            return [parse_error_finding(file, error, text)]
    collector = Collector(file, data, text)
    ctx = context_of(data)
    check_structure(collector, schema.ROOT, data, (), ctx)
    checks.check_strings(collector, data)
    if ctx.game is not None:
        checks.check_semantics(collector, data, ctx)
    return sorted(collector.findings, key=lambda f: (f.line, f.column, f.code))


def check_structure(out: Collector, spec: Field, value: Any, path: Path, ctx: Context) -> bool:
    """Check types, ranges, choices and keys against the schema; True if the value is sound."""
    kind_ok = _kind_matches(spec.kind, value)
    if not kind_ok:
        out.add(path, "wrong-type", f"expected {_kind_words(spec)}, got {_value_words(value)}")
        return False
    if spec.kind == "table":
        return _check_table(out, spec, value, path, ctx)
    if spec.kind == "array":
        sound = _check_length(out, spec, value, path)
        items = cast(Field, spec.items)  # every array of the format says what it holds
        for index, item in enumerate(value):
            sound &= check_structure(out, items, item, path + (index,), ctx)
        return sound
    return _check_scalar(out, spec, value, path)


def _check_table(
    out: Collector, spec: Field, value: dict[str, Any], path: Path, ctx: Context
) -> bool:
    sound = True
    for key, item in value.items():
        child = spec.fields.get(key)
        if child is None:
            out.add(path + (key,), "unknown-key", _unknown_key_message(key, spec, path, ctx))
            sound = False
        elif not child.applies(ctx) and ctx.game is not None:
            out.add(
                path + (key,), "not-applicable", f"{key!r} applies only where {child.when.text}"
            )
            sound = False
        else:
            sound &= check_structure(out, child, item, path + (key,), ctx)
    for key, child in spec.fields.items():
        if (
            key in value
            or not child.applies(ctx)
            or not (child.is_required(ctx) or _required_section(child, ctx))
        ):
            continue
        if ctx.game is None and (child.when is not schema.ALWAYS or child.required_when):
            continue  # required or not depends on the game, which is missing or unknown
        where = out.source.table_position(path) if path else None
        out.add(
            path + (key,),
            "missing-key",
            f"required key {key!r} is missing" + (f" from [{_dotted(path)}]" if path else ""),
            at=where or (out.source.find(path) if path else Position(1, 1)),
        )
        sound = False
    return sound


def _required_section(spec: Field, ctx: Context) -> bool:
    """A section with a required key (like [profile]) is required itself, unless optional."""
    return (
        spec.kind == "table"
        and not spec.optional_table
        and any(child.applies(ctx) and child.is_required(ctx) for child in spec.fields.values())
    )


def _check_length(out: Collector, spec: Field, value: list[Any], path: Path) -> bool:
    if (
        spec.min_items is not None
        and len(value) < spec.min_items
        or spec.max_items is not None
        and len(value) > spec.max_items
    ):
        wanted = (
            f"exactly {spec.min_items}"
            if spec.min_items == spec.max_items
            else f"at least {spec.min_items}"
        )
        out.add(path, "out-of-range", f"expected {wanted} item(s), got {len(value)}")
        return False
    return True


def _check_scalar(out: Collector, spec: Field, value: Any, path: Path) -> bool:
    if spec.choices and value not in spec.choices:
        near = difflib.get_close_matches(str(value), spec.choices, n=1)
        hint = f"; did you mean {near[0]!r}?" if near else ""
        out.add(
            path, "bad-value", f"{value!r} is not one of {', '.join(map(repr, spec.choices))}{hint}"
        )
        return False
    if spec.pattern and not re.match(spec.pattern, value):
        out.add(path, "bad-value", f"{value!r} must be lowercase letters, digits and dashes")
        return False
    if spec.kind == "integer":
        if spec.minimum is not None and value < spec.minimum:
            out.add(path, "out-of-range", f"{value} is below the minimum {spec.minimum}")
            return False
        if spec.maximum is not None and value > spec.maximum:
            out.add(path, "out-of-range", f"{value} is above the maximum {spec.maximum}")
            return False
    return True


def _kind_matches(kind: str, value: Any) -> bool:
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, {"string": str, "boolean": bool, "array": list, "table": dict}[kind])


def _kind_words(spec: Field) -> str:
    words = {
        "string": "a string",
        "integer": "an integer",
        "boolean": "true or false",
        "array": "an array",
        "table": "a table",
    }
    return words[spec.kind]


def _value_words(value: Any) -> str:
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    name = {str: "string", int: "integer", float: "float", list: "array", dict: "table"}.get(
        type(value), type(value).__name__
    )
    shown = "" if isinstance(value, (list, dict)) else f" {value!r}"
    return f"{name}{shown}"


def _dotted(path: Path) -> str:
    return ".".join(str(p) for p in path if not isinstance(p, int))


def _unknown_key_message(key: str, spec: Field, path: Path, ctx: Context) -> str:
    where = f"[{_dotted(path)}]" if path else "the top level"
    message = f"unknown key {key!r} in {where}"
    near = difflib.get_close_matches(key, list(spec.fields), n=1, cutoff=0.6)
    if near:
        return f"{message}; did you mean {near[0]!r}?"
    elsewhere = [name for name, _ in schema.walk() if name.rsplit(".", 1)[-1] == key]
    if elsewhere:
        return f"{message}; it belongs in {elsewhere[0].replace('[]', '')!r}"
    return message


def candidate_files(paths: list[str]) -> list[FsPath]:
    """The .toml files under the given files and folders; a named path that is neither a
    regular file nor a folder (a named pipe, say) is a ProfileFileError."""
    found: list[FsPath] = []
    for name in paths:
        if not name.strip():
            raise ProfileFileError("a blank path names no file or folder")
        path = FsPath(name)
        if path.is_dir():
            inside = sorted(path.rglob("*.toml"))
            if not inside:
                raise ProfileFileError(f"{name}: no .toml file in this folder, nothing to check")
            found.extend(inside)
        elif path.exists():
            require_regular_file(path)
            found.append(path)
        else:
            raise ProfileFileError(f"no such file or folder: {name}")
    return found


def is_scenario_data(data: dict[str, Any]) -> bool:
    """A scenario names its profile with a top-level string `profile = "..."`."""
    return isinstance(data.get("profile"), str)


def require_regular_file(path: FsPath) -> None:
    """ProfileFileError unless `path` is a regular file: opening a named pipe waits for a
    writer forever, and a device may never end, so neither is ever opened."""
    mode = path.stat().st_mode
    if not stat.S_ISREG(mode):
        kinds = {
            stat.S_ISDIR: "a folder",
            stat.S_ISFIFO: "a named pipe",
            stat.S_ISSOCK: "a socket",
            stat.S_ISCHR: "a device",
            stat.S_ISBLK: "a device",
        }
        kind = next((words for is_kind, words in kinds.items() if is_kind(mode)), "a special file")
        raise ProfileFileError(f"{path}: not a regular file ({kind})")


def read_profile_bytes(path: FsPath) -> bytes:
    """The contents of a profile or scenario file; ProfileFileError if it cannot be read."""
    try:
        require_regular_file(path)
        return path.read_bytes()
    except OSError as error:
        raise ProfileFileError(f"{path}: {error.strerror or error}") from None


def validate_bytes(raw: bytes, file: str) -> list[Finding]:
    """Like validate_text, for raw file contents: bytes that are not UTF-8 are a finding."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        line_start = raw.rfind(b"\n", 0, error.start) + 1
        column = len(raw[line_start : error.start].decode("utf-8")) + 1  # characters, not bytes
        return [
            profile_finding(
                file,
                line,
                column,
                "",
                "toml-syntax",
                f"not UTF-8 text: byte 0x{raw[error.start]:02x} cannot be decoded",
            )
        ]
    return validate_text(text, file)


def validate_paths(paths: list[str]) -> Report:
    """Validate every profile under `paths`, reading and parsing each file once.

    Scenario files (executable rule tests, run by `gmtool rules test`) are skipped, also
    when named directly, so a pre-commit hook may pass every changed .toml file. Every
    file gets its own findings: one that cannot be read, or is nested too deeply to read,
    is a finding of its own and the run goes on. A named path that cannot be checked at
    all (missing, neither a file nor a folder, a folder with no profile in it) is a usage
    problem (`Report.unusable`, exit 2) and the other paths are still checked; when no
    named path can be, ProfileFileError says why.
    """
    findings: list[Finding] = []
    unusable: list[str] = []
    checked = scenarios = 0
    for name in paths:
        try:
            files = candidate_files([name])
        except ProfileFileError as error:
            unusable.append(str(error))
            continue
        profiles = 0
        for path in files:
            try:
                found = _validate_file(path)
            except RecursionError:  # parse_toml reports deep nesting; this guards what follows
                found = [profile_finding(str(path), 1, 1, "", "toml-syntax", TOO_DEEP)]
            except ProfileFileError as error:
                found = [profile_finding(str(path), 1, 1, "", "unreadable", str(error))]
            if found is not None:
                profiles += 1
                findings.extend(found)
            elif not FsPath(name).is_dir():
                scenarios += 1  # named as a file: say it was skipped, and why
        if not profiles and FsPath(name).is_dir():
            unusable.append(
                f"{name}: no profile in this folder, only scenarios (`gmtool rules test` "
                "runs them): nothing to check"
            )
        checked += profiles
    if unusable and len(unusable) == len(paths):
        raise ProfileFileError("; ".join(unusable))
    return Report(checked, findings, unusable=unusable, scenarios=scenarios)


def _validate_file(path: FsPath) -> list[Finding] | None:
    """The findings of one file, or None when it is a scenario (not a profile)."""
    raw = read_profile_bytes(path)
    try:
        text = raw.decode("utf-8")
        data = parse_toml(text)
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return validate_bytes(raw, str(path))
    if is_scenario_data(data):
        return None
    return validate_text(text, str(path), data)
