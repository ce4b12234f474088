"""The evidence record format is frozen: the exact bytes of every kind of record, pinned.

Stores already hold records in this format and their audits rebuild each from its row,
so a change in what a `*_body` function returns for an existing row makes every such
store fail its audit. `tests/data/records/` holds, per case, the row (or arguments), the
exact record bytes and their leaf hash, made once from the format as it was (its
README says how); and the SHA-256 of the source text of every function of the format,
so that any edit of one, even of a character that changes no output today, fails here
until it is reviewed (and, if it changes bytes, given a new format version).
"""

from __future__ import annotations

import hashlib
import inspect
import json
from pathlib import Path

import pytest

from gmtool import canonical
from gmtool.evidence import records
from gmtool.evidence.merkle import leaf_hash
from gmtool.store import migration_records

GOLDEN = Path(__file__).parent / "data" / "records"
CASES = sorted(path.name.removesuffix(".input.json") for path in GOLDEN.glob("*.input.json"))
PINNED_MODULES = (records, migration_records)


def _given(case: str) -> dict:
    return json.loads((GOLDEN / f"{case}.input.json").read_text(encoding="utf-8"))


def _body(given: dict) -> dict:
    function = getattr(records, given["function"])
    return function(*given["args"]) if "args" in given else function(given["row"])


def test_every_kind_of_record_has_a_golden_case() -> None:
    covered = {_body(_given(case))["kind"] for case in CASES}
    assert covered == set(records.KINDS), set(records.KINDS) - covered


@pytest.mark.parametrize("case", CASES)
def test_a_record_is_exactly_its_golden_bytes(case: str) -> None:
    given = _given(case)
    body = _body(given)
    text = records.record_text(body).encode("utf-8")
    assert text == (GOLDEN / f"{case}.record").read_bytes()
    assert leaf_hash(text).hex() == (GOLDEN / f"{case}.leaf").read_text().strip()
    assert list(records.index_key(body)) == given["index"]


def _pinned() -> dict[str, str]:
    found = {}
    for module in PINNED_MODULES:
        for name, function in vars(module).items():
            if inspect.isfunction(function) and function.__module__ == module.__name__:
                found[f"{module.__name__}.{name}"] = inspect.getsource(function)
    found["gmtool.canonical.canonical_json"] = inspect.getsource(canonical.canonical_json)
    return found


def test_the_source_of_every_format_function_is_pinned() -> None:
    """Changing one character of a record-format function fails here: review the change,
    and if it changes what any existing row's record holds, do not make it (add a kind or
    a key for rows that did not exist, and a new FORMAT)."""
    pinned = {}
    for line in (GOLDEN / "functions.sha256").read_text().splitlines():
        digest, name = line.split()
        pinned[name] = digest
    now = {name: hashlib.sha256(text.encode()).hexdigest() for name, text in _pinned().items()}
    changed = sorted(name for name in now.keys() & pinned.keys() if now[name] != pinned[name])
    assert not changed, f"record-format functions changed: {changed}"
    assert now.keys() == pinned.keys(), sorted(now.keys() ^ pinned.keys())
    assert records.FORMAT == 1


@pytest.mark.parametrize(
    "live, frozen, case",
    [
        ("events_body", "events_v1", "events"),
        ("hand_body", "hand_v1", "hand"),
        ("hand_end_body", "hand_end_v1", "hand_end"),
        ("ledger_body", "ledger_v1", "ledger"),
        ("gm_action_body", "gm_action_v1", "gm_action"),
        ("config_body", "config_v1", "config-id-only"),
        ("deployment_body", "deployment_v1", "deployment"),
        ("gm_user_body", "gm_user_v1", "gm_user-before-keys"),
        ("gm_request_body", "gm_request_v1", "gm_request-before-keys"),
        ("player_body", "player_v1", "player"),
    ],
)
def test_the_migrations_frozen_records_are_the_format_of_their_time(
    live: str, frozen: str, case: str
) -> None:
    """m003 and m004 log the rows of their time with frozen copies: on such rows they
    must give the live format's bytes, or a migrated store would fail its audit."""
    given = _given(case)
    assert given["function"] == live
    function = getattr(migration_records, frozen)
    body = function(*given["args"]) if "args" in given else function(given["row"])
    assert records.record_text(body).encode() == (GOLDEN / f"{case}.record").read_bytes()


STREAMED_CASES = [
    "hand",
    "hand-host",
    "hand_end",
    "hand_end-voided",
    "ledger",
    "ledger-gm",
    "gm_action",
    "gm_request",
    "gm_request-before-keys",
    "player",
]


@pytest.mark.parametrize("case", STREAMED_CASES)
def test_sqlite_rebuilds_the_golden_bytes_of_the_kinds_it_compares(case: str) -> None:
    """A full audit compares the rows that grow with play with their records inside
    SQLite (store/log_reads.STREAMED): SQLite's rebuilt record must be the format's bytes,
    or every honest row would be read back and compared again (correct, but slow)."""
    import sqlite3

    from gmtool.store.log_reads import STREAMED

    given = _given(case)
    kind = _body(given)["kind"]
    _, _, rebuilt = STREAMED[kind]
    row = given["row"]
    if kind == "hand":  # a hand's row has its `host` column (NULL but on a shared store)
        row = {"host": None, **row}
    conn = sqlite3.connect(":memory:")
    conn.execute(f"CREATE TABLE t ({', '.join(row)})")
    conn.execute(f"INSERT INTO t VALUES ({', '.join('?' * len(row))})", list(row.values()))
    (text,) = conn.execute(f"SELECT {rebuilt} FROM t r").fetchone()
    assert text.encode() == (GOLDEN / f"{case}.record").read_bytes()
