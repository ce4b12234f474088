"""Findings: one model for everything gmtool checks and reports.

A finding is one thing wrong (or, for a warning, worth a look), with a stable `code`
scripts may match on, a message for people, and where it is: a place in a file (a
profile, a scenario, a report: file, line, column, key path) or things in a store (a
hand, a table, a player, a GM action). `rules validate`, `rules test`, `audit`,
`checkpoint verify` and `verify` all report findings, and the command line renders every
kind with the same reporters (text, JSON, GitHub annotations, SARIF: cli/reporters.py).

The JSON of a finding is part of the command line's contract and keeps the two shapes
scripts already read: a finding in a file is `{"file", "line", "column", "path", "code",
"message"}`, one in a store `{"kind", "detail", "hand"?, "table"?, "player"?,
"gm_action"?}`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"


SUBJECTS = ("hand", "table", "player", "gm_action")  # the things in a store a finding names


@dataclass(frozen=True)
class Finding:
    """One problem: its code and message, and where it is (in a file or in a store)."""

    code: str
    message: str
    hand: int | None = None
    table: str | None = None
    player: str | None = None
    gm_action: int | None = None
    file: str | None = None
    line: int | None = None
    column: int | None = None
    path: str | None = None  # the dotted key path in a profile
    severity: Severity = Severity.ERROR
    # When the row it is about was written, where the check knows it (a ledger row, say):
    # an audit of a time window keeps only what lies in it. Not part of the JSON.
    at: str | None = field(default=None, compare=False, repr=False)

    @property
    def kind(self) -> str:
        """`code` by the name a store finding's JSON gives it."""
        return self.code

    @property
    def detail(self) -> str:
        """`message` by the name a store finding's JSON gives it."""
        return self.message

    @property
    def in_file(self) -> bool:
        return self.file is not None

    @property
    def subject(self) -> str:
        """The things in a store it names, as the audit prints them: "hand 12, table q-1"."""
        return ", ".join(
            f"{name} {getattr(self, name)}" for name in SUBJECTS if getattr(self, name) is not None
        )

    def as_json(self) -> dict[str, Any]:
        if self.in_file:
            return {
                "file": self.file,
                "line": self.line,
                "column": self.column,
                "path": self.path or "",
                "code": self.code,
                "message": self.message,
            }
        where = {name: getattr(self, name) for name in SUBJECTS if getattr(self, name) is not None}
        return {"kind": self.code, "detail": self.message, **where}

    def __str__(self) -> str:
        if self.in_file:
            path = f" {self.path}:" if self.path else ""
            return (
                f"{self.file}:{self.line}:{self.column}: {self.severity} [{self.code}]"
                f"{path} {self.message}"
            )
        where = self.subject
        return f"{where}: {self.code}: {self.message}" if where else f"{self.code}: {self.message}"


def finding_of(value: Finding | dict[str, Any]) -> Finding:
    """A finding from its JSON (either shape), or the finding itself."""
    if isinstance(value, Finding):
        return value
    if "file" in value:
        return Finding(
            value["code"],
            value["message"],
            file=value["file"],
            line=value.get("line"),
            column=value.get("column"),
            path=value.get("path") or None,
        )
    return Finding(
        value["kind"], value["detail"], **{name: value[name] for name in SUBJECTS if name in value}
    )


class Report(Protocol):
    """What a checking command reports, for the reporters (cli/reporters.py): its
    findings, the lines and verdict a person reads, its JSON, its exit code."""

    tool: str  # the command, as SARIF names the tool's run ("gmtool audit")
    artifact: str | None  # what was checked, when it is one file (a store, a report)

    @property
    def findings(self) -> list[Finding]: ...

    def lines(self) -> Iterable[str]:
        """What the text reporter prints before the verdict."""
        ...

    def summary(self, strict: bool = False) -> str: ...

    def as_json(self) -> dict[str, Any]: ...

    def exit_code(self, strict: bool = False) -> int: ...


def fails(finding: Finding, strict: bool) -> bool:
    """Whether a finding fails the run: an error, or with --strict a warning too."""
    return strict or finding.severity is Severity.ERROR
