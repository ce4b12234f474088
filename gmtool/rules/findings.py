"""Findings: what validation reports, one per problem, each with its place in the file."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import Any


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"


# Stable finding codes: scripts and CI filters match on them, so never rename one.
CODES = {
    "toml-syntax": "the file is not valid TOML",
    "unreadable": "the file cannot be read (permissions, a broken link, an I/O error)",
    "unknown-key": "a key the format does not have",
    "not-applicable": "a key that does not apply to this game or betting style",
    "wrong-type": "a value of the wrong type",
    "out-of-range": "a value outside its allowed range",
    "bad-value": "a value that is not one of the allowed choices or forms",
    "missing-key": "a required key is absent",
    "duplicate-tier": "two tiers share an id",
    "no-enabled-tier": "no tier is enabled",
    "bad-deck": "an unknown or repeated rank or suit",
    "deck-too-small": "seats x cards per player exceed the deck",
    "bad-categories": "the category list is not exactly the game's categories",
    "caps-decrease": "street caps decrease from one street to the next (RULES Q5)",
    "last-cap": "the street-5 cap differs from the hand cap (RULES Q5)",
    "ante-above-cap": "the ante exceeds the street-2 cap (RULES Q1)",
    "min-holding": "the minimum holding is below the hand cap (RULES Q5)",
    "not-increasing": "chips or ladder steps are not positive and strictly increasing",
    "follow-table": "a three-card follow table breaks RULES H5 or exceeds the cap",
    "seed-ratio": "a tier departs from the seed's cap ratios (RULES Q2)",
    "time-limit": "a time limit outside 5..120 seconds",
    "no-effect": "a setting that changes nothing in this profile ([scoring] with no training room)",
}
WARNING_CODES = frozenset({"seed-ratio", "time-limit", "no-effect"})


@dataclass(frozen=True, order=True)
class Finding:
    """One problem in one profile, at a 1-based line and column."""

    file: str
    line: int
    column: int
    path: str
    code: str
    message: str

    @property
    def severity(self) -> Severity:
        return Severity.WARNING if self.code in WARNING_CODES else Severity.ERROR

    def as_json(self) -> dict[str, Any]:
        return asdict(self)

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}:{self.column}"
        path = f" {self.path}:" if self.path else ""
        return f"{where}: {self.severity} [{self.code}]{path} {self.message}"


@dataclass
class Report:
    """Findings over a set of files."""

    files: int
    findings: list[Finding]

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity is Severity.ERROR]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity is Severity.WARNING]

    def exit_code(self, strict: bool = False) -> int:
        return 1 if self.errors or (strict and self.warnings) else 0

    def as_json(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "errors": [f.as_json() for f in self.errors],
            "warnings": [f.as_json() for f in self.warnings],
        }
