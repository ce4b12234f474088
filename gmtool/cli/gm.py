"""`gmtool gm`: GM users and roles, and the hash-chained log of every GM action."""

from __future__ import annotations

from typing import Optional

import typer

from gmtool.bounds import MAX_COUNT
from gmtool.cli.common import (
    AS_OPTION,
    DB_OPTION,
    JSON_OPTION,
    acting_user,
    emit,
    with_store,
    writing,
)
from gmtool.cli.console import console

app = typer.Typer(help="GM users (roles) and the GM action log.", no_args_is_help=True,
                  rich_markup_mode=None)
users = typer.Typer(help="GM users: operators act, support reads.", no_args_is_help=True,
                    rich_markup_mode=None)
app.add_typer(users, name="users")


@users.command("add")
def users_add(name: str = typer.Argument(..., help="User name."),
              role: str = typer.Option(..., "--role", help="operator or support."),
              db: Optional[str] = DB_OPTION, as_user: Optional[str] = AS_OPTION) -> None:
    """Add (or change the role of) a GM user; the first operator may be added by anyone."""
    from gmtool.house.gm_ops import add_user

    writing(db, add_user, acting_user(as_user), name, role)
    console.success(f"{name} is now {role}")


@users.command("list")
def users_list(db: Optional[str] = DB_OPTION,
               as_json: bool = JSON_OPTION) -> None:
    """GM users and their roles."""
    from gmtool.store.gm import users

    emit(with_store(db, users), as_json, lambda rows: console.table(
        "GM users", ["name", "role", "since"],
        [(r["name"], r["role"], r["created_at"][:19]) for r in rows]))


@app.command()
def log(db: Optional[str] = DB_OPTION,
        limit: int = typer.Option(0, "--limit", min=0, max=MAX_COUNT,
                                  help="Only the newest N; 0 = all."),
        as_json: bool = JSON_OPTION) -> None:
    """Every GM action: who, what, target, reason, when, outcome (refusals included)."""
    from gmtool.store.queries import gm_log

    emit(with_store(db, gm_log, limit), as_json, _render_log)


def _render_log(rows: list[dict]) -> None:
    console.table("GM log", ["#", "at", "who", "action", "target", "reason", "outcome"],
                  [(r["id"], r["at"][:19], r["actor"] or "", r["action"], r["target"] or "",
                    r["reason"] or "", _outcome(r["outcome"])) for r in rows], right_align=(0,),
                  keep=("#", "action", "outcome"), drop=("reason", "at", "target"))


def _outcome(outcome: dict) -> str:
    if outcome.get("refused"):
        return "REFUSED: " + outcome["refused"]
    if not outcome.get("ok", True):
        return "failed: " + str(outcome.get("error", ""))
    return "ok"
