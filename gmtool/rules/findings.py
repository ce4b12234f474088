"""What validation reports: findings in profile files (the shared model of
gmtool/findings.py), each with its place in the file, and their stable codes."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from gmtool.findings import Finding, Severity

__all__ = ["CODES", "WARNING_CODES", "Finding", "Report", "Severity", "profile_finding"]


# Stable finding codes: scripts and CI filters match on them, so never rename one.
CODES = {
    "toml-syntax": "the file is not valid TOML",
    "unreadable": "the file cannot be read (permissions, a broken link, an I/O error)",
    "unknown-key": "a key the format does not have",
    "not-applicable": "a key that does not apply to this game or betting style",
    "wrong-type": "a value of the wrong type",
    "out-of-range": "a value outside its allowed range",
    "bad-value": "a value that is not one of the allowed choices or forms",
    "unsafe-text": "a string with a control, bidirectional or invisible character",
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


def profile_finding(
    file: str, line: int, column: int, path: str, code: str, message: str
) -> Finding:
    """A finding in a profile or scenario file, at a 1-based line and column; its severity
    is its code's (WARNING_CODES)."""
    return Finding(
        code,
        message,
        file=file,
        line=line,
        column=column,
        path=path,
        severity=Severity.WARNING if code in WARNING_CODES else Severity.ERROR,
    )


@dataclass
class Report:
    """Findings over a set of profile files (`gmtool rules validate`)."""

    files: int
    findings: list[Finding]
    tool: str = "gmtool rules validate"
    artifact: str | None = None
    unusable: list[str] = field(default_factory=list)  # named paths not checked (exit 2)
    scenarios: int = 0  # scenario files named directly, skipped (`rules test` runs them)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity is Severity.ERROR]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity is Severity.WARNING]

    def lines(self) -> Iterator[str]:
        """`file:line:column: severity [code] path: message`, one a finding."""
        return (str(finding) for finding in self.findings)

    def summary(self, strict: bool = False) -> str:
        errors, warnings = len(self.errors), len(self.warnings)
        failed = errors or (strict and warnings)  # --strict: warnings fail
        verdict = "invalid" if failed else "incomplete" if self.unusable else "ok"
        unchecked = f", {len(self.unusable)} path(s) not checked" if self.unusable else ""
        skipped = (
            f" ({self.scenarios} scenario file(s) skipped: `gmtool rules test` runs them)"
            if self.scenarios
            else ""
        )
        return (
            f"{self.files} profile(s) checked{skipped}: {errors} error(s), {warnings} "
            f"warning(s){unchecked}: {verdict}"
        )

    def exit_code(self, strict: bool = False) -> int:
        if self.unusable:
            return 2  # a path named on the command line could not be checked: usage
        return 1 if self.errors or (strict and self.warnings) else 0

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "files": self.files,
            "errors": [f.as_json() for f in self.errors],
            "warnings": [f.as_json() for f in self.warnings],
        }
        if self.unusable:
            out["unusable"] = self.unusable
        return out
