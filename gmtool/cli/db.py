"""`gmtool db`: create or upgrade the store."""

from __future__ import annotations

import typer

from gmtool.cli.common import AS_OPTION, DB_OPTION, acting_user, open_store
from gmtool.cli.console import console

app = typer.Typer(
    help="Create or upgrade the SQLite store.", no_args_is_help=True, rich_markup_mode=None
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
    with open_store(db, create=True) as store:
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
