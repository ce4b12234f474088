"""The audit as a library call: the whole report `gmtool audit` prints, findings and all.

`audit(store, ...)` loads what the audit checks against (the signed checkpoints of the
store's witnesses or the folder or file given, the host's verifier key, its seed key, the
checkpoint an audit takes up from), runs every check (audit/run.py) and adds the findings
of that loading: a witness folder emptied while the host signs, a checkpoint whose
signature does not hold, a verifier key of another store. `warnings` are for the user
before the report: a `--witness` the store does not record. `gmtool audit` is this call, a progress
bar and a renderer. `Audit` splits the call in two for a caller that wants the number
of hands before they are checked (a progress bar).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from gmtool.audit.run import AuditReport, run_audit
from gmtool.errors import UsageError
from gmtool.evidence.witness import SERVED, Witness, served_key
from gmtool.evidence.witness_http import check_url
from gmtool.house.seeds import existing_key
from gmtool.ops import witness_audit
from gmtool.ops.checkpoints import (
    base_checkpoint,
    signed_checkpoints,
    store_host_key,
    witness_folders,
)
from gmtool.store.db import Store, files_beside
from gmtool.store.log_reads import hands_after
from gmtool.store.scan import count_hands


class Audit:
    """An audit ready to run: its options checked, its checkpoints and keys loaded."""

    def __init__(
        self,
        store: Store,
        since: str | None = None,
        until: str | None = None,
        table: str | None = None,
        player: str | None = None,
        checkpoint: Path | None = None,
        key: Path | None = None,
        from_checkpoint: str | None = None,
        jobs: int = 1,
        witness: str | None = None,
        served: list[str] | None = None,
    ) -> None:
        if from_checkpoint is not None and (since or until or table or player):
            raise UsageError(
                "--from-checkpoint audits everything after the checkpoint: "
                "leave out --since, --until, --table and --player"
            )
        self.store = store
        self.selection = (since, until, table, player)
        self.jobs = jobs
        self.folders, self.warnings = witness_folders(store, witness)
        self.checkpoint_file = checkpoint
        self.checkpoints, self.refused, self.origin = signed_checkpoints(
            store, checkpoint, key, self.folders
        )
        self.host_key, wrong_key = store_host_key(store, key)
        self.refused += wrong_key
        # The served witnesses, out of the store host's reach (none with --checkpoint FILE,
        # which checks that file alone): their checkpoints join the folders'.
        known = [known_witness(given) for given in served or []]
        self.answers = [] if checkpoint else witness_audit.ask(store, self.host_key, known)
        self.warnings += witness_audit.warnings(self.answers)
        self.checkpoints += [(a.name, a.checkpoint) for a in self.answers if a.checkpoint]
        self.base = (
            None
            if from_checkpoint is None
            else base_checkpoint(store, from_checkpoint, key, self.folders)
        )

    @property
    def total(self) -> int:
        """The hands this audit will check (for a progress bar)."""
        if self.base is not None:
            return hands_after(self.store, self.base[1].size)
        return count_hands(self.store, *self.selection)

    def run(self, progress: Callable[[int], None] | None = None) -> AuditReport:
        report = run_audit(
            self.store,
            *self.selection,
            progress=progress,
            checkpoints=self.checkpoints,
            origin=self.origin,
            seed_key=seed_key(self.store),
            jobs=self.jobs,
            base=self.base,
            host_key=self.host_key,
        )
        for problem in self.refused:
            report.add(problem)
        if self.answers:
            base_size = self.base[1].size if self.base else 0
            problems, report.witnesses = witness_audit.judge(
                self.store, self.answers, report.extended, base_size
            )
            for problem in problems:
                report.add(problem)
        report.artifact = str(self.store.path)
        if report.checkpoint is not None and self.checkpoint_file is None:  # which witness
            name = report.checkpoint["file"]
            held = [folder for folder in self.folders if (folder / name).is_file()]
            if held:
                report.checkpoint["witness"] = str(held[0])
        return report


def seed_key(store: Store) -> bytes | None:
    """The key the audit checks seeds with (`hands show` and `hands replay` check a hand's
    seed with it too, through the same check, so the two always agree)."""
    beside = files_beside(store)  # (a PostgreSQL store has no `<db>.key` beside it)
    return existing_key(beside) if beside is not None else None


def audit(
    store: Store,
    since: str | None = None,
    until: str | None = None,
    table: str | None = None,
    player: str | None = None,
    checkpoint: Path | None = None,
    key: Path | None = None,
    from_checkpoint: str | None = None,
    jobs: int = 1,
    witness: str | None = None,
    progress: Callable[[int], None] | None = None,
) -> AuditReport:
    """Every check of `gmtool audit` with its options; the report it prints
    (`report.as_json()` is exactly what `gmtool audit --json` prints)."""
    return Audit(
        store, since, until, table, player, checkpoint, key, from_checkpoint, jobs, witness
    ).run(progress)


def known_witness(given: str) -> Witness:
    """`--served URL=KEY`: a served witness the auditor knows of (its URL, and its verifier
    key: a KEY.pub file or the key itself), asked whatever the store records."""
    url, sep, key = given.partition("=")
    if not sep or not url.strip() or not key.strip():
        raise UsageError(f"--served {given[:200]!r}: give URL=KEY (the witness's KEY.pub or key)")
    try:
        return Witness(SERVED, check_url(url.strip()), served_key(key))
    except ValueError as error:
        raise UsageError(f"--served {given[:200]!r}: {error}") from None
