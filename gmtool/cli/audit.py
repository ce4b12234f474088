"""`gmtool audit`: chains, commitments, replays, zero-sum settlements, ledgers, GM log."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

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
    witness: Optional[str] = WITNESS_OPTION,
    db: Optional[str] = DB_OPTION,
    as_json: bool = JSON_OPTION,
) -> None:
    """Verify recorded hands; exit 1 naming the hand and the kind of every problem."""
    from gmtool.audit.run import run_audit
    from gmtool.cli.checkpoints import signed_checkpoints
    from gmtool.house.seeds import existing_key
    from gmtool.store.scan import count_hands

    with open_store(db) as store:
        checkpoints, refused, origin = signed_checkpoints(store, checkpoint, key, witness)
        total = count_hands(store, since, until, table, player)
        with console.progress("auditing hands", total=max(total, 1)) as advance:
            report = run_audit(store, since, until, table, player, progress=advance,
                               checkpoints=checkpoints, origin=origin,
                               seed_key=existing_key(store.path))
    for problem in refused:
        report.add(problem)
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
    console.line(f"{report['hands_checked']} hand(s) checked: {verdict}")
