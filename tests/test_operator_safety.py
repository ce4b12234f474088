"""Operator safety (issue 13): what the console refuses, and that a refusal changes nothing.

Every test runs the real console script in a subprocess (or the real store functions) on
real SQLite files, and checks three things: the exit code (0 fine, 1 a finding or a
refusal, 2 usage or environment), one message for the user (never a traceback, never
"internal error"), and, for a refused command, that the data is as it was: the file's
bytes, or the rows it would have changed. Hosts run on virtual time (tests/hosting.py)
or as a real `gmtool house run` process that the test waits on by what it says; nothing
here sleeps or compares wall-clock durations.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from conftest import CLI_TIMEOUT_S, OPERATOR, RULES, Gmtool, copy_db
from helpers import clean_env, gmtool_command, query
from screens import parse_screen

from gmtool.store import ledger
from gmtool.store.db import connect

DEMO_TIMEOUT_S = 180
QQ = RULES / "qq-showhand.toml"


# -- helpers ------------------------------------------------------------------------------


def snapshot(path: Path) -> dict[str, bytes | None]:
    """The bytes of a store and of its WAL / shared-memory / key files (None: absent)."""
    out: dict[str, bytes | None] = {}
    for suffix in ("", "-wal", "-shm", ".key", ".seed.key"):
        part = path.with_name(path.name + suffix)
        out[suffix] = part.read_bytes() if part.is_file() else None
    return out


def store_bytes(path: Path) -> dict[str, bytes | None]:
    """The bytes that hold a store's data: the file, its WAL and key file. Not the -shm
    index, which SQLite (re)creates when anyone opens a WAL store, even read-only; an
    empty WAL holds nothing, like an absent one."""
    shot = snapshot(path)
    shot["-wal"] = shot["-wal"] or None
    return {k: v for k, v in shot.items() if k != "-shm"}


def count(db: Path, table: str) -> int:
    return query(db, f"SELECT COUNT(*) FROM {table}")[0][0]


def coins_of(db: Path, player: str) -> int:
    return query(db, "SELECT coins FROM players WHERE name = ?", (player,))[0][0]


def one_message(run: subprocess.CompletedProcess) -> str:
    """The user message of a failed command (stderr): exactly one error line (gmtool's
    `error: ...`, or click's usage block with its one `Error: ...`), no traceback, no
    internal error."""
    out = run.stdout + run.stderr
    assert "Traceback" not in out, out
    assert "internal error" not in out, out
    message = run.stderr.strip() or run.stdout.strip()
    errors = [line for line in message.splitlines() if line.lower().startswith("error")]
    assert len(errors) == 1, (run.returncode, run.stdout, run.stderr)
    return message


def refused(gm: Gmtool, *args, code: int = 2, env: dict | None = None) -> str:
    """Run a command that must fail with `code`; its one message."""
    run = gm(*args, expect=code, env=env)
    message = one_message(run)
    assert len(message.splitlines()) <= 12, message  # a message, not a dump
    return message


@pytest.fixture(scope="module")
def base_db(tmp_path_factory, gm: Gmtool) -> Path:
    """One store like `deployed_db` (five profiles, `boss` and `sue`) and a player
    `bot-001` with 100 coins, built once for this module; tests use copies (`store`)."""
    db = tmp_path_factory.mktemp("base") / "base.db"
    gm.deploy_all(db)
    gm.add_roles(db)
    grant(db, "bot-001", 100)
    return db


@pytest.fixture
def store(base_db: Path, tmp_path: Path) -> Path:
    """A private copy of `base_db`."""
    return copy_db(base_db, tmp_path / "store", "store.db")


def grant(db: Path, player: str, amount: int = 100) -> None:
    with connect(db) as store:
        ledger.grant(store, player, amount, "opening_balance")


# -- 1. the demo never replaces a file that is not its own --------------------------------


def run_demo(db: Path, cwd: Path) -> subprocess.CompletedProcess:
    run = subprocess.run(
        [*gmtool_command(), "demo", "--db", str(db), "--duration", "1"],
        check=False,
        cwd=cwd,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=DEMO_TIMEOUT_S,
    )
    assert "Traceback" not in run.stdout + run.stderr, run.stdout + run.stderr
    return run


def _foreign_sqlite(path: Path) -> Path:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (x INTEGER)")
    conn.execute("INSERT INTO t VALUES (42)")
    conn.commit()
    conn.close()
    return path


def _assert_demo_refuses(path: Path, cwd: Path, why: str) -> None:
    before = store_bytes(path) if not path.is_dir() else sorted(p.name for p in path.iterdir())
    run = run_demo(path, cwd)
    assert run.returncode == 2, (run.returncode, run.stdout, run.stderr)
    message = one_message(run)
    assert str(path.name) in message and why in message, message
    assert "the demo only creates a new store or replaces its own" in message, message
    after = store_bytes(path) if not path.is_dir() else sorted(p.name for p in path.iterdir())
    assert after == before, f"the demo changed {path}"


def test_demo_refuses_a_gmtool_store_that_is_not_the_demos(
    deployed_db: Path, tmp_path: Path
) -> None:
    users = count(deployed_db, "gm_users")
    _assert_demo_refuses(deployed_db, tmp_path, "not the demo's")
    assert count(deployed_db, "gm_users") == users > 0


def test_demo_refuses_another_applications_sqlite_file(tmp_path: Path) -> None:
    other = _foreign_sqlite(tmp_path / "other.db")
    _assert_demo_refuses(other, tmp_path, "not a gmtool store")
    assert query(other, "SELECT x FROM t")[0][0] == 42


def test_demo_refuses_a_text_file(tmp_path: Path) -> None:
    text = tmp_path / "notes.db"
    text.write_text("my notes, not a database\n" * 10, encoding="utf-8")
    _assert_demo_refuses(text, tmp_path, "is not a database")


def test_demo_refuses_a_folder(tmp_path: Path) -> None:
    folder = tmp_path / "folder.db"
    folder.mkdir()
    (folder / "keep.txt").write_text("keep me", encoding="utf-8")
    _assert_demo_refuses(folder, tmp_path, "not a regular file")
    assert (folder / "keep.txt").read_text(encoding="utf-8") == "keep me"


def test_demo_replaces_its_own_demo_store(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    for _ in range(2):
        run = run_demo(db, tmp_path)
        assert run.returncode == 0, (run.stdout, run.stderr)
        assert "internal error" not in run.stdout + run.stderr
    assert count(db, "deployments") == 5
    assert count(db, "hands") > 0


# -- 2. a deduction never leaves a balance that a running hand could push negative --------


def test_deduction_from_a_player_in_a_running_hand_is_refused_until_it_ends(
    gm: Gmtool, deployed_db: Path, virtual_host
) -> None:
    db = deployed_db
    host = virtual_host(db, tables=2, systems=["qq-showhand"], speed=1.0, seed="adj")
    _, player = host.run_until(
        lambda: host.running_players(coins_only=True), what="a player in a running coin hand"
    )[0]
    hand, brought = query(
        db,
        "SELECT h.id, json_extract(s.value, '$.coins') FROM hands h, "
        "json_each(h.seats) s WHERE h.outcome = 'running' AND "
        "json_extract(s.value, '$.player') = ?",
        (player,),
    )[0]
    held, rows = coins_of(db, player), count(db, "ledger")
    assert held >= brought > 0

    # A deduction that would leave less than the hand may take: refused, nothing moves.
    deduction = held - brought + 1
    message = refused(
        gm,
        "players",
        "adjust",
        player,
        str(-deduction),
        "--reason",
        "r",
        "--as",
        OPERATOR,
        "--db",
        db,
        code=1,
    )
    assert "running hand" in message and str(hand) in message, message
    assert "negative" in message, message
    assert (coins_of(db, player), count(db, "ledger")) == (held, rows)

    # Adding coins during the hand is fine.
    gm("players", "adjust", player, "5", "--reason", "r", "--as", OPERATOR, "--db", db)
    assert coins_of(db, player) == held + 5
    assert count(db, "ledger") == rows + 1
    assert query(db, "SELECT outcome FROM hands WHERE id = ?", (hand,))[0][0] == "running"

    # Once the player sits in no running hand, the same deduction goes through.
    host.run_until(
        lambda: (
            not query(
                db,
                "SELECT 1 FROM hands h, json_each(h.seats) s WHERE h.outcome = 'running' AND "
                "json_extract(s.value, '$.player') = ?",
                (player,),
            )
        ),
        what=f"{player} out of every running hand",
    )
    assert query(db, "SELECT outcome FROM hands WHERE id = ?", (hand,))[0][0] != "running"
    now = coins_of(db, player)
    after = min(deduction, now)  # the hand may have taken what is left below `deduction`
    assert after > 0, f"{player} lost every coin in hand {hand}"
    gm("players", "adjust", player, str(-after), "--reason", "r", "--as", OPERATOR, "--db", db)
    assert coins_of(db, player) == now - after


def test_audit_reports_a_negative_balance(gm: Gmtool, store: Path) -> None:
    db = store
    grant(db, "broke", 100)
    gm("audit", "--db", db)
    conn = sqlite3.connect(db)
    with conn:
        conn.execute(
            "INSERT INTO ledger (hand_id, gm_action_id, player, delta, reason, "
            "created_at) VALUES (NULL, NULL, 'broke', -1000, 'opening_balance', "
            "'2026-01-01T00:00:00.000000+00:00')"
        )
        conn.execute("UPDATE players SET coins = coins - 1000 WHERE name = 'broke'")
    conn.close()
    assert coins_of(db, "broke") == -900
    run = gm("audit", "--db", db, expect=1)
    out = run.stdout + run.stderr
    assert "internal error" not in out
    lines = [line for line in out.splitlines() if "broke" in line]
    assert lines and any("negative" in line for line in lines), out


# -- 3. numbers beyond the bounds are refused where they enter -----------------------------


@pytest.mark.parametrize(
    "args",
    [
        ("players", "adjust", "bot-001", "9223372036854775000", "--reason", "r", "--as", OPERATOR),
        ("players", "adjust", "bot-001", "1000000000001", "--reason", "r", "--as", OPERATOR),
        ("hands", "show", "9223372036854775808"),
        ("hands", "list", "--limit", "100000000000000000000"),
        ("hands", "list", "--limit", "1e20"),
        ("gm", "log", "--limit", "-1"),
    ],
    ids=[
        "adjust-near-2**63",
        "adjust-above-10**12",
        "hand-id-2**63",
        "limit-10**20",
        "limit-1e20",
        "log-limit-negative",
    ],
)
def test_numbers_out_of_bounds_are_usage_errors_that_change_nothing(
    gm: Gmtool, store: Path, args: tuple
) -> None:
    before = store_bytes(store)
    message = refused(gm, *args, "--db", store, code=2)
    assert "range" in message or "not a valid" in message, message
    assert store_bytes(store) == before
    assert coins_of(store, "bot-001") == 100


def _qq_with(tmp_path: Path, name: str, old: str, new: str, after: str = "") -> Path:
    """rules/qq-showhand.toml with the first `old` (after `after`, if given) replaced."""
    text = QQ.read_text(encoding="utf-8")
    start = text.index(after) if after else 0
    at = text.index(old, start)
    path = tmp_path / name
    path.write_text(text[:at] + new + text[at + len(old) :], encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "key, old, new, after",
    [
        ("profile.version", "version = 1", "version = 9223372036854775808", ""),
        (
            "tiers.junior.hand_cap",
            "hand_cap = 1000",
            "hand_cap = 9223372036854775807",
            'id = "junior"',
        ),
    ],
    ids=["version-2**63", "hand_cap-2**63-1"],
)
def test_profile_numbers_beyond_the_bounds_are_out_of_range_findings(
    gm: Gmtool, tmp_path: Path, key: str, old: str, new: str, after: str
) -> None:
    profile = _qq_with(tmp_path, "big.toml", old, new, after)
    run = gm("rules", "validate", profile, expect=1)
    out = run.stdout + run.stderr
    assert "internal error" not in out
    assert re.search(rf"\[out-of-range\] {re.escape(key)}:", out), out


# -- 4. blank names and reasons -----------------------------------------------------------


@pytest.mark.parametrize("blank", ["", "   "], ids=["empty", "blank"])
@pytest.mark.parametrize("command", ["users-add", "adjust", "kick"])
def test_blank_user_names_and_reasons_are_refused_and_not_logged(
    gm: Gmtool, store: Path, command: str, blank: str
) -> None:
    db = store
    args = {
        "users-add": ("gm", "users", "add", blank, "--role", "support"),
        "adjust": ("players", "adjust", "bot-001", "5", "--reason", blank),
        "kick": ("tables", "kick", "qq-showhand-junior-1", "bot-001", "--reason", blank),
    }[command]
    logged, users, rows = count(db, "gm_actions"), count(db, "gm_users"), count(db, "ledger")
    commands = count(db, "gm_commands")
    message = refused(gm, *args, "--as", OPERATOR, "--db", db, code=2)
    assert "empty" in message, message
    assert (
        count(db, "gm_actions"),
        count(db, "gm_users"),
        count(db, "ledger"),
        count(db, "gm_commands"),
    ) == (logged, users, rows, commands)
    assert coins_of(db, "bot-001") == 100


# -- 5. --since / --until ------------------------------------------------------------------


@pytest.mark.parametrize("command", [("hands", "list"), ("audit",)], ids=["hands", "audit"])
@pytest.mark.parametrize("flag", ["--since", "--until"])
@pytest.mark.parametrize("value", ["2026-13-45", "whenever"])
def test_unreadable_times_are_refused_naming_the_flag(
    gm: Gmtool, store: Path, command: tuple, flag: str, value: str
) -> None:
    message = refused(gm, *command, flag, value, "--db", store, code=2)
    assert flag in message and value in message, message


@pytest.mark.parametrize("command", [("hands", "list"), ("audit",)], ids=["hands", "audit"])
@pytest.mark.parametrize("value", ["yesterday", "2h", "3d"])
def test_relative_times_are_read(gm: Gmtool, store: Path, command: tuple, value: str) -> None:
    run = gm(*command, "--since", value, "--db", store)
    assert "internal error" not in run.stdout + run.stderr
    gm(*command, "--until", value, "--db", store)


def test_one_moment_written_four_ways_selects_the_same_hands(gm: Gmtool, host_copy: Path) -> None:
    stamps = [r[0] for r in query(host_copy, "SELECT started_at FROM hands ORDER BY started_at")]
    assert len(stamps) > 50 and stamps[0].startswith("2100-01-01"), stamps[:3]  # virtual
    # A whole minute in the middle of the hands, so some start before it and some after.
    middle = stamps[len(stamps) // 2][:16]  # YYYY-MM-DDTHH:MM (UTC)
    moment = datetime.fromisoformat(middle).replace(tzinfo=UTC) + timedelta(minutes=1)
    forms = [
        moment.astimezone(timezone(timedelta(hours=8))).isoformat(),  # +08:00
        moment.strftime("%Y-%m-%dT%H:%M:%SZ"),
        moment.strftime("%Y-%m-%d %H:%M:%S"),
        moment.strftime("%Y-%m-%dT%H:%M:%S"),
    ]
    assert forms[0].endswith("+08:00"), forms
    expected_after = {
        r[0]
        for r in query(
            host_copy,
            "SELECT id FROM hands WHERE started_at >= ?",
            (moment.isoformat(timespec="microseconds"),),
        )
    }
    expected_before = {r[0] for r in query(host_copy, "SELECT id FROM hands")} - expected_after
    assert expected_after and expected_before
    for form in forms:
        after = {
            h["id"]
            for h in gm.json(
                "hands", "list", "--since", form, "--limit", "0", "--db", host_copy, "--json"
            )
        }
        before = {
            h["id"]
            for h in gm.json(
                "hands", "list", "--until", form, "--limit", "0", "--db", host_copy, "--json"
            )
        }
        assert (after, before) == (expected_after, expected_before), form


# -- 6. a filter naming nobody -------------------------------------------------------------


@pytest.mark.parametrize("command", [("audit",), ("hands", "list")], ids=["audit", "hands"])
@pytest.mark.parametrize("flag", ["--player", "--table"])
def test_filters_naming_an_unknown_player_or_table_are_refused(
    gm: Gmtool, store: Path, command: tuple, flag: str
) -> None:
    message = refused(gm, *command, flag, "nosuch", "--db", store, code=2)
    assert "nosuch" in message and len(message.splitlines()) == 1, message


# -- 7. a folder of profiles: every file gets its findings ---------------------------------


def test_validate_folder_reports_every_file_deep_nesting_and_broken_links_included(
    gm: Gmtool, tmp_path: Path
) -> None:
    folder = tmp_path / "profiles"
    folder.mkdir()
    shutil.copyfile(QQ, folder / "a-valid.toml")
    (folder / "b-deep.toml").write_text("x = " + "[" * 3000 + "]" * 3000 + "\n", encoding="utf-8")
    (folder / "c-broken.toml").symlink_to(tmp_path / "nowhere" / "gone.toml")
    invalid = _qq_with(
        tmp_path, "d-invalid.toml", "hand_cap = 1000", "hand_cap = 1500", 'id = "junior"'
    )
    shutil.move(invalid, folder / "d-invalid.toml")

    alone = gm.json("rules", "validate", folder / "d-invalid.toml", "--format", "json", expect=1)
    own = {(f["code"], f["path"]) for f in alone["errors"] + alone["warnings"]}
    assert own, alone

    report = gm.json("rules", "validate", folder, "--format", "json", expect=1)
    assert report["files"] == 4, report
    findings: dict[str, set] = {}
    for finding in report["errors"] + report["warnings"]:
        findings.setdefault(Path(finding["file"]).name, set()).add(
            (finding["code"], finding["path"])
        )
    assert "a-valid.toml" not in findings, findings
    assert {code for code, _ in findings["b-deep.toml"]} == {"toml-syntax"}, findings
    assert {code for code, _ in findings["c-broken.toml"]} == {"unreadable"}, findings
    assert findings["d-invalid.toml"] == own, findings

    text = gm("rules", "validate", folder, expect=1)
    out = text.stdout + text.stderr
    assert "internal error" not in out
    for name in ("b-deep.toml", "c-broken.toml", "d-invalid.toml"):
        assert name in out, out
    assert re.search(r"^4 profile\(s\) checked", out, re.MULTILINE), out


# -- 8. values a command cannot use, files of the wrong kind -------------------------------


def test_tables_watch_refuses_a_negative_interval(gm: Gmtool, store: Path) -> None:
    message = refused(gm, "tables", "watch", "--interval", "-1", "--count", "1", "--db", store)
    assert "--interval" in message, message


@pytest.mark.parametrize("flag", ["--duration", "--grace"])
def test_house_run_refuses_negative_times_without_starting(
    gm: Gmtool, store: Path, flag: str
) -> None:
    before, tables = store_bytes(store), count(store, "tables")
    message = refused(gm, "house", "run", flag, "-1", "--tables", "1", "--db", store)
    assert flag in message and "hosting" not in message, message
    assert store_bytes(store) == before and count(store, "tables") == tables
    assert not store.with_name(store.name + ".host.lock").exists()


def test_rules_test_on_a_profile_says_it_is_a_profile_not_a_scenario(gm: Gmtool) -> None:
    run = gm("rules", "test", QQ, expect=1)
    out = run.stdout + run.stderr
    assert "internal error" not in out
    assert "is a rule profile, not a scenario" in out, out


def test_deploy_of_a_scenario_is_refused(gm: Gmtool, store: Path) -> None:
    scenario = RULES / "scenarios" / "stud5" / "s08-one-player-refused.toml"
    deployments, before = count(store, "deployments"), store_bytes(store)
    message = refused(gm, "deploy", scenario, "--db", store, "--as", OPERATOR)
    assert "is a scenario" in message, message
    assert count(store, "deployments") == deployments
    assert store_bytes(store) == before


def test_strict_validation_fails_a_profile_with_only_warnings(gm: Gmtool, tmp_path: Path) -> None:
    profile = _qq_with(
        tmp_path,
        "warned.toml",
        "street_caps = [200, 500, 1000, 1000]",
        "street_caps = [300, 500, 1000, 1000]",
        'id = "junior"',
    )
    report = gm.json("rules", "validate", profile, "--format", "json")
    assert report["warnings"] and not report["errors"], report
    lenient = gm("rules", "validate", profile)
    assert lenient.stdout.strip().splitlines()[-1].endswith(": ok"), lenient.stdout
    strict = gm("rules", "validate", profile, "--strict", expect=1)
    last = strict.stdout.strip().splitlines()[-1]
    assert not last.endswith(": ok"), strict.stdout
    assert "warning" in strict.stdout


# -- 9. another writer holds the store ----------------------------------------------------


def test_a_write_blocked_by_another_writer_says_locked_then_succeeds(
    gm: Gmtool, store: Path
) -> None:
    env = gm.env(GMTOOL_BUSY_TIMEOUT_MS="300")
    args = ("players", "adjust", "bot-001", "5", "--reason", "r", "--as", OPERATOR, "--db", store)
    holder = sqlite3.connect(store, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")
        rows = holder.execute("SELECT COUNT(*) FROM ledger").fetchone()[0]
        logged = holder.execute("SELECT COUNT(*) FROM gm_actions").fetchone()[0]
        message = refused(gm, *args, env=env, code=2)
        assert "locked" in message and len(message.splitlines()) == 1, message
        assert holder.execute("SELECT COUNT(*) FROM ledger").fetchone()[0] == rows
        assert holder.execute("SELECT COUNT(*) FROM gm_actions").fetchone()[0] == logged
        holder.execute("ROLLBACK")
    finally:
        holder.close()
    assert coins_of(store, "bot-001") == 100
    gm(*args, env=env)
    assert coins_of(store, "bot-001") == 105
    assert count(store, "ledger") == rows + 1


# -- 10. a store the user may only read; a store of an older schema -------------------------

READS = (("hands", "list"), ("audit",), ("players", "show", "bot-001"), ("gm", "log"))
WRITE = ("players", "adjust", "bot-001", "5", "--reason", "r", "--as", OPERATOR)


# Root ignores file modes; without these capabilities it obeys them like any owner.
_DAC_CAPABILITIES = "-dac_override,-dac_read_search,-fowner"


def _runner_for_root(folder: Path) -> tuple[list[str], dict[str, str]]:
    """The console for root made to obey file modes: root without the capabilities that
    bypass them (setpriv), else as user `nobody` (the venv's script, or the same gmtool
    code and installed packages through a system Python of the same version). Fails, never
    skips, when none runs."""
    import sysconfig

    env = clean_env(HOME=str(folder), PYTHONDONTWRITEBYTECODE="1")
    tried = []
    candidates: list[tuple[list[str], dict[str, str], dict[str, str]]] = []
    setpriv = shutil.which("setpriv")
    if setpriv:
        candidates.append(
            ([setpriv, "--bounding-set", _DAC_CAPABILITIES, "--", *gmtool_command()], env, {})
        )
    nobody = {"user": "nobody", "group": "nogroup"}
    candidates.append((gmtool_command(), env, nobody))
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    system = shutil.which(version, path="/usr/local/bin:/usr/bin:/bin")
    if system:
        import gmtool  # an editable install is found through a .pth that PYTHONPATH skips

        source = str(Path(gmtool.__file__).resolve().parents[1])
        path = os.pathsep.join(
            p for p in (os.environ.get("PYTHONPATH"), source, sysconfig.get_paths()["purelib"]) if p
        )
        candidates.append(([system, "-m", "gmtool"], {**env, "PYTHONPATH": path}, nobody))
    for command, command_env, who in candidates:
        try:
            run = subprocess.run(
                [*command, "--version"],
                check=False,
                cwd=folder,
                env=command_env,
                capture_output=True,
                text=True,
                timeout=CLI_TIMEOUT_S,
                **who,
            )
        except OSError as error:
            tried.append(f"{command}: {error}")
            continue
        if run.returncode == 0 and run.stdout.startswith("gmtool "):
            return command, command_env, who
        tried.append(f"{command}: exit {run.returncode}: {run.stderr.strip()[-300:]}")
    pytest.fail(
        "cannot run gmtool as root without its file-mode bypass, nor as user "
        "nobody:\n" + "\n".join(tried)
    )


def test_read_commands_work_on_a_store_the_user_may_only_read(
    base_db: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "readonly"
    db = copy_db(base_db, folder, "ro.db")
    try:
        if os.geteuid() == 0:
            for parent in (tmp_path, tmp_path.parent):  # pytest's folders are private (0700)
                parent.chmod(0o755)
            command, env, who = _runner_for_root(folder)
        else:
            command, env, who = gmtool_command(), clean_env(), {}
        for part in folder.iterdir():
            part.chmod(0o444)
        folder.chmod(0o555)
        before = snapshot(db)
        names = sorted(p.name for p in folder.iterdir())

        def run(*args: str) -> subprocess.CompletedProcess:
            return subprocess.run(
                [*command, *args, "--db", str(db)],
                check=False,
                cwd=folder,
                env=env,
                capture_output=True,
                text=True,
                timeout=CLI_TIMEOUT_S,
                **who,
            )

        for args in READS:
            done = run(*args)
            assert "Traceback" not in done.stdout + done.stderr, done.stderr
            assert done.returncode == 0, (args, done.returncode, done.stderr)
        write = run(*WRITE)
        assert write.returncode == 2, (write.returncode, write.stdout, write.stderr)
        message = one_message(write)
        assert len(message.splitlines()) == 1 and str(db.name) in message, message
        assert snapshot(db) == before, "a reading command changed the store's files"
        assert sorted(p.name for p in folder.iterdir()) == names
    finally:
        folder.chmod(0o755)
        for part in folder.iterdir():
            part.chmod(0o644)


def test_a_read_never_migrates_an_older_schema(gm: Gmtool, store: Path) -> None:
    conn = sqlite3.connect(store)
    with conn:
        conn.execute("DELETE FROM _sqlite_migrations WHERE name = 'm002_chain_heads'")
        conn.execute("DROP TABLE chain_heads")
    conn.close()
    before = store_bytes(store)
    message = refused(gm, "hands", "list", "--db", store)
    assert "gmtool db init" in message and len(message.splitlines()) == 1, message
    assert store_bytes(store) == before
    assert not query(store, "SELECT 1 FROM sqlite_master WHERE name = 'chain_heads'")


# -- 11. damaged files ----------------------------------------------------------------------


def _half_store(base_db: Path, folder: Path) -> Path:
    db = copy_db(base_db, folder, "half.db")
    for suffix in ("-wal", "-shm"):
        db.with_name(db.name + suffix).unlink(missing_ok=True)
    with open(db, "r+b") as file:
        file.truncate(db.stat().st_size // 2)
    return db


def _random_file(base_db: Path, folder: Path) -> Path:
    import random

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "random.db"
    path.write_bytes(random.Random(8192).randbytes(8192))
    return path


@pytest.mark.parametrize("damage", [_half_store, _random_file], ids=["truncated", "random"])
def test_damaged_files_are_refused_and_left_as_they_are(
    gm: Gmtool, base_db: Path, tmp_path: Path, damage
) -> None:
    db = damage(base_db, tmp_path / "damaged")
    before = store_bytes(db)
    message = refused(
        gm, "players", "adjust", "bot-001", "5", "--reason", "r", "--as", OPERATOR, "--db", db
    )
    assert "damaged" in message and len(message.splitlines()) == 1, message
    assert store_bytes(db) == before
    message = refused(gm, "hands", "list", "--db", db)
    assert str(db) in message and len(message.splitlines()) == 1, message
    assert store_bytes(db) == before


# -- 12. what users typed never drives the terminal ----------------------------------------

NASTY = "evil\x1b[2Jname\x1b]0;pwned\x07"
MARKUP = "[bold red]x[/]"


def test_terminal_control_sequences_in_names_are_shown_escaped(gm: Gmtool, store: Path) -> None:
    grant(store, NASTY, 100)
    for args in (("players", "show", NASTY), ("players", "list")):
        out = gm(*args, "--db", store).stdout
        assert "\x1b" not in out and "\x07" not in out, repr(out)
        assert "evil\\x1b[2Jname\\x1b]0;pwned\\x07" in out, out
    shown = gm.json("players", "show", NASTY, "--db", store, "--json")
    assert shown["name"] == NASTY
    listed = gm.json("players", "list", "--db", store, "--json")
    assert NASTY in [p["name"] for p in listed["players"]]


def test_rich_markup_in_names_is_shown_literally(gm: Gmtool, store: Path) -> None:
    grant(store, MARKUP, 100)
    out = gm("players", "list", "--db", store).stdout
    assert MARKUP in out, out
    assert MARKUP in gm("players", "show", MARKUP, "--db", store).stdout


# -- 13. narrow screens ---------------------------------------------------------------------

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def on_terminal(columns: int, *args: str | Path) -> str:
    """The output of a gmtool command run on a pseudo-terminal `columns` wide."""
    import shlex

    command = shlex.join([*gmtool_command(), *map(str, args)])
    run = subprocess.run(
        ["script", "-qec", f"stty cols {columns} rows 50; {command}", "/dev/null"],
        check=False,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
        stdin=subprocess.DEVNULL,
    )
    out = ANSI.sub("", run.stdout).replace("\r", "")
    assert "Traceback" not in out and "internal error" not in out, out
    assert run.returncode == 0, (run.returncode, out, run.stderr)
    return out


@pytest.mark.parametrize("columns", [80, 100])
def test_hands_list_on_a_narrow_terminal_shows_every_hand_id_in_full(
    gm: Gmtool, host_copy: Path, columns: int
) -> None:
    hands = gm.json("hands", "list", "--limit", "5", "--db", host_copy, "--json")
    assert len(hands) == 5
    out = on_terminal(columns, "hands", "list", "--db", host_copy, "--limit", "5")
    rows = [line for line in out.splitlines() if line.startswith("│")]
    assert len(rows) >= 5, out
    for hand in hands:
        assert re.search(rf"│\s*{hand['id']}\s*│", out), (hand["id"], out)
        assert any(hand["table_id"] in line for line in rows), (hand["table_id"], out)
    first_cells = [line.split("│")[1].strip() for line in rows]
    assert all("…" not in cell for cell in first_cells), out
    assert {int(cell) for cell in first_cells if cell} == {h["id"] for h in hands}, out
    assert "outcome" in out


def test_gm_log_on_an_80_column_terminal_keeps_the_outcome_column(
    gm: Gmtool, host_copy: Path
) -> None:
    """Issue 23 (item 6) changed how: an 80-column terminal cannot hold the log's seven
    columns with its ids whole, so the log is printed as records there, every entry with
    its outcome (and its time, target and reason: tests/test_support_screens.py)."""
    log = gm.json("gm", "log", "--db", host_copy, "--json")
    assert any(r["outcome"].get("refused") for r in log), log
    out = on_terminal(80, "gm", "log", "--db", host_copy)
    shown = parse_screen(out, ["#", "at", "who", "action", "target", "reason", "outcome"])
    assert [int(entry["#"]) for entry in shown] == [row["id"] for row in log], out
    for row, entry in zip(log, shown, strict=True):
        expected = (
            "REFUSED"
            if row["outcome"].get("refused")
            else ("failed" if not row["outcome"].get("ok", True) else "ok")
        )
        assert entry["outcome"].startswith(expected), (entry, out)


# -- 14. host liveness ----------------------------------------------------------------------


def test_tables_say_whether_their_host_is_live_or_gone(
    gm: Gmtool, deployed_db: Path, virtual_host
) -> None:
    db = deployed_db
    host = virtual_host(db, tables=2, systems=["qq-showhand"], speed=1.0, seed="live")
    host.run_until(host.running_players, what="a running hand")
    listed = gm.json("tables", "list", "--db", db, "--json")
    open_tables = [t for t in listed if t["status"] == "open"]
    assert len(open_tables) == 2, listed
    for table in open_tables:
        assert table["host"] == "live", table

    conn = sqlite3.connect(db)
    with conn:  # what a crashed host leaves behind: a heartbeat that stopped long ago
        conn.execute("UPDATE tables SET updated_at = '2020-01-01T00:00:00+00:00'")
    conn.close()
    listed = gm.json("tables", "list", "--db", db, "--json")
    gone = [t for t in listed if t["status"] == "open"]
    assert gone and all(t["host"] == "gone" for t in gone), listed
    table = gone[0]["id"]
    text = gm("tables", "show", table, "--db", db).stdout
    assert "HOST GONE" in text, text
    shown = gm.json("tables", "show", table, "--db", db, "--json")
    assert "snapshot_age_s" in shown and shown["host"] == "gone", shown


# -- 15. Ctrl-C stops the host with exit 130 ----------------------------------------------


def test_house_run_exits_130_after_sigint(deployed_db: Path, start_host) -> None:
    host = start_host(deployed_db, "--tables", "2", "--speed", "50", "--seed", "sig")
    host.wait_for_line(r"hand \d+ started")
    host.proc.send_signal(signal.SIGINT)
    assert host.wait() == 130, host.output
    assert "Traceback" not in host.output and "internal error" not in host.output, host.output
    assert re.search(r"^stopped", host.output, re.MULTILINE), host.output
    assert count(deployed_db, "hands") > 0
    assert not query(deployed_db, "SELECT id FROM hands WHERE outcome = 'running'")


# -- 16. help, players list, limits ---------------------------------------------------------


@pytest.mark.parametrize("args", [("-h",), ("players", "-h"), ("--help",)])
def test_help_shows_usage(gm: Gmtool, args: tuple) -> None:
    out = gm(*args).stdout
    assert out.startswith("Usage: gmtool"), out
    if args == ("--help",):
        assert "--install-completion" in out, out


def test_players_list_shows_players_with_coins(gm: Gmtool, host_copy: Path) -> None:
    players = query(host_copy, "SELECT name, coins FROM players ORDER BY coins DESC, name")
    listed = gm.json("players", "list", "--limit", "0", "--db", host_copy, "--json")
    assert set(listed) == {"players", "total"}, listed
    assert listed["total"] == len(players) > 0
    assert [(p["name"], p["coins"]) for p in listed["players"]] == [
        (r["name"], r["coins"]) for r in players
    ]
    text = gm("players", "list", "--db", host_copy).stdout
    richest = players[0]
    assert re.search(rf"{re.escape(richest['name'])}\s.*\s{richest['coins']:,}\s", text), text


def test_hands_list_limit_0_is_all_and_a_limit_says_how_many_of_how_many(
    gm: Gmtool, host_copy: Path
) -> None:
    total = count(host_copy, "hands")
    assert total > 50
    every = gm.json("hands", "list", "--limit", "0", "--db", host_copy, "--json")
    assert len(every) == total
    assert sorted(h["id"] for h in every) == [
        r[0] for r in query(host_copy, "SELECT id FROM hands ORDER BY id")
    ]
    text = gm("hands", "list", "--limit", "3", "--db", host_copy).stdout
    assert f"showing the newest 3 of {total}" in text, text


# -- 17. deploy: a plan first, versions bumped, nothing twice, rollback by file ------------


def _junior_doubled(tmp_path: Path, version: int | None, name: str) -> Path:
    """qq-showhand with the junior room's caps doubled consistently (ante, bet unit,
    street caps, hand cap, min holding) and, if given, another profile.version."""
    text = QQ.read_text(encoding="utf-8")
    start, end = text.index('id = "junior"'), text.index('id = "middle"')
    block = text[start:end]
    for old, new in (
        ("ante = 100 ", "ante = 200 "),
        ("bet_unit = 100 ", "bet_unit = 200 "),
        ("street_caps = [200, 500, 1000, 1000]", "street_caps = [400, 1000, 2000, 2000]"),
        ("hand_cap = 1000 ", "hand_cap = 2000 "),
        ("min_holding = 1000 ", "min_holding = 2000 "),
    ):
        assert old in block, old
        block = block.replace(old, new)
    text = text[:start] + block + text[end:]
    if version is not None:
        text = text.replace("version = 1\n", f"version = {version}\n", 1)
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("order", ["flag-first", "profile-first"])
def test_deploy_dry_run_writes_nothing_and_says_what_changes_for_players(
    gm: Gmtool, store: Path, tmp_path: Path, order: str
) -> None:
    profile = _junior_doubled(tmp_path, 2, "qq-v2.toml")
    report = gm.json("rules", "validate", profile, "--format", "json")
    assert not report["errors"] and not report["warnings"], report
    args = ("--dry-run", profile) if order == "flag-first" else (profile, "--dry-run")
    deployments, logged = count(store, "deployments"), count(store, "gm_actions")
    before = store_bytes(store)
    run = gm("deploy", *args, "--db", store, "--as", OPERATOR)
    out = run.stdout + run.stderr
    assert "would change" in out, out
    junior = [line for line in out.splitlines() if "junior" in line]
    assert any("hand cap 1,000 -> 2,000" in line for line in junior), out
    assert (count(store, "deployments"), count(store, "gm_actions")) == (deployments, logged)
    assert store_bytes(store) == before


def test_deploying_changed_content_under_the_same_version_is_refused(
    gm: Gmtool, store: Path, tmp_path: Path
) -> None:
    profile = _junior_doubled(tmp_path, None, "qq-same-version.toml")
    deployments = count(store, "deployments")
    message = refused(gm, "deploy", profile, "--db", store, "--as", OPERATOR, code=1)
    assert "bump" in message, message
    assert count(store, "deployments") == deployments


def test_redeploying_identical_content_deploys_nothing(gm: Gmtool, store: Path) -> None:
    deployments = count(store, "deployments")
    out = gm("deploy", QQ, "--db", store, "--as", OPERATOR).stdout
    assert "nothing deployed" in out, out
    assert count(store, "deployments") == deployments


def _history(db: Path) -> list[tuple]:
    return [
        (r["profile_id"], r["config_id"], r["rooms"], r["active"], r["note"])
        for r in query(db, "SELECT * FROM deployments ORDER BY id")
    ]


def test_rollback_by_profile_file_works_like_rollback_by_profile_id(
    gm: Gmtool, base_db: Path, tmp_path: Path
) -> None:
    profile = _junior_doubled(tmp_path, 2, "qq-v2.toml")
    results = []
    for target in (profile, "qq-showhand"):
        db = copy_db(base_db, tmp_path / f"by-{Path(str(target)).stem}", "store.db")
        gm("deploy", profile, "--db", db, "--as", OPERATOR)
        out = gm("deploy", "rollback", target, "--db", db, "--as", OPERATOR).stdout
        assert "rolled back" in out, out
        live = gm.json("deploy", "history", "--profile", "qq-showhand", "--db", db, "--json")
        results.append((_history(db), sorted((r["config_id"], r["in_effect"]) for r in live)))
    assert results[0] == results[1]
    in_effect = [config for config, effect in results[0][1] if effect]
    original = query(base_db, "SELECT config_id FROM deployments WHERE profile_id = 'qq-showhand'")[
        0
    ][0]
    assert in_effect == [original], results[0]


def test_deploy_prints_the_warnings_of_a_profile(gm: Gmtool, store: Path, tmp_path: Path) -> None:
    profile = _qq_with(
        tmp_path,
        "warned.toml",
        "street_caps = [200, 500, 1000, 1000]",
        "street_caps = [300, 500, 1000, 1000]",
        'id = "junior"',
    )
    profile.write_text(
        profile.read_text(encoding="utf-8").replace("version = 1\n", "version = 2\n", 1),
        encoding="utf-8",
    )
    deployments = count(store, "deployments")
    run = gm("deploy", profile, "--db", store, "--as", OPERATOR)
    assert "[seed-ratio]" in run.stderr and "warning" in run.stderr, run.stderr
    assert "deployed qq-showhand v2" in run.stdout, run.stdout
    assert count(store, "deployments") == deployments + 1
