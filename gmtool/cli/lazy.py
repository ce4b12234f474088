"""Command groups loaded the first time they are named.

typer builds a group by turning every parameter of every command into click objects
(signatures, type hints, converters), and that costs more than importing the modules:
built eagerly, `gmtool rules validate` would pay for every command of every group. A
`LazyGroup` holds (module, attribute) pairs instead: `gmtool rules validate` builds the
`rules` group alone, and `gmtool --help` lists every command from its help text without
building any.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Iterator, MutableMapping
from typing import Any, ClassVar

import typer
from typer.core import TyperGroup, TyperOption

from gmtool.cli.errors import GmtoolGroup


def target_of(place: tuple[str, str]) -> Any:
    """The typer.Typer group or command function at (module, attribute)."""
    module, attribute = place
    return getattr(importlib.import_module(module), attribute)


def build(name: str, target: Any) -> Any:
    """The click command of `target` under `name`, built as `add_typer`/`command` would."""
    holder = typer.Typer(rich_markup_mode=None, add_completion=False)
    holder.callback()(lambda: None)  # (a group, so that the command keeps its own name)
    if isinstance(target, typer.Typer):
        holder.add_typer(target, name=name)
    else:
        holder.command(name)(target)
    command = typer.main.get_command(holder).commands[name]  # type: ignore[attr-defined]
    accept_debug(command)
    return command


def _root_debug(ctx: typer.Context, param: Any, value: bool) -> None:
    if value:
        ctx.find_root().params["debug"] = True  # read where errors become messages


def accept_debug(command: Any) -> None:
    """`--debug` after the command as before it (`gmtool hands list --debug`): a hidden
    flag on `command` and every command under it that sets the root's (help unchanged)."""
    command.params.append(
        TyperOption(
            param_decls=["--debug"],
            is_flag=True,
            hidden=True,
            expose_value=False,
            callback=_root_debug,
        )
    )
    for sub in getattr(command, "commands", {}).values():
        accept_debug(sub)


def help_text(target: Any) -> str:
    """The help text typer would give `target` (a group's help=, a command's docstring)."""
    if isinstance(target, typer.Typer):
        text = target.info.help
        return inspect.cleandoc(text) if isinstance(text, str) else ""
    return inspect.getdoc(target) or ""


class LazyCommands(MutableMapping[str, Any]):
    """A group's commands by name: those in `places` are built when first looked up.
    Iterating lists every name (in the places' order) without building anything, so
    typer's "did you mean" suggestions see every command."""

    def __init__(self, places: dict[str, tuple[str, str]], built: dict[str, Any]) -> None:
        self.places = places
        self.built = dict(built)

    def __getitem__(self, name: str) -> Any:
        if name not in self.built:
            if name not in self.places:
                raise KeyError(name)
            self.built[name] = build(name, target_of(self.places[name]))
        return self.built[name]

    def __setitem__(self, name: str, command: Any) -> None:
        self.built[name] = command

    def __delitem__(self, name: str) -> None:
        self.built.pop(name, None)
        self.places = {key: place for key, place in self.places.items() if key != name}

    def __iter__(self) -> Iterator[str]:
        yield from self.places
        yield from (name for name in self.built if name not in self.places)

    def __len__(self) -> int:
        return len(self.places.keys() | self.built.keys())

    def __contains__(self, name: object) -> bool:
        return name in self.places or name in self.built

    def summary(self, name: str) -> Any:
        """The command if built, else a stand-in with its help text (for a help listing)."""
        if name in self.built:
            return self.built[name]
        help_ = help_text(target_of(self.places[name]))
        return TyperGroup(name=name, help=help_, rich_markup_mode=None)


class LazyGroup(GmtoolGroup):
    """A root group whose subcommands (`LAZY`: name -> (module, attribute)) are built
    when named; its help lists them from their help text alone."""

    LAZY: ClassVar[dict[str, tuple[str, str]]] = {}

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self.commands = LazyCommands(self.LAZY, self.commands)

    def format_commands(self, ctx, formatter):  # noqa: ANN001 - click's signature
        commands: LazyCommands = self.commands  # type: ignore[assignment]
        shown = [(name, commands.summary(name)) for name in commands]
        shown = [(name, command) for name, command in shown if not command.hidden]
        if not shown:
            return
        limit = formatter.width - 6 - max(len(name) for name, _ in shown)
        with formatter.section("Commands"):
            formatter.write_dl([(name, cmd.get_short_help_str(limit)) for name, cmd in shown])
