"""`gmtool checkpoint`: sign the evidence log's state now, or check a store against a
signed checkpoint (the C2SP tlog-checkpoint format; docs/evidence.md)."""

from __future__ import annotations

from pathlib import Path

import typer

from gmtool.cli.common import (
    DB_OPTION,
    FORMAT_OPTION,
    JSON_OPTION,
    WITNESS_OPTION,
    open_store,
)
from gmtool.cli.console import Abort, console
from gmtool.cli.reporters import ReportFormat, report_with

app = typer.Typer(
    help="Signed checkpoints of the evidence log.", no_args_is_help=True, rich_markup_mode=None
)


@app.command()
def export(
    out: Path | None = typer.Option(None, "--out", help="Also write the checkpoint here."),
    witness: str | None = WITNESS_OPTION,
    db: str | None = DB_OPTION,
) -> None:
    """Sign the store's evidence log as it is now with the host's key, save it in the
    store's witnesses and print it (a signed note any C2SP tool can check). A --witness
    the store does not record is refused, and so is a store behind or beside what a
    witness signed (an older copy, records deleted, history rewritten), as the host is."""
    from gmtool.house.notary import Notary

    with open_store(db) as store:
        notary = Notary(store, witness, notify=console.warning)
        notary.check_not_behind()
        paths = notary.sign()
    note = paths[0].read_text(encoding="utf-8")
    if out is not None:
        try:
            out.write_text(note, encoding="utf-8")
        except OSError as error:
            raise Abort(f"{out}: cannot write it: {error.strerror or error}", code=2) from None
    console.raw(note)
    console.diagnostic(f"saved as {', '.join(map(str, paths))}")


@app.command()
def verify(
    checkpoint: Path = typer.Argument(..., help="The signed checkpoint file."),
    key: Path | None = typer.Option(
        None, "--key", help="The host's verifier key (default: <db>.checkpoint.pub)."
    ),
    db: str | None = DB_OPTION,
    as_json: bool = JSON_OPTION,
    output_format: ReportFormat | None = FORMAT_OPTION,
) -> None:
    """Check the checkpoint's signature and that the store's log extends it: exit 1 if
    history before it was rewritten, truncated or an older copy restored."""
    from gmtool.ops.verify import verify_checkpoint

    with open_store(db) as store:
        report = verify_checkpoint(store, checkpoint, key)
    raise typer.Exit(report_with(output_format, as_json, report, console))
