"""Issue 23, item 8: one coin format in all text output, plain integers in JSON.

Text output writes coins with thousands separators (`holds 248,000`,
`+1,000,000,000,000`), wherever they appear: adjustments and their refusals, player
views, the GM log, hand timelines and reports, live tables, profiles, audit findings.
JSON keeps plain integers. Real console subprocesses on real stores.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest
from conftest import OPERATOR, RULES, Gmtool, copy_db
from helpers import query

from gmtool.store import ledger
from gmtool.store.db import connect

TRILLION = 1_000_000_000_000
BARE = re.compile(r"(?<![\d,.:\-+#])[+-]?\d{4,}(?![\d,])")  # 4+ digits with no separator


@pytest.fixture(scope="module")
def rich(tmp_path_factory, gm: Gmtool) -> Path:
    """A store whose bot-001 held 248,000 and was given a trillion coins by an operator."""
    db = tmp_path_factory.mktemp("coins") / "rich.db"
    gm.deploy_all(db)
    gm.add_roles(db)
    with connect(db) as store:
        ledger.grant(store, "bot-001", 248_000, "opening_balance")
    return db


@pytest.fixture
def store(rich: Path, tmp_path: Path) -> Path:
    return copy_db(rich, tmp_path)


def test_an_adjustment_and_its_refusal_write_coins_one_way(gm: Gmtool, store: Path) -> None:
    run = gm(
        "players",
        "adjust",
        "bot-001",
        str(TRILLION),
        "--reason",
        "jackpot",
        "--db",
        store,
        "--as",
        OPERATOR,
    )
    assert run.stdout == (
        "bot-001: 248,000 -> 1,000,000,248,000 coins (+1,000,000,000,000, jackpot)\n"
    )
    refused = gm(
        "players",
        "adjust",
        "bot-002",
        "5",
        "--reason",
        "r",
        "--db",
        store,
        "--as",
        OPERATOR,
        expect=2,
    )
    assert "bot-002" in refused.stderr
    with connect(store) as db:
        ledger.grant(db, "bot-002", 248_000, "opening_balance")
    refused = gm(
        "players",
        "adjust",
        "bot-002",
        "-300000",
        "--reason",
        "r",
        "--db",
        store,
        "--as",
        OPERATOR,
        expect=1,
    )
    assert "bot-002 holds 248,000; an adjustment of -300,000 would make it negative" in (
        refused.stderr
    ), refused.stderr


def test_player_views_and_the_gm_log_write_coins_one_way_and_json_keeps_integers(
    gm: Gmtool, store: Path
) -> None:
    gm(
        "players",
        "adjust",
        "bot-001",
        str(TRILLION),
        "--reason",
        "jackpot",
        "--db",
        store,
        "--as",
        OPERATOR,
    )
    shown = gm("players", "show", "bot-001", "--db", store).stdout
    assert "bot-001 (human): 1,000,000,248,000 coins" in shown, shown
    assert "+1,000,000,000,000" in shown and "+248,000" in shown, shown
    listed = gm("players", "list", "--db", store).stdout
    assert "1,000,000,248,000" in listed, listed
    log = gm("gm", "log", "--db", store).stdout
    assert "ok: 248,000 -> 1,000,000,248,000 coins (+1,000,000,000,000)" in log, log
    for text in (shown, listed, log):
        assert not BARE.findall(_without_ids_and_times(text)), text

    player = gm.json("players", "show", "bot-001", "--db", store, "--json")
    assert player["coins"] == 1_000_000_248_000 and isinstance(player["coins"], int)
    assert [r["delta"] for r in player["ledger"]] == [TRILLION, 248_000]
    entry = gm.json("gm", "log", "--db", store, "--json")[-1]
    assert (entry["outcome"]["coins_before"], entry["outcome"]["coins"]) == (
        248_000,
        1_000_000_248_000,
    )


def _without_ids_and_times(text: str) -> str:
    """Text output less what is not coins: dates and times, keys, config ids and hashes."""
    text = re.sub(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d+)?(\+00:00)?", "", text)
    text = re.sub(r"\b[0-9a-f]{12,}\b", "", text)
    return re.sub(r"[A-Za-z0-9+/]{20,}", "", text)


def test_hand_timelines_and_reports_write_coins_one_way(gm: Gmtool, host_db: Path) -> None:
    """Hands of every ending with pots of thousands: no amount of four digits or more
    without its separators, after the header (ids, hashes and times) of `hands show` and
    in the report's settlement and timeline."""
    big = [
        row[0]
        for row in query(
            host_db,
            "SELECT DISTINCT e.hand_id FROM events e JOIN events s ON s.hand_id = e.hand_id "
            "AND s.type IN ('settlement', 'hand_voided') WHERE e.type = 'street_end' AND "
            "json_extract(e.payload, '$.pot') >= 1000 GROUP BY "
            "json_extract(s.payload, '$.reason')",
        )
    ]
    assert len(big) >= 3
    for hand in big:
        out = gm("hands", "show", hand, "--db", host_db).stdout
        body = out.split("\n\n", 1)[1]
        assert not BARE.findall(body), (hand, BARE.findall(body), out)
    report = gm("hands", "export", big[0], "--format", "md", "--db", host_db).stdout
    body = report.split("## Outcome", 1)[1]
    assert not BARE.findall(body.replace(report.split("config `")[-1][:12], "")), report
    assert re.search(r"pot \d{1,3}(,\d{3})+", report), report


def test_live_tables_write_coins_one_way(gm: Gmtool, deployed_db: Path, virtual_host) -> None:
    db = deployed_db
    host = virtual_host(db, tables=2, systems=["qq-showhand"], speed=1.0, seed="coins")
    table, _ = host.run_until(
        lambda: host.running_players(coins_only=True), what="a running coin hand"
    )[0]
    listed = gm("tables", "list", "--db", db).stdout
    shown = gm("tables", "show", table, "--db", db).stdout
    for text in (listed, shown):
        assert not BARE.findall(_without_ids_and_times(text)), text
    assert re.search(r"coins +\d{1,3}(,\d{3})+ ", shown), shown
    summary = gm.json("tables", "show", table, "--db", db, "--json")
    assert all(isinstance(p["coins"], int) for p in summary["players"]), summary


def test_profiles_write_coins_one_way(gm: Gmtool) -> None:
    out = gm("rules", "show", RULES / "qq-showhand.toml").stdout
    assert "50,000" in out and "10,000" in out, out
    assert not BARE.findall(out.replace("4f7163c59916", "")), out
    compiled = gm.json("rules", "compile", RULES / "qq-showhand.toml")
    expert = next(t for t in compiled["tiers"] if t["id"] == "expert")
    assert expert["hand_cap"] == 50_000


def test_audit_findings_write_coins_one_way(gm: Gmtool, store: Path) -> None:
    conn = sqlite3.connect(store)
    with conn:  # a balance edited behind the ledger's back
        conn.execute("UPDATE players SET coins = 1248000 WHERE name = 'bot-001'")
    conn.close()
    out = gm("audit", "--db", store, expect=1).stdout
    assert "bot-001 holds 1,248,000 coins but the ledger sums to 248,000" in out, out
