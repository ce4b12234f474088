"""The reporters every checking command shares, chosen by `--format`: text, json, GitHub
workflow annotations and SARIF 2.1.0 (for code-scanning UIs).

`rules validate`, `rules test`, `audit`, `checkpoint verify` and `verify` each return a
report of findings (`gmtool.findings.Report`); a reporter prints it. JSON is each
report's own contract; the other three are made from its findings alone.
"""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING, Any

from gmtool.cli.errors import flush_stdout, reader_gone

if TYPE_CHECKING:  # (imported where used: `--help` loads this module for its options)
    from gmtool.cli.console import Console
    from gmtool.findings import Finding, Report

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def text_report(report: Report, console: Console, strict: bool = False) -> None:
    """The report's lines (a finding each, for most), then its verdict."""
    console.lines(report.lines())
    console.line(report.summary(strict))


def json_report(report: Report, console: Console, strict: bool = False) -> None:
    console.json(report.as_json())


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(finding: Finding, strict: bool = False) -> str:
    """A GitHub workflow command for one finding: `::error` for what fails the run (with
    --strict a warning too), `::warning` for the rest."""
    level = "error" if _fails(finding, strict) else "warning"
    properties = [f"title={_escape_property(finding.code)}"]
    if finding.in_file:
        properties[:0] = [
            f"file={_escape_property(str(finding.file))}",
            f"line={finding.line or 1}",
            f"col={finding.column or 1}",
        ]
        message = f"{finding.path}: {finding.message}" if finding.path else finding.message
    else:
        message = f"{finding.subject}: {finding.message}" if finding.subject else finding.message
    return f"::{level} {','.join(properties)}::{_escape_data(message)}"


def github_report(report: Report, console: Console, strict: bool = False) -> None:
    """Workflow-command annotations (GitHub shows at most 10 a step), then the full text."""
    for finding in report.findings:
        console.line(annotation(finding, strict))
    text_report(report, console, strict)


def sarif_report(report: Report, console: Console, strict: bool = False) -> None:
    console.json(sarif(report, strict))


def sarif(report: Report, strict: bool = False) -> dict[str, Any]:
    """The report as a SARIF 2.1.0 log: one run of the command, a rule per finding code,
    a result per finding with its place (a region of a file, or the store's things by
    name as logical locations)."""
    from gmtool import __version__

    findings = report.findings
    codes = sorted({finding.code for finding in findings})
    rules = [
        {"id": code, "name": code, "shortDescription": {"text": _describe(code)}} for code in codes
    ]
    return {
        "version": "2.1.0",
        "$schema": SARIF_SCHEMA,
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "gmtool",
                        "fullName": report.tool,
                        "version": __version__,
                        "rules": rules,
                    }
                },
                "results": [
                    _result(finding, codes.index(finding.code), report, strict)
                    for finding in findings
                ],
            }
        ],
    }


def _describe(code: str) -> str:
    from gmtool.rules.findings import CODES

    return CODES.get(code, code.replace("_", " "))


def _result(finding: Finding, rule_index: int, report: Report, strict: bool) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": finding.code,
        "ruleIndex": rule_index,
        "level": "error" if _fails(finding, strict) else "warning",
        "message": {"text": finding.message},
    }
    if finding.in_file:
        region = {"startLine": finding.line or 1, "startColumn": finding.column or 1}
        location: dict[str, Any] = {
            "physicalLocation": {"artifactLocation": {"uri": str(finding.file)}, "region": region}
        }
        if finding.path:
            location["logicalLocations"] = [{"fullyQualifiedName": finding.path, "kind": "member"}]
    else:
        location = {
            "logicalLocations": [
                {
                    "name": f"{name} {getattr(finding, name)}",
                    "fullyQualifiedName": f"{name}/{getattr(finding, name)}",
                    "kind": "object",
                }
                for name in ("hand", "table", "player", "gm_action")
                if getattr(finding, name) is not None
            ]
        }
        if report.artifact:
            location["physicalLocation"] = {"artifactLocation": {"uri": report.artifact}}
    result["locations"] = [location] if len(location) else []
    return result


REPORTERS = {
    "text": text_report,
    "json": json_report,
    "github": github_report,
    "sarif": sarif_report,
}
# `--format` takes exactly the reporters' names (typer offers an Enum as a choice)
ReportFormat = Enum("ReportFormat", {name: name for name in REPORTERS}, type=str)


def report_with(
    output_format: Any, as_json: bool, report: Report, console: Console, strict: bool = False
) -> int:
    """Print `report` with the reporter `--format` names (`--json`: json; neither: text)
    and return the report's exit code. `--json` with another `--format` is a usage error."""
    from gmtool.errors import UsageError

    named = getattr(output_format, "value", output_format)
    if as_json and named not in (None, "json"):
        raise UsageError(f"--json and --format {named} ask for two formats: give one")
    name = "json" if as_json else named or "text"
    try:
        REPORTERS[name](report, console, strict)
        flush_stdout()  # a reader gone shows here, not at exit
    except BrokenPipeError:  # the reader went away (`| head -1`): the findings still count
        reader_gone()
    except SystemExit as stop:  # rich's own exit on a broken pipe
        if not isinstance(stop.__context__, BrokenPipeError):
            raise
        reader_gone()
    return report.exit_code(strict)


def _fails(finding: Finding, strict: bool) -> bool:
    """Whether the finding fails the run (gmtool.findings.fails, imported when used)."""
    from gmtool.findings import fails

    return fails(finding, strict)
