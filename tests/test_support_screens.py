"""Issue 23, item 6: the screens support reads keep what support needs at any width.

`deploy history`, `gm log` and `gm users list`, run as real `gmtool` subprocesses with
their output piped and `COLUMNS` set to 60, 80 and 300 (piped output honours COLUMNS):
every id is shown whole (never cut short with an ellipsis), the audit trail keeps when,
what, whom, why and what came of it, long text wraps instead of being cut or its column
dropped, and no line is wider than the screen but for an id that cannot be broken. A
table that cannot fit is printed as records (tests/screens.py reads either layout).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import OPERATOR, RULES, Gmtool
from helpers import clean_env
from screens import parse_screen

WIDTHS = (60, 80, 300)
LONG_REASON = (
    "player reported for collusion in three tickets (#4411, #4419, #4420); chat logs "
    "attached to the ticket, second warning this week"
)


def at_width(gm: Gmtool, width: int, *args) -> str:
    run = gm(*args, env=clean_env(COLUMNS=str(width)))
    out = run.stdout
    assert "…" not in out, out  # nothing is ever cut short
    return out


def _fits(out: str, width: int, whole: list[str]) -> None:
    """Every line fits the screen, unless it holds an id that cannot be broken."""
    for line in out.splitlines():
        if len(line) > width:
            assert any(value in line and len(value) > width // 2 for value in whole), (
                width,
                line,
            )


def moment(stamp: str) -> str:
    return stamp[:19].replace("T", " ")


@pytest.fixture(scope="module")
def trail(tmp_path_factory, gm: Gmtool) -> Path:
    """A store whose GM log has deployments, a rollback, a refused action, an adjustment
    with a long reason and one with a huge amount."""
    db = tmp_path_factory.mktemp("screens") / "trail.db"
    gm.deploy_all(db)
    gm.add_roles(db)
    changed = db.with_name("qq-v2.toml")
    changed.write_text(
        (RULES / "qq-showhand.toml")
        .read_text(encoding="utf-8")
        .replace("version = 1\n", "version = 2\n", 1)
        .replace("action_s = 15 ", "action_s = 20 ", 1),
        encoding="utf-8",
    )
    gm("deploy", changed, "--rooms", "junior", "--rooms", "middle", "--db", db, "--as", OPERATOR)
    gm("deploy", "rollback", "qq-showhand", "--db", db, "--as", OPERATOR)
    from gmtool.store import ledger
    from gmtool.store.db import connect

    with connect(db) as store:
        ledger.grant(store, "bot-001", 248_000, "opening_balance")
    gm(
        "players",
        "adjust",
        "bot-001",
        "1000",
        "--reason",
        LONG_REASON,
        "--db",
        db,
        "--as",
        OPERATOR,
    )
    gm(
        "players",
        "adjust",
        "bot-001",
        "-5",
        "--reason",
        "support tries",
        "--db",
        db,
        "--as",
        "sue",
        expect=1,
    )
    return db


@pytest.mark.parametrize("width", WIDTHS)
def test_deploy_history_shows_every_id_and_cell_whole(gm: Gmtool, trail: Path, width: int) -> None:
    rows = gm.json("deploy", "history", "--db", trail, "--json")
    assert len(rows) >= 7
    out = at_width(gm, width, "deploy", "history", "--db", trail)
    columns = ["id", "profile", "version", "config", "rooms", "by", "at", "in effect", "note"]
    shown = parse_screen(out, columns)
    assert [int(r["id"]) for r in shown] == [r["id"] for r in rows], out
    for row, screen in zip(rows, shown, strict=True):
        assert screen["profile"] == row["profile_id"], (screen, out)
        assert screen["config"] == row["config_id"][:12], (screen, out)
        assert screen["by"] == row["deployed_by"], (screen, out)
        assert screen["at"] == moment(row["deployed_at"]), (screen, out)
        assert screen["version"] == str(row["version"]), (screen, out)
        assert screen["rooms"] == (", ".join(row["rooms"]) if row["rooms"] else "all")
        assert screen["in effect"] in ("yes", "no", "rollback target"), screen
        assert screen.get("note", "") == (row["note"] or ""), (screen, out)
    _fits(out, width, [r["config_id"][:12] for r in rows])


@pytest.mark.parametrize("width", WIDTHS)
def test_gm_log_keeps_when_what_whom_why_and_outcome(gm: Gmtool, trail: Path, width: int) -> None:
    """The audit trail: every entry's time, actor, action, target, reason and outcome are
    on screen in full, however long the reason or the outcome."""
    entries = gm.json("gm", "log", "--db", trail, "--json")
    assert any(e["reason"] == LONG_REASON for e in entries)
    assert any(e["outcome"].get("refused") for e in entries)
    out = at_width(gm, width, "gm", "log", "--db", trail)
    columns = ["#", "at", "who", "action", "target", "reason", "outcome"]
    shown = parse_screen(out, columns)
    assert [int(r["#"]) for r in shown] == [e["id"] for e in entries], out
    for entry, screen in zip(entries, shown, strict=True):
        assert screen["at"] == moment(entry["at"]), (screen, out)
        assert screen["who"] == entry["actor"], (screen, out)
        assert screen["action"] == entry["action"], (screen, out)
        assert screen.get("target", "") == (entry["target"] or ""), (screen, out)
        assert screen.get("reason", "") == (entry["reason"] or ""), (screen, out)
        outcome = screen["outcome"]
        if entry["outcome"].get("refused"):
            assert outcome == "REFUSED: " + entry["outcome"]["refused"], (screen, out)
        else:
            assert outcome.startswith("ok"), (screen, out)
    adjusted = next(s for s, e in zip(shown, entries, strict=True) if e["reason"] == LONG_REASON)
    assert adjusted["outcome"] == "ok: 248,000 -> 249,000 coins (+1,000)", adjusted
    _fits(out, width, [])


@pytest.mark.parametrize("width", WIDTHS)
def test_gm_users_list_keeps_since_and_whole_keys(gm: Gmtool, trail: Path, width: int) -> None:
    users = gm.json("gm", "users", "list", "--db", trail, "--json")
    out = at_width(gm, width, "gm", "users", "list", "--db", trail)
    shown = parse_screen(out, ["name", "role", "key", "since"])
    assert [s["name"] for s in shown] == [u["name"] for u in users], out
    for user, screen in zip(users, shown, strict=True):
        assert screen["role"] == user["role"]
        assert screen["key"] == user["key"], (screen, out)  # a key is never broken
        assert screen["since"] == moment(user["created_at"]), (screen, out)
    _fits(out, width, [u["key"] for u in users])


def test_piped_output_without_columns_is_one_wide_table(gm: Gmtool, trail: Path) -> None:
    """Without COLUMNS a pipe or a file gets tables wide enough for their rows (200)."""
    env = {k: v for k, v in clean_env().items() if k != "COLUMNS"}
    out = gm("gm", "users", "list", "--db", trail, env=env).stdout
    header = next(line for line in out.splitlines() if line.startswith("┃"))
    assert all(name in header for name in ("name", "role", "key", "since")), out
