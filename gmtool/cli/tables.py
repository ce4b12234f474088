"""`gmtool tables`: live tables (list, show, watch), GM commands to them (kick, close) and
reopening a closed one (open).

Hole cards of a running hand never appear here, in any format (RULES G3): the host
publishes only the engine's public view, which has none.
"""

from __future__ import annotations

import typer

from gmtool.bounds import MAX_COUNT
from gmtool.cli.common import (
    AS_OPTION,
    DB_OPTION,
    JSON_OPTION,
    acting_user,
    emit,
    number_option,
    open_store,
    with_any_store,
    writing_any,
)
from gmtool.cli.console import Abort, console

WAIT_OPTION = typer.Option(
    False,
    "--wait",
    help="When no host runs the table, queue it anyway for a host that starts within "
    "--timeout seconds (default: say so at once and send nothing).",
)

app = typer.Typer(
    help="Live tables: list, show, watch; kick a player, close or reopen a table.",
    no_args_is_help=True,
    rich_markup_mode=None,
)


@app.command("list")
def list_(
    db: str | None = DB_OPTION,
    closed: bool = typer.Option(
        False, "--closed", help="Include tables that are closed or not hosted now."
    ),
    as_json: bool = JSON_OPTION,
) -> None:
    """Every live table: system, room, config, players, pot, street, whose turn, time left."""
    from gmtool.cli.render_tables import render_tables, table_summaries

    emit(with_any_store(db, table_summaries, include_closed=closed), as_json, render_tables)


@app.command()
def show(
    table: str = typer.Argument(..., help="Table id (see `tables list`)."),
    db: str | None = DB_OPTION,
    as_json: bool = JSON_OPTION,
) -> None:
    """One table in detail: players, coins, face-up cards, disconnections and countdowns."""
    from gmtool.cli.render_tables import render_table, table_summaries

    found = [
        s for s in with_any_store(db, table_summaries, include_closed=True) if s["id"] == table
    ]
    if not found:
        raise Abort(f"no table {table!r} (see `gmtool tables list`)")
    emit(found[0], as_json, lambda summary: console.lines(render_table(summary)))


@app.command()
def watch(
    table: str | None = typer.Argument(None, help="One table; default all."),
    db: str | None = DB_OPTION,
    interval: float = number_option(
        1.0, "--interval", min=0.1, max=3600.0, help="Seconds between refreshes."
    ),
    count: int | None = typer.Option(
        None, "--count", min=1, max=MAX_COUNT, help="Stop after N refreshes."
    ),
) -> None:
    """Refresh the live view in place until Ctrl-C."""
    from gmtool.cli.render_tables import watch_tables
    from gmtool.store.tables import exists as table_exists

    with open_store(db, postgres=True) as store:
        if table is not None and not table_exists(store, table):
            raise Abort(f"no table {table!r} (see `gmtool tables list`)")
        watch_tables(store, table, interval, count, console)


@app.command()
def kick(
    table: str = typer.Argument(..., help="Table id."),
    player: str = typer.Argument(..., help="The player to remove."),
    reason: str = typer.Option(..., "--reason", help="Why (recorded in the GM log)."),
    timeout: float = number_option(
        10.0, "--timeout", min=0.1, max=3600.0, help="Seconds to wait for the host."
    ),
    wait: bool = WAIT_OPTION,
    db: str | None = DB_OPTION,
    as_user: str | None = AS_OPTION,
) -> None:
    """Kick a player (operators): during a hand it is an escape under the profile's policy."""
    from gmtool.cli.render_tables import command_lines
    from gmtool.ops.tables import send_command

    console.lines(
        command_lines(
            writing_any(
                db,
                send_command,
                acting_user(as_user),
                "kick",
                table,
                player,
                reason,
                timeout,
                wait,
            )
        )
    )


@app.command()
def close(
    table: str = typer.Argument(..., help="Table id."),
    reason: str = typer.Option("", "--reason", help="Why (recorded in the GM log)."),
    timeout: float = number_option(
        10.0, "--timeout", min=0.1, max=3600.0, help="Seconds to wait for the host."
    ),
    wait: bool = WAIT_OPTION,
    db: str | None = DB_OPTION,
    as_user: str | None = AS_OPTION,
) -> None:
    """Close a table (operators); a running hand is voided with every stake returned. It
    stays closed, across host restarts, until a GM reopens it (`tables open`)."""
    from gmtool.cli.render_tables import command_lines
    from gmtool.ops.tables import send_command

    outcome = writing_any(
        db, send_command, acting_user(as_user), "close", table, None, reason or None, timeout, wait
    )
    if since := outcome.get("already_closed"):
        console.line(
            f"{table} is already closed"
            + (f" (since {since[:19]})" if isinstance(since, str) else "")
            + f": unchanged; `gmtool tables open {table}` reopens it"
        )
    else:
        console.lines(command_lines(outcome))


@app.command("open")
def open_(
    table: str = typer.Argument(..., help="Table id (see `tables list --closed`)."),
    reason: str = typer.Option("", "--reason", help="Why (recorded in the GM log)."),
    db: str | None = DB_OPTION,
    as_user: str | None = AS_OPTION,
) -> None:
    """Reopen a table a GM closed (operators): the next `house run` start hosts it again."""
    from gmtool.ops.tables import reopen

    outcome = writing_any(db, reopen, acting_user(as_user), table, reason or None)
    if outcome.get("opened"):
        console.line(
            f"reopened {table}: the next `gmtool house run` start hosts it again "
            "(a host running now does not)"
        )
    else:
        console.line(f"{table} is not closed ({outcome['not_closed']}): unchanged")
