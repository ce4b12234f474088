"""Roles (issue 6): operators act, support reads; every attempt is in the GM log.

`db init` registers the first operator with their key, afterwards only operators add
users, each request signed by the GM's own key. Support may read, replay and audit, but
not kick, close, adjust or deploy: each refusal exits 1 and is itself logged (who, what,
target, outcome). The acting user comes from `--as`, else $GMTOOL_USER. An adjustment is
one ledger row tied to its GM action and never makes a balance negative. The GM log is
hash-chained and audit verifies it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import public_key
from helpers import query as _query

from gmtool.cli.render_tables import command_lines

RULES = Path(__file__).resolve().parents[1] / "rules"
OPERATOR, SUPPORT = "boss", "sue"  # added by the conftest fixtures


def _last_log(gm, db: Path) -> dict:
    return gm.json("gm", "log", "--db", db, "--json")[-1]


def _add(gm, db: Path, name: str, role: str, by: str, expect: int = 0):
    return gm(
        "gm",
        "users",
        "add",
        name,
        "--role",
        role,
        "--key",
        public_key(name),
        "--db",
        db,
        "--as",
        by,
        expect=expect,
    )


def test_db_init_registers_the_first_operator_then_only_operators_add_users(
    tmp_path: Path, gm
) -> None:
    """Bootstrap happens once (issue 14): `db init` registers the first operator's key; a
    second `db init` by someone else changes nothing; afterwards only an operator's signed
    request adds users, and each refusal is logged with the request."""
    db = tmp_path / "roles.db"
    gm("db", "init", "--db", db, "--as", "alice")
    gm("db", "init", "--db", db, "--as", "mallory")  # bootstrap is closed: nothing changes
    refused = _add(gm, db, "bob", "support", "mallory", expect=1)
    assert "refused" in refused.stderr and "mallory" in refused.stderr
    log = _last_log(gm, db)
    assert (log["actor"], log["action"], log["target"]) == ("mallory", "users_add", "bob")
    assert log["outcome"]["ok"] is False and "not a GM user" in log["outcome"]["refused"]
    _add(gm, db, "bob", "support", "alice")
    _add(gm, db, "carl", "operator", "bob", expect=1)
    assert _last_log(gm, db)["outcome"]["refused"].startswith("'bob' is support")
    _add(gm, db, "dora", "admin", "alice", expect=2)
    users = {
        u["name"]: (u["role"], u["key"])
        for u in gm.json("gm", "users", "list", "--db", db, "--json")
    }
    assert users == {
        "alice": ("operator", public_key("alice")),
        "bob": ("support", public_key("bob")),
    }
    actions = [
        (r["actor"], r["action"], r["target"], r["outcome"].get("ok"))
        for r in gm.json("gm", "log", "--db", db, "--json")
    ]
    assert actions[:4] == [
        ("alice", "users_add", "alice", True),
        ("mallory", "users_add", "bob", False),
        ("alice", "users_add", "bob", True),
        ("bob", "users_add", "carl", False),
    ]
    gm("audit", "--db", db)


def test_a_new_gm_needs_a_key_and_keys_name_their_gm(tmp_path: Path, gm) -> None:
    """`gm users add` of a new GM without --key, or with someone else's key or a malformed
    one, is a usage error (exit 2) that registers nothing."""
    db = tmp_path / "keys.db"
    gm("db", "init", "--db", db, "--as", "alice")
    assert (
        "has no key"
        in gm(
            "gm", "users", "add", "bob", "--role", "support", "--db", db, "--as", "alice", expect=2
        ).stderr
    )
    assert (
        "not bob's"
        in gm(
            "gm",
            "users",
            "add",
            "bob",
            "--role",
            "support",
            "--key",
            public_key("carl"),
            "--db",
            db,
            "--as",
            "alice",
            expect=2,
        ).stderr
    )
    gm(
        "gm",
        "users",
        "add",
        "bob",
        "--role",
        "support",
        "--key",
        "bob+00+AAAA",
        "--db",
        db,
        "--as",
        "alice",
        expect=2,
    )
    assert [u["name"] for u in gm.json("gm", "users", "list", "--db", db, "--json")] == ["alice"]


def test_the_last_operator_cannot_be_demoted(tmp_path: Path, gm) -> None:
    """Demoting the only operator would leave nobody who can act (issue 14): refused and
    logged; with a second operator it is allowed."""
    db = tmp_path / "last.db"
    gm("db", "init", "--db", db, "--as", "alice")
    refused = _add(gm, db, "alice", "support", "alice", expect=1)
    assert "last operator" in refused.stderr
    assert _last_log(gm, db)["outcome"]["ok"] is False
    _add(gm, db, "mallory", "operator", "mallory", expect=1)  # no self-made operator
    _add(gm, db, "bob", "operator", "alice")
    _add(gm, db, "alice", "support", "bob")
    users = {u["name"]: u["role"] for u in gm.json("gm", "users", "list", "--db", db, "--json")}
    assert users == {"alice": "support", "bob": "operator"}
    gm("audit", "--db", db)


REFUSED = {  # command -> (the GM log's action, target, reason)
    "kick": (
        ["tables", "kick", "qq-showhand-junior-1", "bot-001", "--reason", "rude"],
        "kick",
        "qq-showhand-junior-1/bot-001",
        "rude",
    ),
    "close": (
        ["tables", "close", "qq-showhand-junior-1", "--reason", "late"],
        "close",
        "qq-showhand-junior-1",
        "late",
    ),
    "adjust": (
        ["players", "adjust", "bot-001", "500", "--reason", "refund"],
        "adjust",
        "bot-001",
        "refund",
    ),
    "deploy": (["deploy", str(RULES / "qq-showhand.toml")], "deploy", "qq-showhand", None),
    "rollback": (["deploy", "rollback", "qq-showhand"], "rollback", "qq-showhand", None),
}


@pytest.mark.parametrize("user", [SUPPORT, "stranger"])
@pytest.mark.parametrize("command", list(REFUSED))
def test_support_cannot_kick_close_adjust_or_deploy(
    host_copy: Path, gm, command: str, user: str
) -> None:
    """Each refusal exits 1, changes nothing, and is in `gm log` with who/what/target."""
    args, action, target, reason = REFUSED[command]
    counts = {
        t: _query(host_copy, f"SELECT COUNT(*) FROM {t}")[0][0]
        for t in ("ledger", "deployments", "gm_commands", "gm_actions")
    }
    run = gm(*args, "--db", host_copy, "--as", user, expect=1)
    assert "refused" in run.stdout + run.stderr and "Traceback" not in run.stderr
    log = _last_log(gm, host_copy)
    assert (log["actor"], log["action"], log["target"], log["reason"]) == (
        user,
        action,
        target,
        reason,
    )
    assert log["outcome"]["ok"] is False and log["outcome"]["refused"]
    assert log["at"] and log["hash"]
    for table, count in counts.items():
        after = _query(host_copy, f"SELECT COUNT(*) FROM {table}")[0][0]
        assert after == count + (table == "gm_actions"), table
    gm("audit", "--db", host_copy)  # the log, with the refusal, still verifies


@pytest.mark.parametrize(
    "command",
    [
        ["tables", "list"],
        ["tables", "show", "qq-showhand-junior-1"],
        ["players", "show", "bot-001"],
        ["hands", "list"],
        ["hands", "show", "1"],
        ["hands", "export", "1"],
        ["hands", "replay", "1"],
        ["audit"],
        ["gm", "log"],
        ["gm", "users", "list"],
        ["deploy", "history"],
    ],
)
def test_support_may_read_replay_and_audit(host_db: Path, gm, command: list[str]) -> None:
    gm(*command, "--db", host_db, env=gm.env(GMTOOL_USER=SUPPORT))


def test_an_operator_can_kick_close_adjust_and_deploy(deployed_db: Path, gm, virtual_host) -> None:
    """The operator kicks and closes through the real host (in this process, on virtual
    time: tests/hosting.py), then adjusts and deploys with the console while the host is
    still; every action is in the GM log, which audits clean."""
    db = deployed_db
    host = virtual_host(db, tables=6, speed=1.0, seed="roles", grace=1.0)
    table_id, player = host.run_until(host.running_players, what="a player in a running hand")[0]
    kicked = host.command(OPERATOR, "kick", table_id, player, "operator kick")
    assert kicked["ok"] and kicked["kicked"] == player, kicked
    assert command_lines(kicked)[0].startswith(f"kicked {player}"), kicked  # as the console says
    other = host.run_until(
        lambda: [t for t, _ in host.running_players() if t != table_id],
        what="a running hand at another table",
    )[0]
    closed = host.command(OPERATOR, "close", other, None, "operator close")
    assert closed["ok"] and closed["closed"] == other, closed
    assert command_lines(closed)[0].startswith(f"closed {other}"), closed
    # The host is still between steps: the console writes to the store it plays on.
    adjusted = gm(
        "players",
        "adjust",
        player,
        "250",
        "--reason",
        "operator adjust",
        "--db",
        db,
        "--as",
        OPERATOR,
    )
    assert "(+250, operator adjust)" in adjusted.stdout
    changed = db.with_name("video-showhand.toml")  # a real change (a version 1 redeploy
    changed.write_text(
        (RULES / "video-showhand.toml")
        .read_text(encoding="utf-8")
        .replace("version = 1\n", "version = 2\n", 1)
        .replace("action_s = 15 ", "action_s = 20 ", 1),
        encoding="utf-8",
    )  # of the same text changes nothing and logs nothing)
    gm("deploy", changed, "--db", db, "--as", OPERATOR)
    host.advance(120)  # the host plays on after the console's writes (new hands, G5)
    host.stop()
    assert not [m for m in host.messages if "internal error" in m], host.messages
    log = gm.json("gm", "log", "--db", db, "--json")
    mine = [
        (r["action"], r["target"], r["outcome"]["ok"])
        for r in log
        if r["actor"] == OPERATOR and r["action"] in ("kick", "close", "adjust", "deploy")
    ]
    assert mine[-4:] == [
        ("kick", f"{table_id}/{player}", True),
        ("close", other, True),
        ("adjust", player, True),
        ("deploy", "video-showhand", True),
    ]
    gm("audit", "--db", db)


def test_adjust_is_one_ledger_row_tied_to_its_gm_action(host_copy: Path, gm) -> None:
    player = "bot-003"
    coins = _query(host_copy, "SELECT coins FROM players WHERE name = ?", (player,))[0][0]
    rows = _query(host_copy, "SELECT COUNT(*) FROM ledger")[0][0]
    gm(
        "players",
        "adjust",
        player,
        "250",
        "--reason",
        "refund of hand 7",
        "--db",
        host_copy,
        "--as",
        OPERATOR,
    )
    log = _last_log(gm, host_copy)
    assert (log["actor"], log["action"], log["target"], log["reason"]) == (
        OPERATOR,
        "adjust",
        player,
        "refund of hand 7",
    )
    assert log["outcome"] == {"ok": True, "coins_before": coins, "coins": coins + 250, "delta": 250}
    assert _query(host_copy, "SELECT COUNT(*) FROM ledger")[0][0] == rows + 1
    row = _query(host_copy, "SELECT * FROM ledger ORDER BY id DESC LIMIT 1")[0]
    assert (row["player"], row["delta"], row["hand_id"], row["gm_action_id"]) == (
        player,
        250,
        None,
        log["id"],
    )
    shown = gm.json("players", "show", player, "--db", host_copy, "--json")
    assert shown["coins"] == coins + 250
    assert shown["ledger"][0]["gm_action_id"] == log["id"]
    gm("audit", "--db", host_copy)


def test_adjust_refuses_a_negative_balance(host_copy: Path, gm) -> None:
    player = "bot-003"
    coins = _query(host_copy, "SELECT coins FROM players WHERE name = ?", (player,))[0][0]
    rows = _query(host_copy, "SELECT COUNT(*) FROM ledger")[0][0]
    run = gm(
        "players",
        "adjust",
        "--db",
        host_copy,
        "--as",
        OPERATOR,
        "--reason",
        "too much",
        "--",
        player,
        str(-(coins + 1)),
        expect=1,
    )
    assert "negative" in run.stderr
    assert _query(host_copy, "SELECT COUNT(*) FROM ledger")[0][0] == rows
    assert _query(host_copy, "SELECT coins FROM players WHERE name = ?", (player,))[0][0] == coins
    log = _last_log(gm, host_copy)
    assert log["action"] == "adjust" and log["outcome"]["ok"] is False
    gm(
        "players",
        "adjust",
        "--db",
        host_copy,
        "--as",
        OPERATOR,
        "--reason",
        "all of it",
        "--",
        player,
        str(-coins),
    )  # down to exactly zero is allowed
    assert _query(host_copy, "SELECT coins FROM players WHERE name = ?", (player,))[0][0] == 0
    gm("audit", "--db", host_copy)


def test_adjust_takes_a_negative_delta_as_written_in_its_help(host_copy: Path, gm) -> None:
    """`players adjust NAME DELTA`, "negative to remove": `-50` is a delta, not an option."""
    run = gm(
        "players",
        "adjust",
        "bot-003",
        "-50",
        "--reason",
        "chargeback",
        "--db",
        host_copy,
        "--as",
        OPERATOR,
        expect=None,
    )
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.parametrize(
    "env_user, as_user, acting, allowed",
    [
        (SUPPORT, None, SUPPORT, False),
        (OPERATOR, None, OPERATOR, True),
        (SUPPORT, OPERATOR, OPERATOR, True),  # --as wins over $GMTOOL_USER
        (OPERATOR, SUPPORT, SUPPORT, False),
    ],
)
def test_the_acting_user_comes_from_as_else_gmtool_user(
    host_copy: Path, gm, env_user: str, as_user: str | None, acting: str, allowed: bool
) -> None:
    args = ["players", "adjust", "bot-004", "10", "--reason", "who acts", "--db", host_copy]
    args += ["--as", as_user] if as_user else []
    gm(*args, env=gm.env(GMTOOL_USER=env_user), expect=0 if allowed else 1)
    log = _last_log(gm, host_copy)
    assert (log["actor"], log["outcome"]["ok"]) == (acting, allowed)
    gm("audit", "--db", host_copy)


def test_gm_log_text_shows_who_what_target_reason_outcome(host_db: Path, gm) -> None:
    text = gm("gm", "log", "--db", host_db).stdout
    entries = gm.json("gm", "log", "--db", host_db, "--json")
    refusal = next(e for e in entries if e["outcome"].get("refused"))
    line = next(line for line in text.splitlines() if f" {refusal['id']} " in line[:6])
    for part in (refusal["actor"], refusal["action"], refusal["target"], "REFUSED"):
        assert part in line, (part, line)
    assert [e["id"] for e in entries] == list(range(1, len(entries) + 1))
    assert json.dumps(entries[0]["outcome"])  # outcomes are JSON objects, not text
