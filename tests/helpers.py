"""Helpers shared by the tests that run the console script or read a store directly."""

from __future__ import annotations

import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path


def gmtool_command() -> list[str]:
    """The installed console script next to this Python, else `python -m gmtool`."""
    script = Path(sys.executable).with_name("gmtool")
    return [str(script)] if script.exists() else [sys.executable, "-m", "gmtool"]


# Throwaway GM keys for the test run: one folder, a key for every GM name the tests use
# (the console finds them through GMTOOL_KEYS, as a GM's own config folder).
KEYS = Path(tempfile.mkdtemp(prefix="gmtool-test-keys-"))
GM_NAMES = (
    "boss",
    "sue",
    "deployer",
    "alice",
    "bob",
    "carl",
    "dora",
    "mallory",
    "anyone",
    "eve",
    "op",
    "ops",
    "support",
    "demo",
    "tester",
    "stranger",
)


def gm_identity(name: str):
    """GM `name` with their throwaway key (made on first use), for in-process calls."""
    from gmtool.evidence.gm_keys import load_key, new_key
    from gmtool.evidence.request import Gm

    return Gm(name, load_key(name, KEYS) or new_key(name, KEYS)[0])


for _name in GM_NAMES:
    gm_identity(_name)


def clean_env(**extra: str) -> dict[str, str]:
    """The environment without gmtool settings but with the test GM keys, plus `extra`
    (e.g. GMTOOL_USER)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("GMTOOL_DB", "GMTOOL_DEBUG", "GMTOOL_HOME", "GMTOOL_USER", "GMTOOL_WITNESS")
    }
    env["GMTOOL_KEYS"] = str(KEYS)
    env.update(extra)
    return env


def public_key(name: str) -> str:
    """GM `name`'s verifier key, as `gmtool gm keys new` prints it."""
    return gm_identity(name).signer.verifier.text()


def query(db: Path, sql: str, params: tuple = ()) -> list[sqlite3.Row]:
    """Rows of one query on a store, through a connection of its own."""
    conn = sqlite3.connect(db, timeout=10)
    conn.row_factory = sqlite3.Row
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def rewrite_log(db: Path, change) -> None:
    """Tamper as a careful attacker does: the append-only triggers dropped, `change(conn)`
    made (evidence rows, log records), the whole log's hashes recomputed after it (leaves,
    nodes, the tree's state) and the triggers put back as they were. Without a checkpoint
    kept elsewhere nothing in the file contradicts it."""
    from gmtool.evidence.merkle import Frontier, leaf_hash

    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    with conn:
        triggers = conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'trigger'"
        ).fetchall()
        for trigger in triggers:
            conn.execute(f"DROP TRIGGER {trigger['name']}")
        change(conn)
        frontier = Frontier()
        conn.execute("DELETE FROM log_nodes")
        for row in conn.execute("SELECT idx, body FROM log ORDER BY idx").fetchall():
            leaf = leaf_hash(row["body"].encode())
            conn.execute("UPDATE log SET leaf = ? WHERE idx = ?", (leaf, row["idx"]))
            for level, index, digest in frontier.append(leaf):
                conn.execute(
                    "INSERT INTO log_nodes (level, idx, hash) VALUES (?, ?, ?)",
                    (level, index, digest),
                )
        conn.execute(
            "UPDATE log_state SET size = ?, nodes = ?", (frontier.size, b"".join(frontier.nodes))
        )
        for trigger in triggers:  # and the guards put back, as they were
            conn.execute(trigger["sql"])
    conn.close()


def until(predicate, what: str, within: float = 120.0):
    """`predicate()`'s first truthy value, re-checked every 20 ms as another process
    changes the store (an event awaited, not a time: `within` is only how long a busy
    machine may take before the test says what it never saw)."""
    deadline = time.monotonic() + within
    while not (value := predicate()):
        assert time.monotonic() < deadline, f"never saw {what}"
        time.sleep(0.02)
    return value


def recorded_witness(db: Path) -> Path:
    """The witness folder the store records, where it is beside the SQLite file."""
    conn = sqlite3.connect(db)
    try:
        (location,) = conn.execute(
            "SELECT location FROM witnesses WHERE type = 'folder' ORDER BY id DESC LIMIT 1"
        ).fetchone()
    finally:
        conn.close()
    return (db.resolve().parent / location).resolve()
