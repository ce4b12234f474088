"""`gmtool db`: create or upgrade the store; on PostgreSQL, its database roles."""

from __future__ import annotations

import typer

from gmtool.cli.common import AS_OPTION, DB_OPTION, acting_user, open_store
from gmtool.cli.console import console
from gmtool.errors import UsageError

app = typer.Typer(
    help="Create or upgrade the store (SQLite, or PostgreSQL); grant PostgreSQL roles.",
    no_args_is_help=True,
    rich_markup_mode=None,
)


@app.command()
def init(db: str | None = DB_OPTION, as_user: str | None = AS_OPTION) -> None:
    """Create the database (or bring an older one up to date) and register you (--as) as
    its first operator with your GM key, made now if you have none; safe to run twice:
    the first operator is registered once."""
    from gmtool.evidence.gm_keys import check_name, new_key
    from gmtool.ops.cover import covering
    from gmtool.ops.gm import bootstrap
    from gmtool.store.gm import has_keys
    from gmtool.store.schema import SCHEMA_VERSION

    gm = acting_user(as_user)
    check_name(gm.name)  # before the store is made: a refused name leaves nothing behind
    with open_store(db, create=True, postgres=True) as store:
        console.success(f"{store.path}: gmtool store ready (schema version {SCHEMA_VERSION})")
        if has_keys(store):
            return
        if gm.signer is None:
            signer, path = new_key(gm.name)
            gm = type(gm)(gm.name, signer)
            console.line(f"made your GM key: {path} (public key {signer.verifier.text()})")
        with covering(store, gm, console.warning):  # its checkpoint, signed by gm's key
            first = bootstrap(store, gm)
        if first:
            console.line(
                f"{gm.name} is the store's first operator (key "
                f"{gm.signer.verifier.text()}); register other GMs with `gmtool gm "
                "users add NAME --role ROLE --key KEY`"
            )


HOST_OPTION = typer.Option([], "--host", help="A login role to make a host (repeatable).")
OPERATOR_OPTION = typer.Option(
    [], "--operator", help="A login role to make an operator's console (repeatable)."
)
SUPPORT_OPTION = typer.Option([], "--support", help="A login role to make support (repeatable).")
PREFIX_OPTION = typer.Option(
    None, "--prefix", help="Start of the roles' names (default: the database's name)."
)


@app.command()
def grant(
    db: str | None = DB_OPTION,
    host: list[str] = HOST_OPTION,
    operator: list[str] = OPERATOR_OPTION,
    support: list[str] = SUPPORT_OPTION,
    prefix: str | None = PREFIX_OPTION,
) -> None:
    """PostgreSQL only: create the store's roles PREFIX_host, PREFIX_operator and
    PREFIX_support with least privilege (support reads; operators append GM requests;
    hosts write events and settlements; nobody updates or deletes evidence) and make the
    given login roles their members. Run it as the tables' owner; safe to run again."""
    from gmtool.store import pg_roles
    from gmtool.store.url import locate

    if not locate(db).is_postgres:
        raise UsageError(
            "`gmtool db grant` is for PostgreSQL stores (--db postgresql://...): a SQLite "
            "store has no roles; whoever may write its file may do everything"
        )
    with open_store(db, write=True, postgres=True) as store:
        members = {"host": host, "operator": operator, "support": support}
        done = pg_roles.grant(store, prefix or pg_roles.default_prefix(store), members)
    for kind, role in done.roles.items():
        logins = ", ".join(done.members[kind]) or "no member named now"
        console.line(f"{role}: {kind} ({logins})")
    for login in done.made:
        console.line(f"made login role {login} (no password: give it one before it connects)")
    console.success(f"{store.path}: roles granted")


FROM_OPTION = typer.Option(
    ..., "--from", metavar="SQLITE", help="The SQLite store to copy (a file or sqlite:///PATH)."
)
TO_OPTION = typer.Option(
    ...,
    "--to",
    metavar="URL",
    help="A new PostgreSQL database (postgresql://USER@HOST/DBNAME): empty, or holding "
    "gmtool's schema and no rows.",
)


@app.command()
def copy(source: str = FROM_OPTION, dest: str = TO_OPTION) -> None:
    """Copy a SQLite store, every table and row as it is (ids, the evidence log, the GM
    log, the ledger, configs, witnesses), into a new PostgreSQL database, in one
    transaction: a failure writes nothing. Keys and witness folders beside the SQLite
    file are not in the store: keep them (audit the copy with --key and --witness)."""
    from gmtool.store import copy as copying
    from gmtool.store.url import locate

    if locate(source).is_postgres:
        raise UsageError(f"--from {locate(source).shown()}: give the SQLite store to copy")
    if not locate(dest).is_postgres:
        raise UsageError(
            f"--to {dest[:80]!r}: give the new PostgreSQL database, postgresql://USER@HOST/DBNAME"
        )
    with open_store(source) as src, open_store(dest, create=True, postgres=True) as dst:
        copying.check_empty(dst)  # type: ignore[arg-type]
        done = copying.copy_store(src, dst)  # type: ignore[arg-type]
    for table, count in done.rows.items():
        console.line(f"{table}: {count} row(s)")
    console.success(f"{src.path} copied to {dst.path}: {done.total} row(s)")
