"""What support reads about one recorded hand, with its whole evidence checked.

`hands show`, `hands replay` and `hands export` each check the hand's evidence with the
audit's own code for one hand (`audit/hand_check.py`: its chain, its rows against the
evidence log, the newest signed checkpoint, the seed with the key the audit uses), so
they never say a hand is sound while `gmtool audit` finds it is not. A hand whose
evidence does not verify is shown with what does not (exit 1); it is not exported
(a report of edited rows would carry the edit to the ticket as if it were the hand).

On PostgreSQL (issue 26) the store has no files beside it: the host's checkpoint verifier
key and the witness folder are given (`key`, `given`: `--key`, `--witness`), as to the
audit; without a key the records are not checked against a checkpoint, and a note says so
plainly. The old seed key `<db>.key` is not looked for there (`ops.audit.seed_key`).
"""

from __future__ import annotations

from pathlib import Path

from gmtool.audit.dispute import hand_report
from gmtool.audit.hand_check import NO_CHECKPOINT, HandEvidence, check_hand
from gmtool.audit.replay import replay_hand
from gmtool.errors import Refused
from gmtool.evidence import witness
from gmtool.evidence.note import Checkpoint, signer_names
from gmtool.findings import Finding
from gmtool.ops.audit import seed_key
from gmtool.ops.checkpoints import host_verifier, store_host_key, witness_folders
from gmtool.store.checkpoint_signers import read_signed
from gmtool.store.db import Store, files_beside

NO_KEY_GIVEN = (
    "its records were not checked against a signed checkpoint: a PostgreSQL store has no "
    "checkpoint key beside it; pass --key with the host's verifier key (of a store copied "
    "from SQLite: the <db>.checkpoint.pub beside that file) and --witness with the folder "
    "of its checkpoints"
)


def evidence_of(
    store: Store, hand_id: int, key: Path | None = None, given: str | None = None
) -> HandEvidence:
    """The hand's whole evidence, checked in one consistent view of the store (a host may
    be writing it), NoSuchRecord if there is no such hand; `key` and `given` as the
    audit's `--key` and `--witness`."""
    with store.snapshot():
        return _evidence(store, hand_id, key, given)


def _evidence(
    store: Store, hand_id: int, key: Path | None = None, given: str | None = None
) -> HandEvidence:
    checkpoint, problems, warnings = newest_checkpoint(store, key, given)
    host_key, wrong_key = store_host_key(store, key)
    why = NO_CHECKPOINT
    if problems:  # the witness holds checkpoints; none verifies
        why = (
            "no checkpoint in the witness verifies with the host's key "
            + ("beside the store" if key is None else f"{key}")
            + " (above): its records were not checked against one"
        )
    elif host_key is None and not wrong_key and files_beside(store) is None:
        why = NO_KEY_GIVEN
    elif checkpoint is None and warnings:  # its witness is nowhere: said above
        why = "its records were not checked against a signed checkpoint (no witness: above)"
    evidence = check_hand(store, hand_id, seed_key(store), checkpoint, host_key, why)
    evidence.problems[:0] = [problem.as_json() for problem in [*problems, *wrong_key]]
    evidence.notes[:0] = warnings
    return evidence


def newest_checkpoint(
    store: Store, key: Path | None = None, given: str | None = None
) -> tuple[tuple[str, Checkpoint] | None, list[Finding], list[str]]:
    """The newest checkpoint in the store's witnesses (`given`: the audit's `--witness`)
    whose signature holds with the host's verifier key (`key`, else the one beside a
    SQLite store), a finding for each newer one that does not, and the witness folders'
    warnings (a PostgreSQL store's folder recorded beside its old SQLite file)."""
    verifier = host_verifier(store, key)
    if verifier is None:
        return None, [], []
    folders, warnings = witness_folders(store, given)
    newest: tuple[str, Checkpoint] | None = None
    problems = []
    for folder in folders:
        refused = []  # newest first, reported in the folder's order as the audit does
        for path in reversed(witness.files(folder)):
            try:
                signed, _ = read_signed(store, path, verifier)
            except OSError as error:
                refused.append(
                    Finding(
                        "checkpoint_signature",
                        f"{error}: a checkpoint in the witness that its host did not sign "
                        "(forged or changed)",
                    )
                )
                continue
            if newest is None or signed.size > newest[1].size:
                newest = (path.name, signed)
            break
        problems += reversed(refused)
    return newest, problems, warnings


def host_signed_checkpoint(
    store: Store, key: Path | None, given: str | None
) -> tuple[Path, Checkpoint] | None:
    """The newest checkpoint the host's key signed in the store's witnesses (a dispute
    report's proof is checked with that key alone), as the host's notary finds it on a
    SQLite store; None without a key or a checkpoint."""
    verifier = host_verifier(store, key)
    if verifier is None:
        return None
    newest = None
    for folder in witness_folders(store, given)[0]:
        found = [path for path in witness.files(folder) if not _gm_signed(path, verifier.name)]
        if not found:
            continue
        try:
            checkpoint, _ = read_signed(store, found[-1], verifier)
        except OSError:
            continue  # (the evidence check before the export names it)
        if newest is None or checkpoint.size > newest[1].size:
            newest = (found[-1], checkpoint)
    return newest


def _gm_signed(path: Path, host: str) -> bool:
    """Whether a checkpoint file bears signatures, none of them the host's (a GM's)."""
    try:
        names = signer_names(witness.read_text(path))
    except OSError:
        return False
    return bool(names) and host not in names


def show(store: Store, hand_id: int, key: Path | None = None, given: str | None = None) -> dict:
    """`hands show`: the hand's report with its `evidence`; the seed verifies only when
    the audit's seed check finds nothing wrong with it either."""
    with store.snapshot():  # the report and its check of one moment
        report = hand_report(store, hand_id)
        evidence = _evidence(store, hand_id, key, given)
    seed = [p["detail"] for p in evidence.problems if p.get("kind") == "seed"]
    if seed and report["seed_verifies"]:
        report["seed_verifies"] = False
    if seed:
        report["seed_problem"] = seed[0]
    return {**report, "evidence": evidence.as_json()}


def replay(store: Store, hand_id: int, key: Path | None = None, given: str | None = None) -> dict:
    """`hands replay`: the replay through the engine, then the rest of the hand's
    evidence; `ok` only when both hold (`replay_ok`: the replay alone)."""
    with store.snapshot():
        result = replay_hand(store, hand_id).as_json()
        evidence = _evidence(store, hand_id, key, given).as_json()
    evidence["problems"] = [p for p in evidence["problems"] if p not in result["problems"]]
    evidence["verified"] = not evidence["problems"]
    return {
        **result,
        "ok": result["ok"] and evidence["verified"],
        "replay_ok": result["ok"],
        "evidence": evidence,
    }


def exportable(
    store: Store, hand_id: int, key: Path | None = None, given: str | None = None
) -> None:
    """Refused (exit 1), naming what does not verify, when the hand's evidence does not."""
    evidence = evidence_of(store, hand_id, key, given)
    if evidence.ok:
        return
    problems = evidence.problems
    listed = "; ".join(f"{p['kind']}: {p['detail']}" for p in problems[:5])
    more = f"; and {len(problems) - 5} more" if len(problems) > 5 else ""
    raise Refused(
        f"hand {hand_id}'s evidence does not verify, so no report was exported "
        f"({len(problems)} problem(s): {listed}{more}); see `gmtool hands show {hand_id}` "
        "and `gmtool audit`"
    )
