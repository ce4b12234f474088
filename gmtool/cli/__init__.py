"""The gmtool command line: the command groups, registered in one readable block.

Each group lives in its own module with its own `typer.Typer()`, and is loaded only when
it is named: `gmtool rules validate` builds the `rules` group alone, and `gmtool --help`
lists every group from its help text without building any (typer turns every parameter
of every command into click objects as it builds a group, which costs more than the
imports). Those modules import only typer at load time; everything heavy (rich, tomlkit,
sqlite_utils, the engine) is imported inside the command that uses it.
"""

from __future__ import annotations

import typer

from gmtool import __version__
from gmtool.cli.lazy import LazyGroup

# name -> (module, attribute: a typer.Typer group or a command function), in the order
# `gmtool --help` lists them (the three single commands first, as typer listed them).
COMMANDS: dict[str, tuple[str, str]] = {
    "demo": ("gmtool.cli.demo", "demo"),
    "audit": ("gmtool.cli.audit", "audit"),
    "verify": ("gmtool.cli.verify", "verify"),
    "rules": ("gmtool.cli.rules", "app"),
    "hands": ("gmtool.cli.hands", "app"),
    "db": ("gmtool.cli.db", "app"),
    "deploy": ("gmtool.cli.deploy", "app"),
    "house": ("gmtool.cli.house", "app"),
    "tables": ("gmtool.cli.tables", "app"),
    "players": ("gmtool.cli.players", "app"),
    "bots": ("gmtool.cli.bots", "bots"),
    "gm": ("gmtool.cli.gm", "app"),
    "checkpoint": ("gmtool.cli.checkpoint", "app"),
    "witness": ("gmtool.cli.witness", "app"),
}


# The options most commands take, accepted before the command too (`gmtool --db X hands
# list`): moved behind it, where the command parses them. Option -> whether it takes a value.
# (`--debug`, the root's own, is accepted after the command as well: cli/lazy.py.)
COMMAND_OPTIONS = {"--db": True, "--as": True, "--json": False}


def options_behind_the_command(args: list[str]) -> list[str]:
    """`args` with the command options given before the command path moved behind it
    (before a `--`, if there is one): `--db X hands list` -> `hands list --db X`, and
    `hands --db X list` -> `hands list --db X`. ValueError: they cannot be placed."""
    ahead: list[str] = []
    moved: list[str] = []
    index = 0
    while index < len(args) and args[index].startswith("-") and args[index] != "--":
        name, width = _option_at(args, index)
        (moved if name in COMMAND_OPTIONS else ahead).extend(args[index : index + width])
        index += width
    rest = args[index:]
    # Between a command group and its command (`hands --db X list`): moved as well.
    while len(rest) > 2 and rest[0] in GROUPS and rest[1].partition("=")[0] in COMMAND_OPTIONS:
        _, width = _option_at(rest, 1)
        moved.extend(rest[1 : 1 + width])
        rest = [rest[0], *rest[1 + width :]]
    if moved and not rest:
        raise ValueError(
            f"{moved[0]} goes with a command: gmtool {moved[0]}"
            f"{' VALUE' if COMMAND_OPTIONS[moved[0].partition('=')[0]] else ''} COMMAND ..."
            " (or after the command)"
        )
    if not moved:
        return args  # nothing to move: the command says what is wrong, as it did
    end = rest.index("--") if "--" in rest else len(rest)
    if any(arg in ("-h", "--help") for arg in rest[:end]):
        return [*ahead, *rest]  # help needs no store: `--db X deploy --help` shows it
    for name in COMMAND_OPTIONS:
        before = any(arg == name or arg.startswith(name + "=") for arg in moved)
        if before and any(arg == name or arg.startswith(name + "=") for arg in rest[:end]):
            raise ValueError(f"{name} is given both before and after the command: give it once")
    return [*ahead, *rest[:end], *moved, *rest[end:]]


GROUPS = {name for name, (_, attribute) in COMMANDS.items() if attribute == "app"}


def _option_at(args: list[str], index: int) -> tuple[str, int]:
    name, width = _option_width(args, index)
    if COMMAND_OPTIONS.get(name) and width == 1 and "=" not in args[index]:
        raise ValueError(f"Option '{name}' requires an argument.")
    return name, width


def _option_width(args: list[str], index: int) -> tuple[str, int]:
    """The option at `args[index]` and how many arguments it takes up (1 or 2). A value
    that names a command is the option's only if another command follows (`--as demo
    players show` is GM demo; `--db hands list` lacks the store, and the command says so)."""
    name, equals, _ = args[index].partition("=")
    if not COMMAND_OPTIONS.get(name) or equals or index + 1 >= len(args):
        return name, 1
    value = args[index + 1]
    if value.startswith("-"):  # `--db --as X`: no store named "--as"; the command says so
        return name, 1
    later = args[index + 2 :]
    later = later[: later.index("--")] if "--" in later else later
    if value in COMMANDS and not any(arg in COMMANDS for arg in later):
        return name, 1
    return name, 2


class RootGroup(LazyGroup):
    """`gmtool`: its command groups are built when named (cli/lazy.py)."""

    LAZY = COMMANDS

    def parse_args(self, ctx, args):  # noqa: ANN001 - click's signature
        try:
            args = options_behind_the_command(args)
        except ValueError as error:
            ctx.fail(str(error))  # a usage error: exit 2
        return super().parse_args(ctx, args)


app = typer.Typer(
    name="gmtool",
    cls=RootGroup,
    help="GM console and rule-configuration CLI for showhand card games.",
    no_args_is_help=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    add_completion=True,  # --install-completion / --show-completion (bash, zsh, fish)
    context_settings={"help_option_names": ["-h", "--help"]},
)


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
