"""Signed checkpoints kept outside the database (issue 14): the host signs the evidence
log into a witness folder; audit proves the store extends what was signed, so a rewrite
of the whole log with every hash recomputed, a truncation or an older copy restored is
found, and a host refuses to deal again from a store that is behind its witness."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
import stat
from pathlib import Path

import pytest
from conftest import copy_db, copy_made
from helpers import rewrite_log
from hosting import VirtualHost

from gmtool.canonical import canonical_json
from gmtool.evidence import witness
from gmtool.evidence.note import Verifier, open_checkpoint
from gmtool.house.options import HostOptions
from gmtool.store.db import StoreError


@pytest.fixture(scope="module")
def hosted_template(tmp_path_factory, gm) -> Path:
    """A store a host played on for a while (two game minutes), then stopped: made once,
    copied for each test."""
    db = tmp_path_factory.mktemp("hosted-template") / "hosted.db"
    gm.deploy_all(db)
    host = VirtualHost(db, HostOptions(tables=3, seed="checkpoints", checkpoint_every=20.0))
    try:
        host.advance(120)
        host.stop()
    finally:
        host.close()
    return db


@pytest.fixture
def hosted(hosted_template: Path, tmp_path: Path) -> Path:
    """A copy of `hosted_template`, with its keys and witness folder, for the test to change."""
    return copy_made(hosted_template, tmp_path)


def _audit(gm, db: Path, *args) -> tuple[int, dict]:
    run = gm("audit", "--db", db, "--json", *args, expect=None)
    return run.returncode, json.loads(run.stdout)


def test_the_host_signs_checkpoints_that_outside_tools_can_open(hosted: Path) -> None:
    folder = witness.witness_dir(hosted)
    files = witness.files(folder)
    assert len(files) >= 3, files  # at start, every 20 s of play, at stop
    verifier = Verifier.parse(witness.public_key_path(hosted).read_text())
    sizes = [open_checkpoint(p.read_text(), [verifier]).size for p in files]
    assert sizes == sorted(sizes) and sizes[-1] > sizes[0]
    for path in (*files, witness.key_path(hosted), folder):
        assert stat.S_IMODE(path.stat().st_mode) & 0o077 == 0, path  # the owner's only


def test_an_untouched_store_extends_every_checkpoint(hosted: Path, gm) -> None:
    code, report = _audit(gm, hosted)
    assert code == 0 and report["problems"] == []
    newest = witness.files(witness.witness_dir(hosted))[-1]
    assert report["checkpoint"]["file"] == newest.name
    assert "extends the checkpoint" in gm("audit", "--db", hosted).stdout


def _mint_in_row_and_log(conn: sqlite3.Connection) -> None:
    """Coins minted through an early ledger row, its log record rewritten to match."""
    row = conn.execute("SELECT * FROM ledger ORDER BY id LIMIT 1").fetchone()
    conn.execute("UPDATE ledger SET delta = delta + 1000000 WHERE id = ?", (row["id"],))
    conn.execute("UPDATE players SET coins = coins + 1000000 WHERE name = ?", (row["player"],))
    for log in conn.execute("SELECT idx, body FROM log WHERE kind = 'ledger'").fetchall():
        body = json.loads(log["body"])
        if body["id"] == row["id"]:
            body["delta"] += 1000000
            conn.execute(
                "UPDATE log SET body = ? WHERE idx = ?", (canonical_json(body), log["idx"])
            )


def test_an_auditors_own_key_does_not_excuse_a_witness_without_checkpoints(
    hosted: Path, gm, tmp_path: Path
) -> None:
    """Outside probe (c19b, c19c, c43b): an auditor who brings the host's verifier key
    (`--key`, as a regulator does) is told when the witness holds no checkpoint at all:
    every file deleted, the store's own key files deleted too, or an empty folder given
    with --witness. Each audited "ok" before."""
    regulator = tmp_path / "regulator.pub"
    shutil.copyfile(witness.public_key_path(hosted), regulator)
    empty = tmp_path / "regulator-copy"
    empty.mkdir()
    code, report = _audit(gm, hosted, "--key", regulator, "--witness", empty)  # c19c
    assert code == 1 and [p["kind"] for p in report["problems"]] == ["witness_missing"], report
    assert "--key" in report["problems"][0]["detail"]
    for path in witness.files(witness.witness_dir(hosted)):  # c19b
        path.unlink()
    code, report = _audit(gm, hosted, "--key", regulator)
    assert code == 1 and [p["kind"] for p in report["problems"]] == ["witness_missing"], report
    for path in (witness.key_path(hosted), witness.public_key_path(hosted)):  # c43b
        path.unlink()
    code, report = _audit(gm, hosted, "--key", regulator)
    assert code == 1 and "witness_missing" in [p["kind"] for p in report["problems"]], report


def test_a_consistent_rewrite_of_the_whole_log_is_found_through_a_checkpoint(
    hosted: Path, gm, tmp_path: Path
) -> None:
    keep = tmp_path / "kept-witness"
    shutil.copytree(witness.witness_dir(hosted), keep)  # the operator's copy, elsewhere
    rewrite_log(hosted, _mint_in_row_and_log)
    shutil.rmtree(witness.witness_dir(hosted))  # the attacker cleans up beside the store
    # The first ledger row is a bot's opening balance: the host signed it as it was, so
    # the raised amount is found even with the witness gone.
    code, report = _audit(gm, hosted)
    assert code == 1 and [p["kind"] for p in report["problems"]] == [
        "unjustified_coins",
        "witness_missing",
    ]
    code, report = _audit(gm, hosted, "--witness", keep)
    kinds = [p["kind"] for p in report["problems"]]
    assert code == 1 and kinds == ["unjustified_coins", "checkpoint_rewrite"], report
    assert "history was rewritten" in report["problems"][1]["detail"]


def test_a_truncated_log_is_a_rollback(hosted: Path, gm) -> None:
    def cut(conn: sqlite3.Connection) -> None:
        size = conn.execute("SELECT COUNT(*) FROM log").fetchone()[0]
        conn.execute("DELETE FROM log WHERE idx >= ?", (size - 5,))

    rewrite_log(hosted, cut)
    code, report = _audit(gm, hosted)
    assert code == 1 and "checkpoint_rollback" in [p["kind"] for p in report["problems"]]


def test_an_older_copy_restored_is_found_and_the_host_will_not_deal_from_it(
    tmp_path: Path, gm, virtual_host
) -> None:
    db = tmp_path / "live.db"
    gm.deploy_all(db)
    host = virtual_host(db, tables=2, seed="restore", checkpoint_every=10.0)
    host.advance(30)
    host.stop()
    host.close()
    backup = copy_db(db, tmp_path / "backup", "live.db")
    host = virtual_host(db, tables=2, seed="restore", checkpoint_every=10.0)
    host.advance(60)
    host.stop()
    host.close()
    for suffix in ("", "-wal", "-shm"):  # the backup put back in place
        target = db.with_name(db.name + suffix)
        target.unlink(missing_ok=True)
        source = backup.with_name(backup.name + suffix)
        if source.exists():
            shutil.copyfile(source, target)
    code, report = _audit(gm, db)
    assert code == 1 and [p["kind"] for p in report["problems"]] == ["checkpoint_rollback"]
    assert report["checkpoint"]["extended"] is False
    # Issue 24 point 8: the summary never says the log extends the checkpoint it is behind
    summary = gm("audit", "--db", db, expect=1).stdout.strip().splitlines()[-1]
    assert "extends" not in summary, summary
    assert re.search(
        r"1 problem\(s\); the log \(\d+ records\) does NOT extend the checkpoint signed at "
        r"\d+ \(.*\): see the checkpoint problem\(s\) above$",
        summary,
    ), summary
    newest = witness.files(witness.witness_dir(db))[-1]
    verify = gm("checkpoint", "verify", newest, "--db", db, expect=1).stdout
    assert "extends" not in verify and "does not extend" in verify, verify
    with pytest.raises(StoreError, match="older copy"):
        VirtualHost(db, HostOptions(tables=2, seed="restore"))
    run = gm("house", "run", "--db", db, "--hands", "1", expect=2)
    assert "older copy" in run.stderr and "Traceback" not in run.stderr


def test_a_changed_checkpoint_in_the_witness_is_reported(hosted: Path, gm) -> None:
    newest = witness.files(witness.witness_dir(hosted))[-1]
    lines = newest.read_text().split("\n")
    lines[1] = str(int(lines[1]) + 1)
    newest.write_text("\n".join(lines))
    code, report = _audit(gm, hosted)
    assert code == 1 and "checkpoint_signature" in [p["kind"] for p in report["problems"]]


def test_a_checkpoint_of_another_store_is_not_this_ones(hosted: Path, gm, tmp_path) -> None:
    other = tmp_path / "other.db"
    gm("db", "init", "--db", other)
    gm("checkpoint", "export", "--db", other)
    theirs = witness.files(witness.witness_dir(other))[-1]
    code, report = _audit(
        gm, hosted, "--checkpoint", theirs, "--key", witness.public_key_path(other)
    )
    assert code == 1 and [p["kind"] for p in report["problems"]] == ["checkpoint", "verifier_key"]


def test_checkpoint_verify_with_a_key_that_did_not_sign_it_is_a_finding(
    hosted: Path, gm, tmp_path
) -> None:
    """Exit 1, as `verify --key wrong.pub` and `audit --key wrong.pub`: a checkpoint that
    does not verify is a finding, not a usage error (it was exit 2; outside probe of issue
    23). A checkpoint file that cannot be read stays a usage error."""
    other = tmp_path / "other.db"
    gm("db", "init", "--db", other)
    gm("checkpoint", "export", "--db", other)
    newest = witness.files(witness.witness_dir(hosted))[-1]
    wrong = witness.public_key_path(other)
    run = gm("checkpoint", "verify", newest, "--key", wrong, "--db", hosted, expect=1)
    assert "is not signed by the key" in run.stdout + run.stderr, run.stdout + run.stderr
    github = gm(
        "checkpoint",
        "verify",
        newest,
        "--key",
        wrong,
        "--db",
        hosted,
        "--format",
        "github",
        expect=1,
    )
    assert github.stdout.startswith("::error"), github.stdout
    gm("checkpoint", "verify", tmp_path / "missing.checkpoint", "--db", hosted, expect=2)


@pytest.mark.parametrize(
    "content", [b"# notes\nnot a checkpoint\n", b"\x89PNG\r\n\x1a\n\x00\xff\xfe", b""]
)
def test_a_file_that_is_no_checkpoint_is_a_usage_error(
    hosted: Path, gm, tmp_path, content: bytes
) -> None:
    """The wrong file given as the checkpoint (text, binary, empty) is a usage mistake
    (exit 2) named in plain words, not a forged checkpoint (exit 1) nor a codec's error
    (second outside probe of issue 23)."""
    wrong = tmp_path / "wrong.checkpoint"
    wrong.write_bytes(content)
    commands = (
        ("checkpoint", "verify", wrong),
        ("audit", "--checkpoint", wrong),
        ("audit", "--from-checkpoint", wrong),
    )
    for command in commands:
        run = gm(*command, "--db", hosted, expect=2)
        message = run.stderr.strip()
        assert message.startswith(f"error: {wrong}") and "is not a checkpoint" in message, message
        assert "codec" not in message, message


def test_deploy_apply_of_a_binary_file_says_it_is_no_plan(hosted: Path, gm, tmp_path) -> None:
    wrong = tmp_path / "plan.bin"
    wrong.write_bytes(b"\x92\x00\xff binary")
    run = gm("deploy", "apply", wrong, "--db", hosted, expect=2)
    assert run.stderr.strip() == f"error: {wrong} is not a deploy plan (not a text file)"


def test_export_refuses_a_store_behind_its_witness_as_the_host_does(
    hosted: Path, gm, tmp_path
) -> None:
    """An older copy restored beside the witness that signed more: `checkpoint export`
    would sign the older history into the witness (outside probe a52); refused, nothing
    signed."""
    older = tmp_path / "older.db"
    shutil.copyfile(hosted, older)
    gm("players", "adjust", "bot-001", "5", "--reason", "newer", "--db", hosted, "--as", "boss")
    shutil.copyfile(older, hosted)
    before = witness.files(witness.witness_dir(hosted))
    run = gm("checkpoint", "export", "--db", hosted, expect=2)
    assert "older copy" in run.stderr, run.stderr
    assert witness.files(witness.witness_dir(hosted)) == before
