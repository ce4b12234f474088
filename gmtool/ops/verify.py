"""Checks against signed checkpoints, as library calls: a store against one checkpoint
(`gmtool checkpoint verify`), and an exported dispute report offline (`gmtool verify`)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from gmtool.audit.log_check import LogCheck, checkpoint_problems
from gmtool.audit.proof import verify_report as check_report
from gmtool.errors import UsageError
from gmtool.evidence import witness
from gmtool.evidence.note import NoteError, Verifier
from gmtool.ops.checkpoints import signed_checkpoints
from gmtool.store.db import Store


def verify_checkpoint(store: Store, checkpoint: Path, key: Path | None = None) -> dict:
    """Whether the store's log extends the signed `checkpoint` (its signature checked
    with `key`, else `<db>.checkpoint.pub`): the report `gmtool checkpoint verify`
    prints, its `problems` empty when history before it is whole."""
    found, refused, origin = signed_checkpoints(store, checkpoint, key, None)
    with store.snapshot():
        log = LogCheck(store)
        problems = [*refused, *log.run({c.size for _, c in found}),
                    *checkpoint_problems(log, found, origin)]
    return {"checkpoint": str(checkpoint), "size": found[0][1].size if found else None,
            "records": log.frontier.size, "problems": [p.as_json() for p in problems]}


@dataclass
class ReportCheck:
    """What `verify_report` found: the problems (none: the report proves itself), and
    the key it was checked with."""

    verifier: Verifier
    key_from_report: bool  # no key was given: the report's own was used
    problems: list[str] = field(default_factory=list)


def verify_report(report: Path, key: Path | None = None) -> ReportCheck:
    """Check an exported dispute report with nothing but itself and the host's verifier
    `key` (without it, the key inside the report: that proves only that it is whole)."""
    try:
        text = witness.read_text(report)
    except OSError as error:
        raise UsageError(str(error)) from None
    if key is not None:
        try:
            verifier = witness.load_verifier(key)
        except OSError as error:
            raise UsageError(str(error)) from None
    else:
        try:
            verifier = Verifier.parse(json.loads(text)["proof"]["verifier_key"])
        except (ValueError, KeyError, TypeError, NoteError, RecursionError):
            raise UsageError(f"{report}: no verifier key in the report: pass --key") \
                from None
    return ReportCheck(verifier, key is None, check_report(text, verifier))
