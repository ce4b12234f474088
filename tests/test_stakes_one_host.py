"""Coins at stake in a running hand cannot be brought to another table of the same SQLite
host (an outside probe of 2026-12-05): a person at the gateway who stood up mid-hand (the
hand plays on, their stake in it) sat at a second table with the same coins, both hands
settled against them and their balance ended at -15. The host trusted its bot pool to
know where everyone sat; a person is not in that pool. As on PostgreSQL, a table now
seats a player with what is not at stake elsewhere, and a hand whose players' coins are
does not start."""

from __future__ import annotations

from pathlib import Path

import pytest
from backends import StepClock

from gmtool.store import ledger
from gmtool.store import tables as table_store
from gmtool.store.db import connect
from gmtool.store.hands import TableLog, begin_hand, void_hand
from gmtool.store.stakes import NotCovered, free_coins


def _begin(store, table: str, seats: list[dict]) -> int:
    table_store.open_table(store, table, "lequ-showhand", "table", "stud5", 1)
    config = store.one("SELECT config_id FROM configs ORDER BY config_id LIMIT 1")[0]
    return begin_hand(
        store, TableLog(store, table), 1, config, "table", None, None, seats, "0" * 64, "a", []
    )


def test_coins_at_stake_at_one_table_cannot_be_brought_to_another(deployed_db: Path) -> None:
    with connect(deployed_db, clock=StepClock()) as store:
        ledger.open_account(store, "pat", 100, "human", lambda *_: "unsigned")
        first = _begin(store, "t-1", [{"player": "pat", "coins": 70}])
        assert free_coins(store, {"pat": 100}) == {"pat": 30}
        with pytest.raises(NotCovered, match="pat"):
            _begin(store, "t-2", [{"player": "pat", "coins": 31}])
        assert store.one("SELECT COUNT(*) FROM hands WHERE table_id = 't-2'")[0] == 0
        _begin(store, "t-3", [{"player": "pat", "coins": 30}])
        assert free_coins(store, {"pat": 100}) == {"pat": 0}
        assert free_coins(store, {"pat": 100}, "t-1") == {"pat": 70}  # t-1's own stake
        void_hand(store, TableLog(store, "t-1"), first, "test", None)
        assert free_coins(store, {"pat": 100}) == {"pat": 70}
