"""The operations library is the whole of what the console does (issue 22).

`gmtool audit` is `gmtool.ops.audit` plus a progress bar and a renderer: a program that
calls the library gets exactly the findings the command prints, including those that
come from loading the witness and the keys (a witness emptied, a checkpoint forged, a
verifier key of another store). And a deployment reads its profile once: the text stored
beside the config is the text that was compiled.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

from gmtool.ops import audit, read_profile
from gmtool.store.db import connect

RULES = Path(__file__).resolve().parent.parent / "rules"


def _copy_with_everything(db: Path, folder: Path) -> Path:
    """A copy of a store with its keys and witness folder beside it."""
    for path in db.parent.iterdir():
        if path.name.startswith(db.name) and not path.name.endswith(".lock"):
            (shutil.copytree if path.is_dir() else shutil.copyfile)(path, folder / path.name)
    return folder / db.name


def _both(gm, db: Path, *args: str, **options) -> tuple[dict, dict]:
    printed = json.loads(gm("audit", "--db", db, "--json", *args, expect=None).stdout)
    with connect(db) as store:
        called = audit(store, **options).as_json()
    return printed, called


def test_the_library_audit_is_the_command_audit_clean(host_db: Path, tmp_path: Path, gm) -> None:
    db = _copy_with_everything(host_db, tmp_path)
    printed, called = _both(gm, db)
    assert printed == called and printed["problems"] == [] and printed["checkpoint"]


def test_the_library_audit_has_the_findings_of_the_witness_and_keys(
    host_db: Path, tmp_path: Path, gm
) -> None:
    """A tampered ledger row, a witness whose checkpoints were deleted (`witness_missing`):
    found alike by the command and by the call."""
    db = _copy_with_everything(host_db, tmp_path)
    shutil.rmtree(f"{db}.witness")
    Path(f"{db}.witness").mkdir()
    with sqlite3.connect(db) as conn:
        conn.execute("DROP TRIGGER ledger_no_update")
        conn.execute(
            "UPDATE ledger SET delta = delta + 1 WHERE id = (SELECT MAX(id) FROM "
            "ledger WHERE hand_id IS NOT NULL)"
        )
    printed, called = _both(gm, db)
    kinds = {problem["kind"] for problem in printed["problems"]}
    assert "witness_missing" in kinds and len(kinds) > 1, kinds
    assert printed == called


def test_the_library_audit_reports_a_verifier_key_of_another_store(
    host_db: Path, tmp_path: Path, gm
) -> None:
    from gmtool.evidence.note import Signer

    db = _copy_with_everything(host_db, tmp_path)
    other = tmp_path / "other.pub"
    other.write_text(Signer.generate("gmtool/0000000000000000").verifier.text() + "\n")
    printed, called = _both(gm, db, "--key", str(other), key=other)
    kinds = [problem["kind"] for problem in printed["problems"]]
    assert "verifier_key" in kinds or "checkpoint_signature" in kinds, kinds
    assert printed == called


def test_a_profile_is_read_once_and_stored_as_compiled(tmp_path: Path, gm) -> None:
    """The stored profile text is the bytes compiled, line endings and all."""
    crlf = tmp_path / "qq.toml"
    crlf.write_bytes((RULES / "qq-showhand.toml").read_bytes().replace(b"\n", b"\r\n"))
    profile = read_profile(crlf)
    assert profile.text.encode() == crlf.read_bytes()
    db = tmp_path / "p.db"
    gm("db", "init", "--db", db, "--as", "boss")
    gm("deploy", crlf, "--db", db, "--as", "boss")
    with sqlite3.connect(db) as conn:
        (text,) = conn.execute("SELECT profile_text FROM configs").fetchone()
    assert (
        text == profile.text
        and profile.config_id == read_profile(RULES / "qq-showhand.toml").config_id
    )
