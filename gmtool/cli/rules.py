"""`gmtool rules`: validate, compile, show, diff, set, schema, odds and simulate rule profiles."""

from __future__ import annotations

from pathlib import Path

import typer

from gmtool.cli.common import FORMAT_OPTION, JSON_OPTION, emit, write_output
from gmtool.cli.console import Abort, console
from gmtool.cli.reporters import ReportFormat, report_with
from gmtool.cli.simulate import simulate

app = typer.Typer(
    help="Validate, compile, inspect, compare, edit and simulate rule profiles.",
    no_args_is_help=True,
    rich_markup_mode=None,
)


@app.command()
def validate(
    paths: list[str] = typer.Argument(
        ..., metavar="PATH...", help="Profile files or folders (searched for *.toml)."
    ),
    as_json: bool = JSON_OPTION,
    output_format: ReportFormat | None = FORMAT_OPTION,
    strict: bool = typer.Option(False, "--strict", help="Warnings fail too (exit 1)."),
) -> None:
    """Check profiles and report every finding with file, line, column and key path."""
    from gmtool.rules.validate import validate_paths

    report = validate_paths(paths)
    for problem in report.unusable:  # (the others are still checked: exit 2 at the end)
        console.error(problem)
    raise typer.Exit(report_with(output_format, as_json, report, console, strict))


@app.command("compile")
def compile_(
    profile: Path = typer.Argument(..., help="The profile to compile."),
    output: Path | None = typer.Option(
        None, "-o", "--output", help="Write to this file (`-`: standard output)."
    ),
) -> None:
    """Print the canonical engine configuration with its config_id."""
    from gmtool.canonical import canonical_json
    from gmtool.rules.compile import compile_file

    text = canonical_json(compile_file(profile)) + "\n"
    if output is None or str(output) == "-":  # `-o -`: standard output, as in most tools
        console.raw(text)
    else:
        write_output(output, text, "-o", f"{profile.stem}.json")
        console.success(f"wrote {output}")


@app.command()
def show(
    profile: Path = typer.Argument(..., help="The profile to show."),
    tier: str | None = typer.Option(None, "--tier", help="Only this tier (by id)."),
    as_json: bool = JSON_OPTION,
) -> None:
    """Show the tiers as a table (like RULES Q2 / H5), time limits, policies and ladder."""
    from gmtool.cli.render_rules import render_profile
    from gmtool.rules.compile import compile_file

    compiled = compile_file(profile)
    if tier is not None:
        tiers = [t for t in compiled["tiers"] if t["id"] == tier]
        if not tiers:
            ids = ", ".join(t["id"] for t in compiled["tiers"])
            raise Abort(f"no tier {tier!r} in {profile} (tiers: {ids})")
        compiled = {**compiled, "tiers": tiers}
    emit(compiled, as_json, lambda value: render_profile(value, console))


@app.command()
def diff(
    old: Path = typer.Argument(..., help="The profile before the change."),
    new: Path = typer.Argument(..., help="The profile after the change."),
    as_json: bool = JSON_OPTION,
) -> None:
    """Say what changes for players between two profiles, field by field."""
    from gmtool.rules.compile import compile_file
    from gmtool.rules.diff import diff_configs

    before, after = compile_file(old), compile_file(new)
    changes = diff_configs(before, after)
    if as_json:
        console.json(
            {
                "old": before["config_id"],
                "new": after["config_id"],
                "changes": [change.as_json() for change in changes],
            }
        )
    elif changes:
        console.lines(change.message for change in changes)
    else:
        console.line(
            "no change for players"
            + ("" if before["config_id"] == after["config_id"] else " (only names or metadata)")
        )


@app.command("set")
def set_(
    profile: Path = typer.Argument(..., help="The profile to edit in place."),
    pairs: list[str] = typer.Argument(
        ...,
        metavar="KEY VALUE [KEY VALUE ...]",
        help="Dotted key paths, tiers by id (tiers.junior.hand_cap), each followed by its "
        'new value as TOML (600, true, [1, 5], "x").',
    ),
) -> None:
    """Edit values keeping comments and layout, all validated together; refuse (exit 1)
    an invalid result, writing nothing."""
    from gmtool.rules.edit import InvalidEdit, edit_file

    if len(pairs) % 2:
        raise Abort(f"{pairs[-1]!r} has no VALUE: give KEY VALUE pairs; nothing was changed")
    try:
        edited = edit_file(profile, list(zip(pairs[::2], pairs[1::2])))
    except InvalidEdit as refused:
        for finding in refused.findings:
            console.diagnostic(str(finding))
        raise Abort(f"{profile} left unchanged: {refused}", code=1) from None
    for warning in edited.warnings:
        console.diagnostic(str(warning))
    console.lines(
        f"{profile}: {edit.key} = {edit.new!r} (was {edit.old!r})" for edit in edited.edits
    )


@app.command()
def schema() -> None:
    """Print the JSON Schema of the profile format (committed as rules/profile.schema.json)."""
    import json

    from gmtool.rules.jsonschema import profile_json_schema

    console.raw(json.dumps(profile_json_schema(), ensure_ascii=False, indent=2) + "\n")


@app.command("test")
def test_(
    paths: list[str] = typer.Argument(
        ..., metavar="PATH...", help="Scenario files or folders (searched for *.toml)."
    ),
    as_json: bool = JSON_OPTION,
    output_format: ReportFormat | None = FORMAT_OPTION,
) -> None:
    """Run every scenario under PATH...; exit 1 if any expectation is unmet."""
    from gmtool.sandbox.suite import SuiteReport, run_scenarios

    report = SuiteReport(run_scenarios(paths))
    if not report.results:
        raise Abort("no scenario files found under " + " ".join(paths))
    raise typer.Exit(report_with(output_format, as_json, report, console))


@app.command()
def odds(
    profile: Path = typer.Argument(..., help="The profile whose deck to enumerate."),
    as_json: bool = JSON_OPTION,
) -> None:
    """Exact category counts by enumerating every hand of the profile's deck."""
    from gmtool.engine.games import ranking_for
    from gmtool.engine.odds import odds_report
    from gmtool.rules.compile import compile_file

    categories, notes = odds_report(ranking_for(compile_file(profile)))
    total = sum(c["count"] for c in categories)
    if as_json:
        console.json({"hands_total": total, "categories": categories, "notes": notes})
        return
    console.table(
        f"{profile}: {total:,} hands",
        ["rank", "category", "count", "probability"],
        [(c["rank"], c["name"], f"{c['count']:,}", f"{c['probability']:.6f}") for c in categories],
        right_align=(0, 2, 3),
    )
    console.lines(f"note: {note}" for note in notes)


app.command("simulate")(simulate)  # gmtool/cli/simulate.py: bots play the profile (what-if)
