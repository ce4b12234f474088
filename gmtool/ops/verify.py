"""Checks against signed checkpoints, as library calls: a store against one checkpoint
(`gmtool checkpoint verify`), and an exported dispute report offline (`gmtool verify`)."""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gmtool.audit.log_check import LogCheck, checkpoint_problems
from gmtool.audit.proof import verify_report as check_report
from gmtool.errors import UsageError
from gmtool.evidence import witness
from gmtool.evidence.note import NoteError, Verifier
from gmtool.findings import Finding
from gmtool.ops.checkpoints import signed_checkpoints
from gmtool.store.db import Store


@dataclass
class CheckpointCheck:
    """What `gmtool checkpoint verify` reports (a `gmtool.findings.Report`)."""

    checkpoint: str
    size: int | None
    records: int
    problems: list[Finding]
    tool = "gmtool checkpoint verify"
    artifact: str | None = None  # the store's file

    @property
    def findings(self) -> list[Finding]:
        return self.problems

    def lines(self) -> Iterator[str]:
        return (str(problem) for problem in self.problems)

    def summary(self, strict: bool = False) -> str:
        if self.problems:
            return f"{len(self.problems)} problem(s): the log does not extend {self.checkpoint}"
        return (
            f"ok: the log ({self.records} records) extends the checkpoint signed at "
            f"{self.size} ({self.checkpoint})"
        )

    def exit_code(self, strict: bool = False) -> int:
        return 1 if self.problems else 0

    def as_json(self) -> dict[str, Any]:
        return {
            "checkpoint": self.checkpoint,
            "size": self.size,
            "records": self.records,
            "problems": [problem.as_json() for problem in self.problems],
        }


def verify_checkpoint(store: Store, checkpoint: Path, key: Path | None = None) -> CheckpointCheck:
    """Whether the store's log extends the signed `checkpoint` (its signature checked
    with `key`, else `<db>.checkpoint.pub`): no problem when history before it is whole."""
    found, refused, origin = signed_checkpoints(store, checkpoint, key)
    with store.snapshot():
        log = LogCheck(store)
        problems = [
            *refused,
            *log.run({c.size for _, c in found}),
            *checkpoint_problems(log, found, origin),
        ]
    return CheckpointCheck(
        str(checkpoint),
        found[0][1].size if found else None,
        log.frontier.size,
        problems,
        artifact=str(store.path),
    )


@dataclass
class ReportCheck:
    """What `gmtool verify` reports (a `gmtool.findings.Report`): the problems (none: the
    report proves itself), and the key it was checked with."""

    report: Path
    verifier: Verifier
    key_from_report: bool  # no key was given: the report's own was used
    problems: list[str] = field(default_factory=list)
    tool = "gmtool verify"

    @property
    def artifact(self) -> str:
        return str(self.report)

    @property
    def findings(self) -> list[Finding]:
        return [Finding("report", problem, file=str(self.report)) for problem in self.problems]

    def lines(self) -> Iterator[str]:
        return (f"FAIL {problem}" for problem in self.problems)

    def summary(self, strict: bool = False) -> str:
        if self.problems:
            return f"{len(self.problems)} problem(s): {self.report.name} does not prove itself"
        return (
            f"ok: {self.report.name} is whole and every record in it is in the log signed "
            f"by {self.verifier.name}"
        )

    def exit_code(self, strict: bool = False) -> int:
        return 1 if self.problems else 0

    def as_json(self) -> dict[str, Any]:
        return {
            "report": str(self.report),
            "verifier_key": self.verifier.name,
            "key_from_report": self.key_from_report,
            "problems": [finding.as_json() for finding in self.findings],
        }


def verify_report(report: Path, key: Path | None = None) -> ReportCheck:
    """Check an exported dispute report with nothing but itself and the host's verifier
    `key` (without it, the key inside the report: that proves only that it is whole)."""
    try:
        text = witness.read_text(report, "latin-1")  # any bytes decode: checked below
    except OSError as error:
        raise UsageError(str(error)) from None
    if not text.isascii():
        try:
            text = text.encode("latin-1").decode("utf-8")
        except UnicodeDecodeError:
            raise UsageError(
                f"{report} is not a dispute report (not UTF-8 text): verify takes the report "
                "`gmtool hands export HAND --format json` writes"
            ) from None
    try:
        parsed = json.loads(text)
    except (ValueError, RecursionError):
        parsed = None
    if not isinstance(parsed, dict):
        raise UsageError(
            f"{report} is not a dispute report (not a JSON object): verify takes the report "
            "`gmtool hands export HAND --format json` writes (a markdown report has no proof)"
        )
    if not REPORT_FIELDS & parsed.keys():  # some other JSON file: not a report edited
        raise UsageError(
            f"{report} is not a dispute report (a JSON object without a hand, its events or "
            "a proof): verify takes the report `gmtool hands export HAND --format json` writes"
        )
    if key is not None:
        verifier = _verifier_key(key)
    else:
        try:
            verifier = Verifier.parse(parsed["proof"]["verifier_key"])
        except (ValueError, KeyError, TypeError, NoteError, RecursionError):
            raise UsageError(f"{report}: no verifier key in the report: pass --key") from None
    return ReportCheck(report, verifier, key is None, check_report(text, verifier))


KEY_WORDS = witness.KEY_WORDS
REPORT_FIELDS = frozenset({"hand", "events", "proof"})  # any one: a report, maybe edited


def _verifier_key(key: Path) -> Verifier:
    """The verifier key `--key` names; a file that is not one (the report itself, a store,
    any file that is not text) is said to be so in plain words."""
    try:
        return witness.load_verifier(key)
    except OSError as error:
        head = _head(key)
        if head is None:
            raise UsageError(str(error)) from None
        if head.lstrip().startswith(b"{"):
            raise UsageError(
                f"--key {key} is a JSON file, not a verifier key ({KEY_WORDS}); "
                "the report goes first: gmtool verify REPORT.json --key HOST.pub"
            ) from None
        if not head.isascii():
            raise UsageError(f"--key {key} is not a verifier key ({KEY_WORDS})") from None
        raise UsageError(str(error)) from None


def _head(path: Path) -> bytes | None:
    """The first bytes of a regular file (None: not one, or unreadable)."""
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            return None
        with open(path, "rb") as file:
            return file.read(4096)
    except OSError:
        return None
