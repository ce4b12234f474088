"""`gmtool gm witness`: where the store's signed checkpoints are kept and who cosigns
them (its witnesses: folders and served witnesses), and how many served witnesses an
audit requires (the quorum), changed only by an operator's signed, logged GM action
(docs/evidence.md)."""

from __future__ import annotations

import typer

from gmtool.cli.common import (
    AS_OPTION,
    DB_OPTION,
    JSON_OPTION,
    acting_user,
    emit,
    with_any_store,
    writing_any,
)
from gmtool.cli.console import console

app = typer.Typer(
    help="The store's witnesses: the folders its signed checkpoints go to and the served "
    "witnesses that cosign them; the audit checks the store against them.",
    no_args_is_help=True,
    rich_markup_mode=None,
)

FOLDER_ARGUMENT = typer.Argument(
    ...,
    metavar="DIR|URL",
    help="A witness folder (relative to the working directory), or a served witness's URL.",
)


@app.command("add")
def add(
    folder: str = FOLDER_ARGUMENT,
    key: str | None = typer.Option(
        None, "--key", metavar="PUB", help="A served witness's verifier key (its KEY.pub file)."
    ),
    db: str | None = DB_OPTION,
    as_user: str | None = AS_OPTION,
    as_json: bool = JSON_OPTION,
) -> None:
    """Record DIR (made if it is missing) or a served witness at URL, with its key
    (`gmtool witness serve` prints it), as a witness of the store (operators, signed with
    your key): checkpoints go to it from now on, one at once, and the audit checks them.
    Put it on other storage, or another machine, than the store."""
    from gmtool.ops.witnesses import add as add_witness

    emit(
        writing_any(db, add_witness, acting_user(as_user), folder, key),
        as_json,
        _render("now a witness"),
    )


@app.command("quorum")
def quorum(
    count: int = typer.Argument(..., metavar="N", help="How many served witnesses."),
    db: str | None = DB_OPTION,
    as_user: str | None = AS_OPTION,
    as_json: bool = JSON_OPTION,
) -> None:
    """Require N of the served witnesses to hold a cosigned checkpoint the store extends
    in every audit (operators, signed with your key; until set: all of them)."""
    from gmtool.ops.witnesses import set_quorum

    def render(done: dict) -> None:
        if not done["changed"]:
            console.success(f"the quorum is {done['quorum']} already (unchanged)")
            return
        console.success(
            f"the audit now requires {done['quorum']} served witness(es) to agree "
            f"(GM action {done['gm_action']})"
        )
        _signed(done)

    emit(writing_any(db, set_quorum, acting_user(as_user), count), as_json, render)


@app.command("remove")
def remove(
    folder: str = FOLDER_ARGUMENT,
    db: str | None = DB_OPTION,
    as_user: str | None = AS_OPTION,
    as_json: bool = JSON_OPTION,
) -> None:
    """Stop signing checkpoints into DIR and auditing against it (operators, signed with
    your key); its files stay. The store's last witness cannot be removed."""
    from gmtool.ops.witnesses import remove as remove_witness

    emit(
        writing_any(db, remove_witness, acting_user(as_user), folder),
        as_json,
        _render("no longer a witness", "; its files stay"),
    )


def _render(now: str, after: str = ""):
    def render(done: dict) -> None:
        if done.get("created"):
            console.line(f"created the folder {done['folder']}")
        if not done["changed"]:
            console.success(f"{done['folder']} is a witness of this store already (unchanged)")
            return
        console.success(
            f"{done['folder']} is {now} of this store (GM action {done['gm_action']}){after}"
        )
        _signed(done)

    return render


def _signed(done: dict) -> None:
    for note in done.get("notes", []):
        console.warning(note)
    if done["signed"]:
        console.line(f"signed a checkpoint into {', '.join(done['signed'])}")
    elif done["unsigned"]:
        console.warning(f"no checkpoint signed now: {done['unsigned']}")


@app.command("list")
def list_(db: str | None = DB_OPTION, as_json: bool = JSON_OPTION) -> None:
    """The store's witnesses and every change to them: when, what, by whom."""
    from gmtool.ops.witnesses import listing

    emit(with_any_store(db, listing), as_json, _render_list)


def _unplaced(location: str) -> str:
    return (
        f"{location} (beside the SQLite file this PostgreSQL store was copied from: it has "
        "no file; give --witness FOLDER where its checkpoints are kept)"
    )


def _render_list(found: dict) -> None:
    if found["witnesses"]:
        console.line("witnesses (checkpoints are signed into and audited against each):")
        console.lines(
            f"  {w['type']} {w.get('folder') or w.get('url') or _unplaced(w['location'])}"
            + (f" key {w['key']}" if w.get("key") else "")
            for w in found["witnesses"]
        )
        if any(w.get("url") for w in found["witnesses"]):
            console.line(
                f"quorum: {found['quorum']} served witness(es) must agree"
                + ("" if found["quorum_set"] else " (all: none set)")
            )
    elif found["unrecorded_default"] is None:  # PostgreSQL: no folder beside the store
        console.line(
            "this store records no witness yet: checkpoint commands use the folder --witness "
            "DIR names; its next host start records the folder it signs into, or an operator "
            "records one: `gmtool gm witness add DIR`"
        )
    else:
        console.line(
            f"this store records no witness yet: checkpoint commands use "
            f"{found['unrecorded_default']} (or --witness DIR); its next host start records "
            "the folder it signs into, or an operator records one: `gmtool gm witness add DIR`"
        )
    if found["changes"]:
        console.line("changes:")
        console.lines(
            f"  #{c['id']} {c['at'][:19]} "
            + (
                f"quorum set to {c['location']} "
                if c["change"] == "quorum"
                else f"{c['change']} {c['type']} {c['location']} "
            )
            + (
                f"(by {c['by']}, GM action {c['gm_action_id']})"
                if c["gm_action_id"] is not None
                else "(by the store's first host start)"
            )
            for c in found["changes"]
        )
