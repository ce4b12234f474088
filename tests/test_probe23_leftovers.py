"""Small leftovers of the outside probe of issue 23: plain words for an empty profile name
to roll back and for a folder given as a deploy plan."""

from __future__ import annotations

from pathlib import Path

from conftest import OPERATOR


def test_rollback_of_an_empty_profile_name_says_what_is_missing(gm, deployed_db: Path) -> None:
    run = gm("deploy", "rollback", "", "--db", deployed_db, "--as", OPERATOR, expect=2)
    assert run.stderr.strip() == "error: name the profile to roll back: its id, or its file"


def test_a_folder_given_as_a_deploy_plan_is_named_a_folder(
    gm, deployed_db: Path, tmp_path: Path
) -> None:
    run = gm("deploy", "apply", tmp_path, "--db", deployed_db, expect=2)
    assert f"{tmp_path} is a folder, not a file" in run.stderr, run.stderr
