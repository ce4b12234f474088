"""`gmtool verify REPORT.json`: check an exported dispute report offline, with nothing but
the report and the host's verifier key (no database)."""

from __future__ import annotations

from pathlib import Path

import typer

from gmtool.cli.common import FORMAT_OPTION, JSON_OPTION
from gmtool.cli.console import console
from gmtool.cli.reporters import ReportFormat, report_with


def verify(
    report: Path = typer.Argument(
        ..., help="A report from `gmtool hands export HAND --format json`."
    ),
    key: Path | None = typer.Option(
        None,
        "--key",
        help="The host's verifier key "
        "(<db>.checkpoint.pub); without it, the key inside "
        "the report is used and the check proves only that "
        "the report is whole.",
    ),
    as_json: bool = JSON_OPTION,
    output_format: ReportFormat | None = FORMAT_OPTION,
) -> None:
    """Check a dispute report: its signed checkpoint, every inclusion proof, the events'
    hash chain, and that every field is what the proven records say. Exit 1 if not."""
    from gmtool.ops.verify import verify_report

    checked = verify_report(report, key)
    if checked.key_from_report:
        console.warning(
            f"checked against the key inside the report "
            f"({checked.verifier.name}); pass --key with the host's verifier key "
            "to know who signed it"
        )
    raise typer.Exit(report_with(output_format, as_json, checked, console))
