"""What support reads about one recorded hand, with its whole evidence checked.

`hands show`, `hands replay` and `hands export` each check the hand's evidence with the
audit's own code for one hand (`audit/hand_check.py`: its chain, its rows against the
evidence log, the newest signed checkpoint, the seed with the key the audit uses), so
they never say a hand is sound while `gmtool audit` finds it is not. A hand whose
evidence does not verify is shown with what does not (exit 1); it is not exported
(a report of edited rows would carry the edit to the ticket as if it were the hand).
"""

from __future__ import annotations

from gmtool.audit.dispute import hand_report
from gmtool.audit.hand_check import NO_CHECKPOINT, HandEvidence, check_hand
from gmtool.audit.replay import replay_hand
from gmtool.errors import Refused
from gmtool.evidence import witness
from gmtool.evidence.note import Checkpoint
from gmtool.findings import Finding
from gmtool.ops.audit import seed_key
from gmtool.ops.checkpoints import host_verifier, store_host_key, witness_folders
from gmtool.store.checkpoint_signers import read_signed
from gmtool.store.db import Store


def evidence_of(store: Store, hand_id: int) -> HandEvidence:
    """The hand's whole evidence, checked in one consistent view of the store (a host may
    be writing it), NoSuchRecord if there is no such hand."""
    with store.snapshot():
        return _evidence(store, hand_id)


def _evidence(store: Store, hand_id: int) -> HandEvidence:
    checkpoint, problems = newest_checkpoint(store)
    host_key, wrong_key = store_host_key(store, None)
    why = NO_CHECKPOINT
    if problems:  # the witness holds checkpoints; none verifies
        why = (
            "no checkpoint in the witness verifies with the host's key beside the store "
            "(above): its records were not checked against one"
        )
    evidence = check_hand(store, hand_id, seed_key(store), checkpoint, host_key, why)
    evidence.problems[:0] = [problem.as_json() for problem in [*problems, *wrong_key]]
    return evidence


def newest_checkpoint(store: Store) -> tuple[tuple[str, Checkpoint] | None, list[Finding]]:
    """The newest checkpoint in the store's witnesses whose signature holds (with the
    host's verifier key beside the store), and a finding for each newer one that does not."""
    verifier = host_verifier(store, None)
    if verifier is None:
        return None, []
    newest: tuple[str, Checkpoint] | None = None
    problems = []
    for folder in witness_folders(store, None)[0]:
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
    return newest, problems


def show(store: Store, hand_id: int) -> dict:
    """`hands show`: the hand's report with its `evidence`; the seed verifies only when
    the audit's seed check finds nothing wrong with it either."""
    with store.snapshot():  # the report and its check of one moment
        report = hand_report(store, hand_id)
        evidence = _evidence(store, hand_id)
    seed = [p["detail"] for p in evidence.problems if p.get("kind") == "seed"]
    if seed and report["seed_verifies"]:
        report["seed_verifies"] = False
    if seed:
        report["seed_problem"] = seed[0]
    return {**report, "evidence": evidence.as_json()}


def replay(store: Store, hand_id: int) -> dict:
    """`hands replay`: the replay through the engine, then the rest of the hand's
    evidence; `ok` only when both hold (`replay_ok`: the replay alone)."""
    with store.snapshot():
        result = replay_hand(store, hand_id).as_json()
        evidence = _evidence(store, hand_id).as_json()
    evidence["problems"] = [p for p in evidence["problems"] if p not in result["problems"]]
    evidence["verified"] = not evidence["problems"]
    return {
        **result,
        "ok": result["ok"] and evidence["verified"],
        "replay_ok": result["ok"],
        "evidence": evidence,
    }


def exportable(store: Store, hand_id: int) -> None:
    """Refused (exit 1), naming what does not verify, when the hand's evidence does not."""
    evidence = evidence_of(store, hand_id)
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
