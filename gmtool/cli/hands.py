"""`gmtool hands`: compare hands, play scripted hands (the sandbox)."""

from __future__ import annotations

from pathlib import Path
from typing import List

import typer

from gmtool.cli.console import Abort, console

app = typer.Typer(help="Compare hands and play scripted hands; later: recorded hands.",
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
