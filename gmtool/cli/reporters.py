"""Validation reporters, chosen by `--format`: text, json and GitHub annotations."""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gmtool.cli.console import Console
    from gmtool.rules.findings import Report


def text_report(report: Report, console: Console, strict: bool = False) -> None:
    """`file:line:column: severity [code] path: message`, then a count and the verdict."""
    console.lines(str(finding) for finding in report.findings)
    errors, warnings = len(report.errors), len(report.warnings)
    verdict = "invalid" if errors or (strict and warnings) else "ok"  # --strict: warnings fail
    console.line(f"{report.files} profile(s) checked: {errors} error(s), "
                 f"{warnings} warning(s): {verdict}")


def json_report(report: Report, console: Console, strict: bool = False) -> None:
    console.json(report.as_json())


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_report(report: Report, console: Console, strict: bool = False) -> None:
    """Workflow-command annotations (GitHub shows at most 10 a step), then the full text."""
    for finding in report.findings:
        properties = ",".join([
            f"file={_escape_property(finding.file)}", f"line={finding.line}",
            f"col={finding.column}", f"title={_escape_property(finding.code)}",
        ])
        message = f"{finding.path}: {finding.message}" if finding.path else finding.message
        console.line(f"::{finding.severity} {properties}::{_escape_data(message)}")
    text_report(report, console, strict)


REPORTERS = {"text": text_report, "json": json_report, "github": github_report}
# `--format` takes exactly the reporters' names (typer offers an Enum as a choice)
ReportFormat = Enum("ReportFormat", {name: name for name in REPORTERS}, type=str)
