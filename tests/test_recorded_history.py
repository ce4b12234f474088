"""History is never rewritten: stores recorded by earlier engines audit clean (G4).

`tests/data/stores/engine-2.sqlite` was recorded by engine version 2, before the rule
fixes of version 3 (RULES S6, S18, S19 D-10, H5, L10, corrected 2026-12-01); the script
beside it says how. Its hands replay under the rules they were played by: the config
they recorded (compiled schema 1, where `ranks_then_suit` compared every kicker) and the
engine version in their `hand_started` event.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from gmtool.audit.replay import ReplaySetup, replay_loaded, stored_events
from gmtool.audit.run import run_audit
from gmtool.engine.events import ENGINE_VERSION
from gmtool.store.configs import load_config
from gmtool.store.db import connect

ENGINE_2_STORE = Path(__file__).parent / "data" / "stores" / "engine-2.sqlite"


@pytest.fixture(scope="module")
def engine_2_store(tmp_path_factory):
    """A copy of the recorded store (opening a store may migrate it; the data file stays)."""
    path = tmp_path_factory.mktemp("history") / "engine-2.sqlite"
    shutil.copyfile(ENGINE_2_STORE, path)
    with connect(path) as store:
        yield store


def test_g4_a_store_recorded_by_engine_2_audits_with_no_finding(engine_2_store) -> None:
    result = run_audit(engine_2_store)
    assert result.hands_checked == 311
    assert result.problems == []


def _hand_ids(store, where: str) -> list[int]:
    return [
        row[0]
        for row in store.all(
            f"SELECT DISTINCT hand_id FROM events WHERE hand_id IS NOT NULL AND {where}"
        )
    ]


@pytest.mark.parametrize(
    "kind, where",
    [
        ("S18: a window closed at exactly n minutes", "type = 'window_expired'"),
        ("S19 D-10: a folded banker won an escape", "table_id LIKE '%-escape'"),
        (
            "S6: a lequ showdown won by a kicker",
            "table_id LIKE 'lequ-showhand-kicker-%' AND type = 'showdown'",
        ),
    ],
)
def test_the_recorded_hands_differ_under_todays_rules(engine_2_store, kind, where) -> None:
    """The store holds hands the version 3 rules decide otherwise, so the clean audit above
    proves the old rules are kept for them: replayed as if recorded today (engine version
    3, and for the kicker hand the config recompiled today), they no longer match."""
    store = engine_2_store
    hand_ids = _hand_ids(store, where)
    assert hand_ids, kind
    mismatches = 0
    for hand_id in hand_ids:
        row = dict(store.one("SELECT * FROM hands WHERE id = ?", (hand_id,)))
        events = stored_events(store, hand_id)
        started = json.loads(events[0].payload)
        assert started["engine"] == "2"
        started["engine"] = ENGINE_VERSION
        events[0] = events[0]._replace(payload=json.dumps(started))
        config = dict(load_config(store, row["config_id"]))
        config["schema_version"] = 2  # what the same profile compiles to today
        result = replay_loaded(row, events, lambda _id, config=config: ReplaySetup.of(config))
        mismatches += not result.ok
    assert mismatches, f"{kind}: every hand replays alike under today's rules"


def test_the_recorded_store_file_is_untouched_by_the_tests() -> None:
    """The test data itself is never written (every test works on a copy)."""
    with sqlite3.connect(f"file:{ENGINE_2_STORE}?mode=ro", uri=True) as conn:
        assert conn.execute("SELECT COUNT(*) FROM hands").fetchone()[0] == 311


# ---- engine 3: recorded before the corrections of 2026-12-02 (engine version 4) --------------

ENGINE_3 = Path(__file__).parent / "data" / "stores" / "engine-3.sqlite"
ENGINE_3_COMPANIONS = (".key", ".checkpoint.pub", ".witness")  # what its audit reads


@pytest.fixture(scope="module")
def engine_3_store(tmp_path_factory):
    """A copy of the engine-3 store with its host key, checkpoint key and witness folder."""
    folder = tmp_path_factory.mktemp("history3")
    path = folder / ENGINE_3.name
    shutil.copyfile(ENGINE_3, path)
    for suffix in ENGINE_3_COMPANIONS:
        source = ENGINE_3.with_name(ENGINE_3.name + suffix)
        target = path.with_name(path.name + suffix)
        (shutil.copytree if source.is_dir() else shutil.copyfile)(source, target)
    with connect(path) as store:
        yield store


def test_g4_a_store_recorded_by_engine_3_audits_with_no_finding(engine_3_store) -> None:
    result = run_audit(engine_3_store)
    assert result.hands_checked == 162
    assert result.problems == []


def _raise_chips_in_antes(config: dict) -> None:
    config["betting"]["raise_chip_unit"] = "ante"  # what the lequ profile compiles to today


@pytest.mark.parametrize(
    "kind, table, today",
    [
        ("S7: seed 000's showing high cards tied on the top card", "lequ-showhand-showing-%", None),
        ("S18: a window counted from the turn", "qq-showhand-junior-window", None),
        ("S14: a street at the hand cap skipped", "qq-showhand-junior-cap", None),
        (
            "L10: a raise of one coin at an ante of 10, the opener raising again",
            "lequ-showhand-chips",
            _raise_chips_in_antes,
        ),
        ("H12: a player seated with 12 coins", "suihua-three-card-chips-5-poor", None),
        ("H5: the first speaker following the ante", "suihua-three-card-chips-10-first", None),
    ],
)
def test_engine_3_hands_differ_under_todays_rules(engine_3_store, kind, table, today) -> None:
    """The clean audit above proves each of these hands is held to the rules it was played
    by: replayed as if recorded today (engine version 4, and the config as compiled today
    where that differs), every one of them plays out otherwise."""
    store = engine_3_store
    hand_ids = _hand_ids(store, f"table_id LIKE '{table}'")
    assert hand_ids, kind
    for hand_id in hand_ids:
        row = dict(store.one("SELECT * FROM hands WHERE id = ?", (hand_id,)))
        events = stored_events(store, hand_id)
        started = json.loads(events[0].payload)
        assert started["engine"] == "3"
        started["engine"] = ENGINE_VERSION
        events[0] = events[0]._replace(payload=json.dumps(started))
        config = json.loads(json.dumps(load_config(store, row["config_id"])))
        if today is not None:
            today(config)
        result = replay_loaded(row, events, lambda _id, config=config: ReplaySetup.of(config))
        assert not result.ok, f"{kind}: hand {hand_id} replays alike under today's rules"


def test_the_engine_3_store_file_is_untouched_by_the_tests() -> None:
    with sqlite3.connect(f"file:{ENGINE_3}?mode=ro", uri=True) as conn:
        assert conn.execute("SELECT COUNT(*) FROM hands").fetchone()[0] == 162
