"""`gmtool verify REPORT.json`: check an exported dispute report offline, with nothing but
the report and the host's verifier key (no database)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from gmtool.cli.console import Abort, console


def verify(
    report: Path = typer.Argument(..., help="A report from `gmtool hands export HAND "
                                  "--format json`."),
    key: Optional[Path] = typer.Option(None, "--key", help="The host's verifier key "
                                       "(<db>.checkpoint.pub); without it, the key inside "
                                       "the report is used and the check proves only that "
                                       "the report is whole."),
) -> None:
    """Check a dispute report: its signed checkpoint, every inclusion proof, the events'
    hash chain, and that every field is what the proven records say. Exit 1 if not."""
    import json

    from gmtool.audit.proof import verify_report
    from gmtool.evidence import witness
    from gmtool.evidence.note import NoteError, Verifier

    try:
        text = witness.read_text(report)
    except OSError as error:
        raise Abort(str(error), code=2) from None
    if key is not None:
        try:
            verifier = witness.load_verifier(key)
        except OSError as error:
            raise Abort(str(error), code=2) from None
    else:
        try:
            verifier = Verifier.parse(json.loads(text)["proof"]["verifier_key"])
        except (ValueError, KeyError, TypeError, NoteError, RecursionError):
            raise Abort(f"{report}: no verifier key in the report: pass --key", code=2) \
                from None
        console.warning(f"checked against the key inside the report ({verifier.name}); pass "
                        "--key with the host's verifier key to know who signed it")
    problems = verify_report(text, verifier)
    for problem in problems:
        console.line(f"FAIL {problem}")
    if problems:
        raise typer.Exit(1)
    console.line(f"ok: {report.name} is whole and every record in it is in the log signed "
                 f"by {verifier.name}")
