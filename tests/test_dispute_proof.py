"""Dispute reports that prove themselves (issue 14): `hands export --format json` carries
the hand's records with inclusion proofs in a signed checkpoint; `gmtool verify` checks
the report offline with the host's verifier key alone, and so does an independent
verifier (tests/independent_verifier.py, no gmtool code); any changed byte fails."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import query

from gmtool.evidence import witness

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def exported(tmp_path_factory, gm):
    """A store a host played on; the JSON report of a settled hand with ledger rows."""
    from conftest import VIRTUAL_EPOCH
    from hosting import VirtualHost

    from gmtool.house.options import HostOptions

    folder = tmp_path_factory.mktemp("proof")
    db = folder / "proof.db"
    gm.deploy_all(db)
    with VirtualHost(db, HostOptions(tables=3, seed="proof"), wall_start=VIRTUAL_EPOCH) as host:
        host.advance(90)
        host.stop()
    hand = query(
        db,
        "SELECT h.id FROM hands h WHERE outcome = 'settled' AND EXISTS (SELECT 1 "
        "FROM ledger l WHERE l.hand_id = h.id AND l.delta != 0) ORDER BY h.id DESC "
        "LIMIT 1",
    )[0][0]
    report = folder / "report.json"
    report.write_text(
        gm("hands", "export", str(hand), "--format", "json", "--db", db).stdout, encoding="utf-8"
    )
    return db, report


def _verify(gm, report: Path, db: Path, expect=0):
    return gm("verify", report, "--key", witness.public_key_path(db), expect=expect)


def test_an_exported_report_verifies_offline(exported, gm, tmp_path: Path) -> None:
    db, report = exported
    alone = tmp_path / "alone.json"  # no database anywhere near it
    alone.write_bytes(report.read_bytes())
    assert "ok" in _verify(gm, alone, db).stdout
    proof = json.loads(report.read_text())["proof"]
    kinds = {json.loads(r["body"])["kind"] for r in proof["records"]}
    assert {"hand", "hand_end", "events", "ledger"} <= kinds


def test_an_independent_verifier_agrees(exported) -> None:
    db, report = exported
    run = subprocess.run(
        [
            sys.executable,
            str(HERE / "independent_verifier.py"),
            str(report),
            str(witness.public_key_path(db)),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stdout + run.stderr


def test_a_report_naming_another_verifier_key_fails_with_the_right_one(
    exported, gm, tmp_path: Path
) -> None:
    """The key inside the report is what `verify` without `--key` trusts: with `--key`,
    a report whose own key was changed is an edited report (a byte of it changed verified
    before)."""
    db, report = exported
    text = report.read_text(encoding="utf-8")
    key = json.loads(text)["proof"]["verifier_key"]
    other = key[:-2] + ("A" if key[-2] != "A" else "B") + key[-1]
    changed = tmp_path / "other-key.json"
    changed.write_text(text.replace(key, other), encoding="utf-8")
    run = _verify(gm, changed, db, expect=1)
    assert "another verifier key" in run.stdout + run.stderr


def _positions(text: str) -> list[int]:
    """Byte positions spread over the whole report: every region is covered."""
    step = max(1, len(text) // 60)
    return list(range(0, len(text) - 1, step))


def test_a_changed_byte_anywhere_fails(exported, gm, tmp_path: Path) -> None:
    db, report = exported
    text = report.read_text(encoding="utf-8")
    failed = []
    for position in _positions(text):
        char = text[position]
        replacement = "1" if char != "1" else "2"
        if char == "\n":
            replacement = " \n"
        changed = tmp_path / f"changed-{position}.json"
        changed.write_text(text[:position] + replacement + text[position + 1 :], encoding="utf-8")
        run = _verify(gm, changed, db, expect=None)
        if run.returncode == 0:
            failed.append((position, text[max(0, position - 20) : position + 20]))
    assert not failed, failed


def test_a_report_signed_by_another_key_fails(exported, gm, tmp_path: Path) -> None:
    db, report = exported
    other = tmp_path / "other.db"
    gm("db", "init", "--db", other)
    gm("checkpoint", "export", "--db", other)
    run = gm("verify", report, "--key", witness.public_key_path(other), expect=1)
    assert "checkpoint" in run.stdout
