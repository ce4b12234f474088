"""The audit's questions to the store's served witnesses, and its verdict on their quorum.

Each served witness the store records is asked for the checkpoint it cosigned last
(`GET /checkpoint/ORIGIN`). Its answer counts when the host's key signed the checkpoint
and the witness's recorded key cosigned it; the checkpoint then joins the ones the log
must extend (so a rewrite or rollback is placed as any other checkpoint places it). The
witness *agrees* when the store extends it. At least the quorum of witnesses must agree
(`gm witness quorum`, else all of them): fewer is `witness_quorum`, naming each that did
not and why. A witness that holds a checkpoint the store does not extend is always a
problem (`witness_disagrees`): it is evidence of a rewrite, whatever the quorum; so is an
answer whose signatures do not hold (`checkpoint_signature`). One that cannot be reached,
or holds nothing of this store, is a warning (and a problem when the quorum fails).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from gmtool.evidence import witness_http
from gmtool.evidence.cosign import CosignerKey
from gmtool.evidence.note import Checkpoint, NoteError, Verifier, open_checkpoint
from gmtool.evidence.witness import Witness
from gmtool.findings import Finding
from gmtool.store import witnesses
from gmtool.store.db import Store
from gmtool.store.log_append import origin_of


@dataclass
class Answer:
    url: str
    checkpoint: Checkpoint | None = None
    cosigned_at: int | None = None
    why: str | None = None  # why it gave no checkpoint to check
    forged: bool = False  # its answer did not verify
    required: bool = False  # named by the auditor (`audit --served`): it must agree

    @property
    def name(self) -> str:
        return f"the checkpoint {self.url} cosigned"


def ask(
    store: Store, verifier: Verifier | None, known: list[Witness] | None = None
) -> list[Answer]:
    """Every served witness's answer: the store's, and those the auditor names (`known`,
    asked too, each required to agree; one the store records is asked once, with the
    auditor's key)."""
    answers = []
    origin = origin_of(store)
    given = {w.location: w for w in known or []}
    recorded = [given.pop(w.location, w) for w in witnesses.served(store)]
    required = {w.location for w in known or []}
    for served in [*recorded, *given.values()]:
        answer = Answer(served.location, required=served.location in required)
        answers.append(answer)
        try:
            note = witness_http.fetch(served.location, origin)
        except (witness_http.Unreachable, witness_http.Refused) as error:
            answer.why = str(error)
            continue
        if note is None:
            answer.why = f"{served.location} holds no checkpoint of this store"
            continue
        if verifier is None:
            answer.why = "no verifier key of the host to check its checkpoint with (--key)"
            continue
        try:
            checkpoint = open_checkpoint(note, [verifier])
            at = CosignerKey.parse(served.key or "").cosigned(note)
        except NoteError as error:
            answer.why, answer.forged = f"{served.location}: {error}", True
            continue
        if at is None:
            answer.why = f"{served.location}'s checkpoint is not cosigned by its recorded key"
            answer.forged = True
            continue
        answer.checkpoint, answer.cosigned_at = checkpoint, at
    return answers


def judge(
    store: Store, answers: list[Answer], extended: set[str], base_size: int = 0
) -> tuple[list[Finding], list[dict]]:
    """(problems, the witnesses' part of the report) once the log was checked
    against the answers' checkpoints (`extended`: the names of those it extends)."""
    problems: list[Finding] = []
    failing: list[str] = []
    summary = []
    agree = 0
    for answer in answers:
        entry: dict = {"witness": answer.url}
        if answer.checkpoint is not None:
            cp = answer.checkpoint
            entry |= {"size": cp.size, "cosigned_at": _when(answer.cosigned_at)}
            if answer.name in extended or (base_size and cp.size < base_size):
                entry["status"] = "agrees"
                agree += 1
            else:
                entry["status"] = "disagrees"
                problems.append(
                    Finding(
                        "witness_disagrees",
                        f"the witness {answer.url} cosigned a checkpoint at {cp.size} records "
                        f"({entry['cosigned_at']}) that this store does not extend: records "
                        "were deleted or rewritten after it was signed",
                    )
                )
                failing.append(f"{answer.url} disagrees")
        else:
            entry |= {"status": "forged" if answer.forged else "unchecked", "why": answer.why}
            failing.append(str(answer.why))
            if answer.forged:
                problems.append(Finding("checkpoint_signature", str(answer.why)))
        summary.append(entry)
    for answer, entry in zip(answers, summary, strict=True):
        if answer.required and entry["status"] == "unchecked":  # the auditor's: must answer
            problems.append(
                Finding(
                    "witness_quorum",
                    f"the served witness {answer.url} the audit was told of (--served) was "
                    f"not checked: {answer.why}",
                )
            )
    quorum = witnesses.quorum(store)
    if agree < quorum:
        problems.append(
            Finding(
                "witness_quorum",
                f"{agree} of {len(answers)} served witness(es) agree with this store, the "
                f"quorum is {quorum}: {'; '.join(failing)}",
            )
        )
    return problems, summary


def warnings(answers: list[Answer]) -> list[str]:
    """What to say before the report: each witness that gave nothing to check, and why."""
    return [
        f"served witness {answer.url} not checked: {answer.why}"
        for answer in answers
        if answer.checkpoint is None and not answer.forged
    ]


def _when(timestamp: int | None) -> str | None:
    if timestamp is None:
        return None
    try:
        return datetime.fromtimestamp(timestamp, UTC).isoformat(timespec="seconds")
    except (OverflowError, OSError, ValueError):
        return str(timestamp)
