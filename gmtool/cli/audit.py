"""`gmtool audit`: chains, commitments, replays, zero-sum settlements, ledgers, GM log."""

from __future__ import annotations

from typing import Optional

import typer

from gmtool.cli.common import DB_OPTION, open_store
from gmtool.cli.console import console


def audit(
    since: Optional[str] = typer.Option(None, "--since", help="Hands started at/after (ISO)."),
    until: Optional[str] = typer.Option(None, "--until", help="Hands started before (ISO)."),
    table: Optional[str] = typer.Option(None, "--table", help="Only this table."),
    player: Optional[str] = typer.Option(None, "--player", help="Only this player's hands."),
    db: Optional[str] = DB_OPTION,
    as_json: bool = typer.Option(False, "--json", help="Print {hands_checked, problems}."),
) -> None:
    """Verify recorded hands; exit 1 naming the hand and the kind of every problem."""
    from gmtool.audit.run import count_hands, run_audit

    with open_store(db) as store:
        total = count_hands(store, since, until, table, player)
        with console.progress("auditing hands", total=max(total, 1)) as advance:
            report = run_audit(store, since, until, table, player, progress=advance)
    if as_json:
        console.json(report.as_json())
    else:
        for problem in report.problems:
            where = ", ".join(f"{k} {problem[k]}" for k in ("hand", "table", "player",
                                                            "gm_action") if k in problem)
            console.line(f"{where}: {problem['kind']}: {problem['detail']}")
        verdict = "ok" if not report.problems else f"{len(report.problems)} problem(s)"
        console.line(f"{report.hands_checked} hand(s) checked: {verdict}")
    if report.problems:
        raise typer.Exit(1)
