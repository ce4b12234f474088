"""README's command table lists every command and every option of the command line, and
names none that is not there (issue 23, item 16): the CLI's own tree is walked, so a new
option fails here until the table has it, and a renamed one until the table follows.

How the table is read: each row's first cell holds one or more code spans `gmtool WORDS
[OPTIONS]` (`a\\|b` offers either word); a span documents the options written in it for
the commands its words name, and the row's second cell documents the options it names
for every command of its row. A span `gmtool COMMAND ...` documents options that every
command may have (`--db`, `--as`), and `gmtool [--version] ...` the root's own. Also: each
`gmtool ...` command that the CLI's own messages name exists, with the options they give.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
FLAG = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")
ALL = ("COMMAND",)  # the span of options every command may take


def _cli() -> dict[tuple[str, ...], set[str]]:
    """Every command of the CLI (the root is ()) and its options' flags. The hidden command
    a group runs by default (`deploy PROFILE`) counts as the group itself."""
    import typer.main

    from gmtool.cli import app

    found: dict[tuple[str, ...], set[str]] = {}

    def walk(command, path: tuple[str, ...]) -> None:
        flags = {
            flag
            for param in command.params
            if param.param_type_name == "option" and not getattr(param, "hidden", False)
            for flag in (*param.opts, *param.secondary_opts)
            if flag not in ("-h", "--help")
        }
        found.setdefault(path, set()).update(flags)
        for name, sub in (getattr(command, "commands", None) or {}).items():
            walk(sub, path + (() if sub.hidden else (name,)))

    walk(typer.main.get_command(app), ())
    return found


CLI = _cli()


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip().strip("|"))]


def command_rows() -> Iterator[tuple[str, str]]:
    """(first cell, second cell) of each row of the README's command table."""
    section = README.split("\n## Commands\n", 1)[1].split("\n## ", 1)[0]
    for line in section.splitlines():
        if line.startswith("| `gmtool"):
            first, second, *_ = _cells(line)
            yield first, second


def span_paths(span: str) -> list[tuple[str, ...]]:
    """The commands a span `gmtool WORDS ...` names: its lowercase words (`a|b`: either)."""
    words = span.replace("\\|", "|").split()[1:]
    if words[:1] == ["COMMAND"]:
        return [ALL]
    paths: list[tuple[str, ...]] = [()]
    for word in words:
        if not re.fullmatch(r"[a-z][a-z|-]*", word):
            break
        paths = [(*path, choice) for path in paths for choice in word.split("|")]
    return paths


def documented() -> dict[tuple[str, ...], set[str]]:
    """The flags the table gives each command (ALL: every command)."""
    flags: dict[tuple[str, ...], set[str]] = {}
    for first, second in command_rows():
        spans = re.findall(r"`(gmtool [^`]+)`", first)
        assert spans, f"a row of the command table names no command: {first!r}"
        row_paths = [path for span in spans for path in span_paths(span)]
        for span in spans:
            for path in span_paths(span):
                flags.setdefault(path, set()).update(FLAG.findall(span))
        for path in row_paths:
            flags.setdefault(path, set()).update(FLAG.findall(second))
    return flags


DOCUMENTED = documented()


def test_the_table_is_read() -> None:
    """Guard for the parser: the table names dozens of commands and their options."""
    assert len(DOCUMENTED) > 35 and ALL in DOCUMENTED and () in DOCUMENTED
    assert "--grace" in DOCUMENTED[("house", "run")]


@pytest.mark.parametrize("path", sorted(CLI), ids=lambda path: " ".join(path) or "gmtool")
def test_every_command_and_option_is_in_the_readme_command_table(path: tuple[str, ...]) -> None:
    if path and path not in DOCUMENTED:
        groups = [p for p in DOCUMENTED if p[: len(path)] == path and len(p) > len(path)]
        assert groups and not CLI[path], f"`gmtool {' '.join(path)}` is not in README's table"
    missing = sorted(CLI[path] - DOCUMENTED.get(path, set()) - DOCUMENTED[ALL])
    assert not missing, f"README's table lacks {missing} of {' '.join(('gmtool', *path))}"


def test_the_readme_command_table_names_only_what_exists() -> None:
    """A span names existing commands, with options each of them has (a COMMAND span:
    options some command has); a description names options of its row's commands."""
    every = set().union(*CLI.values())
    wrong = []
    for first, _ in command_rows():
        for span in re.findall(r"`(gmtool [^`]+)`", first):
            for path in span_paths(span):
                have = every if path == ALL else CLI.get(path)
                if have is None:
                    wrong.append(f"{span}: no command `gmtool {' '.join(path)}`")
                    continue
                wrong += [f"{span}: {flag}" for flag in FLAG.findall(span) if flag not in have]
    assert not wrong, wrong


def _message_commands() -> list[tuple[str, str]]:
    """(module, `gmtool ...` text) for every command the CLI's source quotes to users."""
    found = []
    for module in sorted((ROOT / "gmtool").rglob("*.py")):
        text = module.read_text(encoding="utf-8")
        for quoted in re.findall(r"`(gmtool [^`\n]+)`", text):
            found.append((str(module.relative_to(ROOT)), quoted))
    return found


MESSAGES = _message_commands()


def test_messages_are_found() -> None:
    assert len(MESSAGES) > 50


@pytest.mark.parametrize("module, quoted", MESSAGES, ids=[f"{m}: {q}" for m, q in MESSAGES])
def test_commands_the_messages_name_exist_with_their_options(module: str, quoted: str) -> None:
    words = quoted.split()[1:]
    path: tuple[str, ...] = ()
    for word in words:
        if (*path, word) not in CLI:
            break
        path = (*path, word)
    if words[:1] == ["..."]:
        return  # a shape (`gmtool ... | head`), not a command
    assert path or words[0].startswith("-"), f"{module}: `{quoted}` names no command"
    flags = {word.split("=")[0] for word in words if word.startswith("-") and word != "-"}
    unknown = sorted(flags - CLI[path] - CLI[()] - {"--help", "-h"})
    assert not unknown, f"{module}: `{quoted}`: `gmtool {' '.join(path)}` has no {unknown}"
