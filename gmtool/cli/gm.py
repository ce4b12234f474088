"""`gmtool gm`: GM users and roles, and the hash-chained log of every GM action."""

from __future__ import annotations

import typer

from gmtool.bounds import MAX_COUNT
from gmtool.cli.common import (
    AS_OPTION,
    DB_OPTION,
    JSON_OPTION,
    acting_name,
    acting_user,
    emit,
    with_any_store,
    writing_any,
)
from gmtool.cli.console import console
from gmtool.cli.formats import moment
from gmtool.cli.gm_witness import app as witness
from gmtool.cli.render_gm import outcome_words

app = typer.Typer(
    help="GM users (roles) and the GM action log.", no_args_is_help=True, rich_markup_mode=None
)
users = typer.Typer(
    help="GM users: operators act, support reads.", no_args_is_help=True, rich_markup_mode=None
)
keys = typer.Typer(
    help="Your GM keys: each GM signs what they do with their own key.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(users, name="users")
app.add_typer(keys, name="keys")
app.add_typer(witness, name="witness")


@keys.command("new")
def keys_new(
    name: str | None = typer.Argument(
        None, help="Your GM user name (default: $GMTOOL_USER, else your login name)."
    ),
    replace: bool = typer.Option(
        False, "--replace", help="Replace a key you have (an operator must register the new one)."
    ),
    as_json: bool = JSON_OPTION,
) -> None:
    """Make your key pair: the private key stays in your config folder (0600); give the
    public key this prints to an operator, who registers it with your role."""
    from gmtool.evidence.gm_keys import new_key

    signer, path = new_key(acting_name(name), replace=replace)
    public = signer.verifier.text()
    emit(
        {"name": signer.name, "key": public, "private_key_file": str(path)},
        as_json,
        lambda _: console.lines(
            [
                f"private key: {path} (readable by you only; keep it, never share it)",
                f"public key:  {public}",
                f"an operator registers it: gmtool gm users add {signer.name} --role ROLE "
                f"--key {public}",
            ]
        ),
    )


@keys.command("show")
def keys_show(
    name: str | None = typer.Argument(
        None, help="Your GM user name (default: $GMTOOL_USER, else your login name)."
    ),
    as_json: bool = JSON_OPTION,
) -> None:
    """Your public key (the one to register), from the private key in your config folder."""
    from gmtool.cli.console import Abort
    from gmtool.evidence.gm_keys import key_path, load_key

    name = acting_name(name)
    signer = load_key(name)
    if signer is None:
        raise Abort(
            f"no GM key for {name} at {key_path(name)}: make one with `gmtool gm keys new {name}`"
        )
    public = signer.verifier.text()
    emit(
        {"name": name, "key": public, "private_key_file": str(key_path(name))},
        as_json,
        lambda _: console.line(public),
    )


@users.command("add")
def users_add(
    name: str = typer.Argument(..., help="User name."),
    role: str = typer.Option(..., "--role", help="operator or support."),
    key: str | None = typer.Option(
        None,
        "--key",
        help="The GM's public key (`gmtool gm keys new` printed it); needed for a new GM.",
    ),
    db: str | None = DB_OPTION,
    as_user: str | None = AS_OPTION,
) -> None:
    """Register a GM user with their key and role, or change a GM's role or key (operators,
    signed with your key). The first operator is registered by `gmtool db init`."""
    from gmtool.ops.gm import add_user

    changed = writing_any(db, add_user, acting_user(as_user), name, role, key)
    console.success(f"{name} is now {role}" + ("" if changed else " (unchanged)"))


@users.command("list")
def users_list(db: str | None = DB_OPTION, as_json: bool = JSON_OPTION) -> None:
    """GM users and their roles."""
    from gmtool.store.gm import users

    emit(
        with_any_store(db, users),
        as_json,
        lambda rows: console.table(
            "GM users",
            ["name", "role", "key", "since"],
            [
                (r["name"], r["role"], r["key"] or "none: cannot act", moment(r["created_at"]))
                for r in rows
            ],
            keep=("name", "key"),
        ),
    )


@app.command()
def log(
    db: str | None = DB_OPTION,
    limit: int = typer.Option(
        0, "--limit", min=0, max=MAX_COUNT, help="Only the newest N; 0 = all."
    ),
    as_json: bool = JSON_OPTION,
) -> None:
    """Every GM action: who, what, target, reason, when, outcome (refusals included)."""
    from gmtool.store.queries import gm_log

    emit(with_any_store(db, gm_log, limit), as_json, _render_log)


def _render_log(rows: list[dict]) -> None:
    console.table(
        "GM log",
        ["#", "at", "who", "action", "target", "reason", "outcome"],
        [
            (
                r["id"],
                moment(r["at"]),
                r["actor"] or "",
                r["action"],
                r["target"] or "",
                r["reason"] or "",
                outcome_words(r["action"], r["outcome"]),
            )
            for r in rows
        ],
        right_align=(0,),
        keep=("#", "who", "action"),
    )
