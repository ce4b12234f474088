"""Deploying with a plan (issue 23, items 13 and 14): `deploy --dry-run` shows the plan and
then what blocks it; `deploy PROFILE --plan-out FILE` writes the reviewed plan signed by
the GM, and `deploy apply FILE` deploys exactly that plan or refuses (exit 1) when the file
was altered, its signer is not an operator, or the store moved since, as `terraform plan
-out` and `terraform apply` do; `deploy rollback` of a profile never deployed says so.

Every store is a real SQLite file, every command the installed `gmtool` in a subprocess.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import OPERATOR, SUPPORT, Gmtool
from helpers import public_key, query

from gmtool.evidence.note import Signer, sign

RULES = Path(__file__).resolve().parent.parent / "rules"
QQ = RULES / "qq-showhand.toml"
JUNIOR_CAP_2000 = (
    "tiers.junior.street_caps",
    "[200, 500, 1000, 2000]",
    "tiers.junior.hand_cap",
    "2000",
    "tiers.junior.min_holding",
    "2000",
)


@pytest.fixture
def store(gm: Gmtool, tmp_path: Path) -> Path:
    """A new store: `boss` its operator, `sue` support, QQ showhand version 1 deployed."""
    db = tmp_path / "live.db"
    gm.add_roles(db)
    gm("deploy", QQ, "--db", db, "--as", OPERATOR)
    return db


def _qq_v2(gm: Gmtool, folder: Path, version: int | None = 2) -> Path:
    """QQ with the junior hand cap at 2,000 (the three Q5 values together), as `version`."""
    path = folder / "qq-cap.toml"
    shutil.copy(QQ, path)
    more = ("profile.version", str(version)) if version is not None else ()
    gm("rules", "set", path, *JUNIOR_CAP_2000, *more)
    return path


def _rows(db: Path) -> tuple[int, int]:
    """(deployments, GM actions): what a deployment adds to."""
    return (
        query(db, "SELECT COUNT(*) FROM deployments")[0][0],
        query(db, "SELECT COUNT(*) FROM gm_actions")[0][0],
    )


def _planned(gm: Gmtool, store: Path, tmp_path: Path, *extra: str, by: str = OPERATOR) -> Path:
    plan = tmp_path / "qq.plan"
    profile = _qq_v2(gm, tmp_path)
    run = gm("deploy", profile, "--plan-out", plan, *extra, "--db", store, "--as", by)
    assert f"plan written to {plan}" in run.stdout, run.stdout
    return plan


# -- 13: rolling back what was never deployed ---------------------------------------------------


@pytest.mark.parametrize("name", ["lequ-showhand", "rules/no-such-profile.toml", "qq-showhand-x"])
def test_rollback_of_a_profile_never_deployed_says_so(gm: Gmtool, store: Path, name: str) -> None:
    before = _rows(store)
    run = gm("deploy", "rollback", name, "--db", store, "--as", OPERATOR, expect=2)
    (line,) = run.stderr.splitlines()
    assert "deployed to this store: nothing to roll back" in line, line
    assert "(deployed profiles: qq-showhand)" in line, line
    assert _rows(store) == before


def test_rollback_of_a_profile_file_never_deployed_names_its_id(
    gm: Gmtool, store: Path, tmp_path: Path
) -> None:
    run = gm("deploy", "rollback", RULES / "lequ-showhand.toml", "--db", store, expect=2)
    assert run.stderr.startswith("error: lequ-showhand was never deployed to this store"), (
        run.stderr
    )


# -- 14: a dry run shows the plan, then what blocks it ------------------------------------------


def test_dry_run_shows_the_plan_then_the_blocker(gm: Gmtool, store: Path, tmp_path: Path) -> None:
    """Same version, other content: the plan is shown all the same, then why it is refused."""
    profile = _qq_v2(gm, tmp_path, version=None)
    before = _rows(store)
    run = gm("deploy", profile, "--dry-run", "--db", store, "--as", OPERATOR, expect=1)
    assert run.stdout.splitlines()[1:] == [
        "  rooms training, junior, middle, senior, expert (live now 4f7163c59916):",
        "    junior: hand cap 1,000 -> 2,000 (+100%)",
        "    junior: minimum holding to sit 1,000 -> 2,000 (+100%)",
        "    junior: street-5 cap 1,000 -> 2,000 (+100%)",
    ]
    assert run.stderr.splitlines()[-1].startswith(
        "error: blocked: qq-showhand version 1 is already deployed with other content"
    ), run.stderr
    plan = json.loads(
        gm(
            "deploy", profile, "--dry-run", "--json", "--db", store, "--as", OPERATOR, expect=1
        ).stdout
    )
    assert plan["changes"] and [b["exit_code"] for b in plan["blockers"]] == [1]
    assert _rows(store) == before


def test_dry_run_with_an_unknown_room_plans_the_rooms_there_are(
    gm: Gmtool, store: Path, tmp_path: Path
) -> None:
    profile = _qq_v2(gm, tmp_path)
    run = gm(
        "deploy", profile, "--dry-run", "--rooms", "junior", "--rooms", "vip", "--db", store,
        "--as", OPERATOR, expect=2,
    )  # fmt: skip
    assert "  rooms junior (live now 4f7163c59916):" in run.stdout.splitlines()
    assert run.stderr.splitlines()[-1] == (
        "error: blocked: no room vip in qq-showhand (rooms: training, junior, middle, senior, "
        "expert)"
    )


def test_dry_run_names_a_gm_who_may_not_deploy(gm: Gmtool, store: Path, tmp_path: Path) -> None:
    """Support may read the plan; the dry run says the deployment would be refused."""
    run = gm("deploy", _qq_v2(gm, tmp_path), "--dry-run", "--db", store, "--as", SUPPORT, expect=1)
    assert "junior: hand cap 1,000 -> 2,000 (+100%)" in run.stdout
    assert run.stderr.splitlines()[-1] == (
        "error: blocked: 'sue' is support; only operators may deploy"
    )


# -- 14: a saved plan is deployed exactly, or not at all -----------------------------------------


def test_a_saved_plan_deploys_exactly_what_was_reviewed(
    gm: Gmtool, store: Path, tmp_path: Path
) -> None:
    """The file the plan came from changes after the review: the reviewed text is deployed."""
    before = _rows(store)
    plan = _planned(gm, store, tmp_path, "--rooms", "junior")
    assert plan.stat().st_mode & 0o777 == 0o600
    assert _rows(store) == before, "planning changes nothing"
    reviewed = json.loads(plan.read_text(encoding="utf-8").rpartition("\n\n")[0])
    gm("rules", "set", tmp_path / "qq-cap.toml", "timeouts.action_s", "20")  # after the review
    run = gm("deploy", "apply", plan, "--db", store)
    assert "deployed qq-showhand v2 to junior" in run.stdout, run.stdout
    (row,) = query(store, "SELECT * FROM deployments WHERE id = 2")
    assert (row["config_id"], row["rooms"], row["deployed_by"]) == (
        reviewed["config_id"],
        '["junior"]',
        OPERATOR,
    )
    (stored,) = query(store, "SELECT profile_text FROM configs WHERE config_id = ?", (row[3],))
    assert stored[0] == reviewed["profile_text"] and "action_s = 20" not in stored[0]
    (action,) = query(store, "SELECT actor, action, request FROM gm_actions WHERE id = 4")
    assert tuple(action) == (OPERATOR, "deploy", reviewed["request"])
    assert "ok" in gm("audit", "--db", store).stdout.splitlines()[-1]


def test_a_saved_plan_is_refused_once_the_store_moved(
    gm: Gmtool, store: Path, tmp_path: Path
) -> None:
    plan = _planned(gm, store, tmp_path)
    other = tmp_path / "other.toml"  # another change of the same profile, deployed first
    shutil.copy(QQ, other)
    gm("rules", "set", other, "profile.version", "3", "timeouts.action_s", "20")
    gm("deploy", other, "--rooms", "expert", "--db", store, "--as", OPERATOR)
    before = _rows(store)
    run = gm("deploy", "apply", plan, "--db", store, expect=1)
    assert run.stderr.splitlines() == [
        f"error: the store moved since {plan} was made: qq-showhand was deployed or rolled "
        "back meanwhile (its newest deployment is now 2, it was 1); make a new plan"
    ]
    assert _rows(store) == before


def test_a_saved_plan_is_applied_once(gm: Gmtool, store: Path, tmp_path: Path) -> None:
    plan = _planned(gm, store, tmp_path)
    gm("deploy", "apply", plan, "--db", store)
    before = _rows(store)
    run = gm("deploy", "apply", plan, "--db", store, expect=1)
    assert run.stderr == f"error: {plan} was already applied (GM action 4); not again\n"
    assert _rows(store) == before


def _resigned(text: str, name: str = OPERATOR) -> str:
    """The text signed by a new key that carries `name` but is not the registered one."""
    return sign(text, Signer.generate(name))


TAMPERINGS = {
    # the profile text inside the plan: a bigger minimum holding than reviewed
    "profile text": (
        lambda note: note.replace("min_holding = 2000", "min_holding = 3000", 1),
        "was altered after boss signed it",
    ),
    # the rooms of the plan: every room instead of the junior room
    "rooms": (
        lambda note: note.replace('"rooms": [\n    "junior"\n  ]', '"rooms": null', 1),
        "was altered after boss signed it",
    ),
    "not JSON": (lambda note: note.replace('"base": 1,', '"base": 1', 1), "was altered"),
    "signature removed": (lambda note: note.rpartition("\n\n")[0] + "\n", "is not signed"),
    "signed again by another key named boss": (
        lambda note: _resigned(note.rpartition("\n\n")[0].replace('"junior"', '"expert"') + "\n"),
        "is not signed with boss's registered key",
    ),
}


@pytest.mark.parametrize("tampering", list(TAMPERINGS))
def test_a_tampered_plan_is_refused(
    gm: Gmtool, store: Path, tmp_path: Path, tampering: str
) -> None:
    change, words = TAMPERINGS[tampering]
    plan = _planned(gm, store, tmp_path, "--rooms", "junior")
    note = plan.read_text(encoding="utf-8")
    changed = change(note)
    assert changed != note, "the tampering must change the file"
    plan.write_text(changed, encoding="utf-8")
    before = _rows(store)
    run = gm("deploy", "apply", plan, "--db", store, expect=1)
    (line,) = run.stderr.splitlines()
    assert words in line and line.endswith("not applied"), line
    assert _rows(store) == before


def test_a_plan_signed_by_a_gm_without_the_role_is_refused(
    gm: Gmtool, store: Path, tmp_path: Path
) -> None:
    """alice plans as an operator; before it is applied she is made support."""
    gm(
        "gm", "users", "add", "alice", "--role", "operator", "--key", public_key("alice"),
        "--db", store, "--as", OPERATOR,
    )  # fmt: skip
    plan = _planned(gm, store, tmp_path, by="alice")
    gm("gm", "users", "add", "alice", "--role", "support", "--db", store, "--as", OPERATOR)
    before = _rows(store)
    run = gm("deploy", "apply", plan, "--db", store, expect=1)
    assert run.stderr == (
        f"error: {plan} is signed by alice, who is support: only an operator's plan is "
        "applied; not applied\n"
    )
    assert _rows(store) == before


def test_a_plan_for_another_store_is_refused(gm: Gmtool, store: Path, tmp_path: Path) -> None:
    plan = _planned(gm, store, tmp_path)
    other = tmp_path / "other.db"
    gm.add_roles(other)
    run = gm("deploy", "apply", plan, "--db", other, expect=1)
    assert "was made for another store" in run.stderr
    assert _rows(other) == (0, 2)


def test_a_blocked_plan_is_not_written(gm: Gmtool, store: Path, tmp_path: Path) -> None:
    plan = tmp_path / "qq.plan"
    profile = _qq_v2(gm, tmp_path, version=None)
    run = gm("deploy", profile, "--plan-out", plan, "--db", store, "--as", OPERATOR, expect=1)
    assert "junior: hand cap 1,000 -> 2,000 (+100%)" in run.stdout
    assert run.stderr.splitlines()[-1].endswith("; no plan was written")
    assert not plan.exists()


@pytest.mark.parametrize("content", ["", "profile = 1\n", "{}\n\n— boss AAAA\n"])
def test_apply_of_a_file_that_is_no_plan_is_a_usage_error(
    gm: Gmtool, store: Path, tmp_path: Path, content: str
) -> None:
    path = tmp_path / "not.plan"
    path.write_text(content, encoding="utf-8")
    run = gm("deploy", "apply", path, "--db", store, expect=2)
    assert run.stderr == (
        f"error: {path} is not a deploy plan (`gmtool deploy PROFILE --plan-out FILE` writes one)\n"
    )
