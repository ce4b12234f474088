"""A profile file read once: its text, its findings and its compiled configuration.

Deploying used to read a profile four times (the scenario check, compiling, the warnings,
the stored text) and validate it twice, so the text stored beside a config could come
from another read than the bytes compiled into it. A `Profile` is made from one read:
everything a command says about the file, and everything it stores, is of those bytes.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from gmtool.errors import UsageError
from gmtool.rules.compile import InvalidProfile, compile_data
from gmtool.rules.findings import Finding
from gmtool.rules.validate import (
    ProfileFileError,
    is_scenario_data,
    parse_toml,
    read_profile_bytes,
    validate_bytes,
    validate_text,
)


@dataclass(frozen=True)
class Profile:
    """One read of a profile file; `compiled` is its engine configuration."""

    path: Path
    text: str
    findings: tuple[Finding, ...]
    compiled: dict

    @property
    def id(self) -> str:
        return self.compiled["profile"]["id"]

    @property
    def version(self) -> int:
        return self.compiled["profile"]["version"]

    @property
    def config_id(self) -> str:
        return self.compiled["config_id"]

    @property
    def tiers(self) -> list[str]:
        return [tier["id"] for tier in self.compiled["tiers"]]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "warning"]


def read_profile(path: str | Path) -> Profile:
    """Read, validate and compile the profile at `path`, from one read of its bytes.

    UsageError (exit 2) for a file that is missing or unreadable, or that is a scenario
    (an executable rule test naming a profile); InvalidProfile (exit 1) with every
    finding when it has errors.
    """
    path = Path(path)
    if not path.exists():
        raise ProfileFileError(f"no such profile file: {path}")
    raw = read_profile_bytes(path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidProfile(validate_bytes(raw, str(path))) from None
    return profile_of_text(path, text)


def profile_of_text(path: Path, text: str) -> Profile:
    """`read_profile` of a profile's text already read (a saved deploy plan carries it);
    `path` names where it came from."""
    try:
        data = parse_toml(text)
    except tomllib.TOMLDecodeError:
        raise InvalidProfile(validate_text(text, str(path))) from None
    if is_scenario_data(data):
        raise UsageError(
            f"{path} is a scenario (an executable rule test), not a profile: "
            f"deploy the profile it names ({data['profile']}), or run it with "
            "`gmtool rules test`"
        )
    findings = validate_text(text, str(path), data)
    if any(f.severity == "error" for f in findings):
        raise InvalidProfile(findings)
    return Profile(path, text, tuple(findings), compile_data(data))
