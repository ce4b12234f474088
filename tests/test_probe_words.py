"""Words a third outside probe of issue 23 found wanting: each mistake is named as what it
is, in plain words, with exit 2 and nothing written."""

from __future__ import annotations

from pathlib import Path

from conftest import OPERATOR, RULES, Gmtool

QQ = RULES / "qq-showhand.toml"


def _error(run) -> str:
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), run.stderr
    return lines[0]


def test_plan_out_dash_is_refused_before_anything(gm: Gmtool, deployed_db: Path) -> None:
    run = gm("deploy", QQ, "--plan-out", "-", "--db", deployed_db, "--as", OPERATOR, expect=2)
    assert "--plan-out -: a plan is a file" in _error(run)
    assert not Path("-").exists()


def test_a_blank_output_or_gm_name_is_named_blank(gm: Gmtool, tmp_path: Path) -> None:
    run = gm("rules", "compile", QQ, "-o", "", expect=2)
    assert "-o is blank or names this folder" in _error(run)
    run = gm("gm", "keys", "new", "", expect=2)
    assert "the GM name given is blank" in _error(run)


def test_a_name_no_key_can_have_is_not_told_to_make_one(gm: Gmtool, deployed_db: Path) -> None:
    run = gm(
        "players", "adjust", "bot-001", "5", "--reason", "r", "--db", deployed_db,
        "--as", "al\u200bice", expect=2,
    )  # fmt: skip
    message = _error(run)
    assert "cannot have a key" in message and "keys new" not in message, message


def test_verifier_and_witness_keys_that_are_not_named_so(
    gm: Gmtool, deployed_db: Path, tmp_path: Path
) -> None:
    gm("checkpoint", "export", "--db", deployed_db)
    private = deployed_db.with_name(deployed_db.name + ".checkpoint.key")
    report = tmp_path / "r.json"
    report.write_text('{"hand": 1}\n')
    run = gm("verify", report, "--key", private, expect=2)
    assert "is a signing (private) key, not a verifier key" in _error(run)
    missing = tmp_path / "missing.pub"
    run = gm(
        "gm", "witness", "add", "http://127.0.0.1:9/", "--key", missing,
        "--db", deployed_db, "--as", OPERATOR, expect=2,
    )  # fmt: skip
    assert f"--key {missing}: no such file" in _error(run)
