"""`gmtool hands`: compare hands, play scripted hands (the sandbox)."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from gmtool.cli.common import DB_OPTION, open_store
from gmtool.cli.console import Abort, console

app = typer.Typer(help="Compare and play hands; list, show, export and replay recorded hands.",
                  no_args_is_help=True, rich_markup_mode=None)


@app.command()
def compare(
    hands: List[str] = typer.Argument(..., metavar="HAND...",
                                      help='Cards separated by spaces: "AS KS QS JS TS".'),
    profile: Path = typer.Option(..., "--profile", help="The profile whose ranking applies."),
    as_json: bool = typer.Option(False, "--json", help="Print the comparison as JSON."),
) -> None:
    """Rank hands under a profile and explain the result in words a player understands."""
    from gmtool.engine.compare import compare_hands
    from gmtool.rules.compile import compile_file

    if len(hands) < 2:
        raise Abort("give at least two hands to compare")
    result = compare_hands(compile_file(profile), hands)
    if as_json:
        console.json(result)
        return
    for index, hand in enumerate(result["hands"]):
        mark = "winner" if index == result["winner"] else f"hand {index + 1}"
        console.line(f"{mark:>7}: {hand['cards']}  {hand['category']}")
        console.line(f"         {hand['explanation']}")


@app.command()
def play(
    script: Path = typer.Argument(..., help="A scenario file (PROFILE.md, 'Scenario files')."),
    as_json: bool = typer.Option(False, "--json", help="Print winner, settlement and events."),
) -> None:
    """Play a scripted hand without a database and check its [expect] table."""
    from gmtool.cli.render_hands import render_outcome
    from gmtool.sandbox.expect import check
    from gmtool.sandbox.run import play as play_scenario
    from gmtool.sandbox.scenario import load_scenario

    outcome = play_scenario(load_scenario(script))
    failures = check(outcome)
    if as_json:
        console.json({**outcome.as_json(), "failures": failures})
    else:
        render_outcome(outcome, console)
        console.lines(f"FAILED {failure}" for failure in failures)
        if not failures and outcome.scenario.expect:
            console.line("expectations met")
    if failures:
        raise typer.Exit(1)


@app.command("list")
def list_(
    player: Optional[str] = typer.Option(None, "--player", help="Hands this player sat in."),
    table: Optional[str] = typer.Option(None, "--table", help="Hands of this table."),
    since: Optional[str] = typer.Option(None, "--since", help="Started at or after (ISO time)."),
    until: Optional[str] = typer.Option(None, "--until", help="Started before (ISO time)."),
    limit: int = typer.Option(50, "--limit", min=1, help="At most this many, newest first."),
    db: Optional[str] = DB_OPTION,
    as_json: bool = typer.Option(False, "--json", help="Print the hands as JSON."),
) -> None:
    """Recorded hands, newest first."""
    from gmtool.store.queries import list_hands

    with open_store(db) as store:
        rows = list_hands(store, since, until, table, player, limit)
    if as_json:
        console.json(rows)
        return
    console.table(f"{len(rows)} hand(s)", ["hand", "table", "#", "tier", "players", "started",
                                           "outcome", "winners"],
                  [(r["id"], r["table_id"], r["number"], r["tier"],
                    ", ".join(s["player"] for s in r["seats"]), r["started_at"][:19],
                    r["outcome"], ", ".join(r["winners"])) for r in rows], right_align=(0, 2))


@app.command()
def show(
    hand: int = typer.Argument(..., help="Hand id (see `hands list`)."),
    db: Optional[str] = DB_OPTION,
    as_json: bool = typer.Option(False, "--json", help="Print the hand as JSON."),
) -> None:
    """A recorded hand: timeline, deck commitment, revealed seed and whether it verifies."""
    from gmtool.audit.dispute import hand_report
    from gmtool.cli.render_hands import render_report

    with open_store(db) as store:
        report = hand_report(store, hand)
    if as_json:
        console.json(report)
    else:
        console.lines(render_report(report))


@app.command()
def export(
    hand: int = typer.Argument(..., help="Hand id."),
    output_format: str = typer.Option("md", "--format", help="md or json."),
    db: Optional[str] = DB_OPTION,
) -> None:
    """A dispute report for a support ticket (markdown or JSON)."""
    from gmtool.audit.dispute import hand_report
    from gmtool.cli.render_hands import markdown_report

    if output_format not in ("md", "json"):
        raise Abort(f"unknown --format {output_format!r}; use md or json")
    with open_store(db) as store:
        report = hand_report(store, hand, with_replay=True)
    if output_format == "json":
        console.json(report)
    else:
        console.raw(markdown_report(report))


@app.command()
def replay(
    hand: int = typer.Argument(..., help="Hand id."),
    db: Optional[str] = DB_OPTION,
    as_json: bool = typer.Option(False, "--json", help="Print {hand, ok, problems} as JSON."),
) -> None:
    """Re-run the recorded actions through the engine under the hand's recorded config."""
    from gmtool.audit.replay import replay_hand

    with open_store(db) as store:
        result = replay_hand(store, hand)
    if as_json:
        console.json(result.as_json())
    elif result.ok:
        console.line(f"hand {hand}: replay matches, {result.events_checked} events and the "
                     "settlement identical")
    else:
        console.line(f"hand {hand}: MISMATCH")
        console.lines(f"  {p['kind']}: {p['detail']}" for p in result.problems[:1])
    if not result.ok:
        raise typer.Exit(1)
