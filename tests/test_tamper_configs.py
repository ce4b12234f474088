"""Edits an outside store-edit check found audit did not report (issue 14): a stored
config's compiled rules or its shown columns edited in place (the log records a config by
its id, which is the hash of the compiled rules), broken JSON in a config (which stopped
audit with an internal error), and the GM log's recorded head deleted or renamed."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from backends import Audited, audited_fixture, pg_server_fixture  # noqa: F401


def _drop_triggers(conn: sqlite3.Connection) -> None:
    for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
        conn.execute(f"DROP TRIGGER {name}")


def _config(conn: sqlite3.Connection) -> tuple[str, str]:
    return conn.execute(
        "SELECT config_id, compiled FROM configs WHERE game = 'stud5' ORDER BY rowid LIMIT 1"
    ).fetchone()


def compiled_not_json(conn: sqlite3.Connection) -> str:
    config_id, compiled = _config(conn)
    conn.execute(
        "UPDATE configs SET compiled = ? WHERE config_id = ?",
        (compiled[:-40] + "x" + compiled[-39:], config_id),
    )
    return "config"


def compiled_rules_changed(conn: sqlite3.Connection) -> str:
    config_id, compiled = _config(conn)
    rules = json.loads(compiled)
    rules["tiers"][0]["enabled"] = not rules["tiers"][0]["enabled"]  # a room opened or closed
    conn.execute(
        "UPDATE configs SET compiled = ? WHERE config_id = ?",
        (json.dumps(rules, separators=(",", ":"), sort_keys=True), config_id),
    )
    return "config"


def shown_version_changed(conn: sqlite3.Connection) -> str:
    config_id, _ = _config(conn)
    conn.execute("UPDATE configs SET version = version + 1 WHERE config_id = ?", (config_id,))
    return "config"


def gm_log_head_deleted(conn: sqlite3.Connection) -> str:
    conn.execute("DELETE FROM chain_heads WHERE name = 'gm_actions'")
    return "gm_log_head"


def gm_log_head_renamed(conn: sqlite3.Connection) -> str:
    conn.execute("UPDATE chain_heads SET name = 'gm_actionz' WHERE name = 'gm_actions'")
    return "gm_log_head"


EDITS: dict[str, Callable[[sqlite3.Connection], str]] = {
    f.__name__: f
    for f in (
        compiled_not_json,
        compiled_rules_changed,
        shown_version_changed,
        gm_log_head_deleted,
        gm_log_head_renamed,
    )
}


@pytest.mark.parametrize("name", list(EDITS))
def test_audit_reports_the_edit_and_goes_on(
    host_copy: Path, gm, name: str, audited: Audited
) -> None:
    """On both backends (the PostgreSQL store: a copy of the edited rows)."""
    conn = sqlite3.connect(host_copy)
    try:
        with conn:
            _drop_triggers(conn)
            kind = EDITS[name](conn)
    finally:
        conn.close()
    where = audited.args(host_copy)
    assert where is not None
    run = gm("audit", *where, "--json", expect=1)
    report = json.loads(run.stdout)
    assert kind in {p["kind"] for p in report["problems"]}, report["problems"]
    assert report["hands_checked"] > 0  # the audit went on past it
