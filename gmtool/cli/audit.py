"""`gmtool audit`: chains, commitments, replays, zero-sum settlements, ledgers, GM log;
whole, or from a signed checkpoint on, in one process or several."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from gmtool.bounds import MAX_JOBS
from gmtool.cli.common import (
    DB_OPTION,
    JSON_OPTION,
    SINCE_OPTION,
    UNTIL_OPTION,
    WITNESS_OPTION,
    emit,
    open_store,
)
from gmtool.cli.console import console


def audit(
    since: Optional[str] = SINCE_OPTION,
    until: Optional[str] = UNTIL_OPTION,
    table: Optional[str] = typer.Option(None, "--table", help="Only this table."),
    player: Optional[str] = typer.Option(None, "--player", help="Only this player's hands."),
    checkpoint: Optional[Path] = typer.Option(
        None, "--checkpoint", help="A signed checkpoint the store must extend (default: "
        "every checkpoint in the witness folder)."),
    key: Optional[Path] = typer.Option(None, "--key", help="The host's verifier key "
                                       "(default: <db>.checkpoint.pub)."),
    from_checkpoint: Optional[str] = typer.Option(
        None, "--from-checkpoint", metavar="FILE", help="Audit only what the log recorded "
        "after this signed checkpoint (a file, or the name of one in the witness folder): "
        "the one the last clean audit reported. It trusts that audit; a full audit finds "
        "edits to what came before (docs/evidence.md)."),
    jobs: int = typer.Option(1, "--jobs", min=1, max=MAX_JOBS, help="Audit tables in this "
                             f"many processes at once (1 to {MAX_JOBS}); the report is the "
                             "same."),
    witness: Optional[str] = WITNESS_OPTION,
    db: Optional[str] = DB_OPTION,
    as_json: bool = JSON_OPTION,
) -> None:
    """Verify recorded hands; exit 1 naming the hand and the kind of every problem."""
    from gmtool.ops.audit import Audit

    with open_store(db) as store:
        job = Audit(store, since, until, table, player, checkpoint, key, from_checkpoint,
                    jobs, witness)
        with console.progress("auditing hands", total=max(job.total, 1)) as advance:
            report = job.run(advance)
    emit(report.as_json(), as_json, _render)
    if report.problems:
        raise typer.Exit(1)


def _render(report: dict) -> None:
    for problem in report["problems"]:
        where = ", ".join(f"{k} {problem[k]}" for k in ("hand", "table", "player", "gm_action")
                          if k in problem)
        console.line(f"{where}: {problem['kind']}: {problem['detail']}")
    problems = report["problems"]
    verdict = "ok" if not problems else f"{len(problems)} problem(s)"
    if report.get("checkpoint"):
        signed = report["checkpoint"]
        verdict += (f"; the log ({signed['records']} records) extends the checkpoint signed "
                    f"at {signed['size']} ({signed['file']})")
    after = report.get("incremental")
    since = f" after the checkpoint at {after['size']} ({after['from']})" if after else ""
    console.line(f"{report['hands_checked']} hand(s) checked{since}: {verdict}")
