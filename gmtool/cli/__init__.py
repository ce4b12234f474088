"""The gmtool command line: command groups registered in one readable block.

Each group lives in its own module with its own `typer.Typer()`. Those modules import
only typer at load time; everything heavy (rich, tomlkit, sqlite_utils, the engine) is
imported inside the command that uses it, so `gmtool --help` stays fast.
"""

from __future__ import annotations

import typer

from gmtool import __version__
from gmtool.cli import (
    audit,
    checkpoint,
    db,
    demo,
    deploy,
    gm,
    hands,
    house,
    players,
    rules,
    tables,
    verify,
)
from gmtool.cli.errors import GmtoolGroup

app = typer.Typer(
    name="gmtool",
    cls=GmtoolGroup,
    help="GM console and rule-configuration CLI for showhand card games.",
    no_args_is_help=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    add_completion=True,  # --install-completion / --show-completion (bash, zsh, fish)
    context_settings={"help_option_names": ["-h", "--help"]},
)

app.add_typer(rules.app, name="rules")
app.add_typer(hands.app, name="hands")
app.add_typer(db.app, name="db")
app.add_typer(deploy.app, name="deploy")
app.add_typer(house.app, name="house")
app.command("demo")(demo.demo)
app.add_typer(tables.app, name="tables")
app.add_typer(players.app, name="players")
app.command("audit")(audit.audit)
app.add_typer(gm.app, name="gm")
app.add_typer(checkpoint.app, name="checkpoint")
app.command("verify")(verify.verify)


def _show_version(value: bool) -> None:
    if value:
        typer.echo(f"gmtool {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks for internal errors."),
    version: bool = typer.Option(
        False,
        "--version",
        callback=_show_version,
        is_eager=True,
        help="Print the version and exit.",
    ),
) -> None:
    """GM console and rule-configuration CLI for showhand card games."""
    # --debug is read where errors become messages (GmtoolGroup.invoke, from ctx.params),
    # not put into the environment, where it would outlive this invocation.


def main() -> None:
    """Console-script entry point."""
    app()
