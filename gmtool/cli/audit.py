"""`gmtool audit`: chains, commitments, replays, zero-sum settlements, ledgers, GM log;
whole, or from a signed checkpoint on, in one process or several."""

from __future__ import annotations

from pathlib import Path

import typer

from gmtool.bounds import MAX_JOBS
from gmtool.cli.common import (
    DB_OPTION,
    FORMAT_OPTION,
    JSON_OPTION,
    SINCE_OPTION,
    UNTIL_OPTION,
    WITNESS_OPTION,
    reading_any,
)
from gmtool.cli.console import console
from gmtool.cli.reporters import ReportFormat, report_with


def audit(
    since: str | None = SINCE_OPTION,
    until: str | None = UNTIL_OPTION,
    table: str | None = typer.Option(None, "--table", help="Only this table."),
    player: str | None = typer.Option(None, "--player", help="Only this player's hands."),
    checkpoint: Path | None = typer.Option(
        None,
        "--checkpoint",
        help="A signed checkpoint the store must extend (default: "
        "every checkpoint in the store's witnesses).",
    ),
    key: Path | None = typer.Option(
        None, "--key", help="The host's verifier key (default: <db>.checkpoint.pub)."
    ),
    from_checkpoint: str | None = typer.Option(
        None,
        "--from-checkpoint",
        metavar="FILE",
        help="Audit only what the log recorded "
        "after this signed checkpoint (a file, or the name of one in the witness folder): "
        "the one the last clean audit reported. It trusts that audit; a full audit finds "
        "edits to what came before (docs/evidence.md).",
    ),
    jobs: int = typer.Option(
        1,
        "--jobs",
        min=1,
        max=MAX_JOBS,
        help="Audit tables in this "
        f"many processes at once (1 to {MAX_JOBS}); the report is the "
        "same.",
    ),
    witness: str | None = WITNESS_OPTION,
    served: list[str] | None = typer.Option(
        None,
        "--served",
        metavar="URL=KEY",
        help="A served witness you know of (its URL and KEY.pub, or the key itself), asked "
        "whatever the store records; it must agree. Repeatable.",
    ),
    db: str | None = DB_OPTION,
    as_json: bool = JSON_OPTION,
    output_format: ReportFormat | None = FORMAT_OPTION,
) -> None:
    """Verify recorded hands; exit 1 naming the hand and the kind of every problem."""
    from gmtool.ops.audit import Audit

    with reading_any(db) as store:
        job = Audit(
            store,
            since,
            until,
            table,
            player,
            checkpoint,
            key,
            from_checkpoint,
            jobs,
            witness,
            served,
        )
        for warning in job.warnings:
            console.warning(warning)
        with console.progress("auditing hands", total=max(job.total, 1)) as advance:
            report = job.run(advance)
    raise typer.Exit(report_with(output_format, as_json, report, console))
