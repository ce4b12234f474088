"""`gmtool rules simulate`: what a profile (or a change to it) does to players, by bots."""

from __future__ import annotations

from pathlib import Path

import typer

from gmtool.bounds import MAX_JOBS
from gmtool.cli.common import JSON_OPTION, emit
from gmtool.cli.console import console


def simulate(
    profile: Path = typer.Argument(..., help="The profile to play."),
    tiers: list[str] = typer.Option(
        [],
        "--tier",
        metavar="ID",
        help="Only this tier (repeatable); a closed tier is "
        "played as if open. Default: every enabled tier.",
    ),
    hands: int = typer.Option(
        10_000, "--hands", min=1, max=1_000_000, help="Hands a tier (each profile)."
    ),
    players: str = typer.Option(
        "4",
        "--players",
        metavar="N|A-B",
        help="Players a hand: a count, or a range drawn per hand.",
    ),
    seed: str = typer.Option(
        "0", "--seed", help="Seed of decks, seats and bots: the same seed gives the same report."
    ),
    jobs: int = typer.Option(
        1, "--jobs", min=1, max=MAX_JOBS, help="Worker processes; the report does not depend on it."
    ),
    as_json: bool = JSON_OPTION,
    vs: Path | None = typer.Option(
        None,
        "--vs",
        metavar="OTHER.toml",
        help="Also play this profile on the same seeds and show each change with its 95% interval.",
    ),
    policies: list[str] = typer.Option(
        [],
        "--policy",
        metavar="POLICY",
        help="Bot policy of each seat in turn, cycled "
        "(repeatable or comma-separated): cautious, loose, "
        "aggressive, station, escaper:P.",
    ),
    plot: Path | None = typer.Option(
        None,
        "--plot",
        metavar="FILE.png",
        help="Draw the distributions into a PNG (needs pip install 'gmtool[plot]').",
    ),
    fail_if: list[str] = typer.Option(
        [],
        "--fail-if",
        metavar="BOUND",
        help="Exit 1 when BOUND holds, e.g. 'junior.seconds_per_hand.median > 90' (repeatable).",
    ),
) -> None:
    """Play each tier with bots and report pots, hand length, showdowns, all-ins, escapes,
    coins by seat and banker, and hands until a minimum-holding player is out."""
    from gmtool.cli.render_simulate import number, render_bounds, render_report
    from gmtool.simulate.whatif import what_if

    if plot is not None:
        from gmtool.simulate.plot import check_plot_target

        check_plot_target(plot)  # before the hands are played: the extra, the folder
    outcome = what_if(
        profile,
        vs,
        tiers=tiers,
        hands=hands,
        players=players,
        seed=seed,
        jobs=jobs,
        policies=policies,
        fail_if=fail_if,
    )
    if plot is not None:
        from gmtool.simulate.plot import write_plot

        write_plot(outcome, plot)
    emit(outcome.report, as_json, lambda report: render_report(report, console))
    if not as_json:
        render_bounds(outcome.verdicts, console)
    if plot is not None:
        console.diagnostic(f"wrote {plot}")
    for verdict in outcome.broken:
        console.error(
            f"bound broken: {verdict['bound']} ({verdict['tier']}: {number(verdict['value'])})"
        )
    raise typer.Exit(outcome.exit_code)
