"""Bots as network clients (issue 25 item 6): `NetworkBot`s speak the public protocol over
real loopback sockets to a real host (in this process, on virtual time, tests/hosting.py),
play full hands of every game system the gateway seats people at, and the store's audit is
clean with every coin accounted for. The command itself runs as a real subprocess. The
tests that play run on both store backends (`deployed_store`, tests/backends.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from backends import (  # noqa: F401
    Located,
    audit_clean,
    deployed_store_fixture,
    pg_server_fixture,
)
from helpers import clean_env, gm_identity, gmtool_command

from gmtool.gateway.client import NetworkBot, Told, legal_of
from gmtool.ops import netbots
from gmtool.store import ledger

GRANT = 2_000_000
PLANS = [
    ("qq-showhand", "junior", "stud5"),
    ("video-showhand", "junior", "stud5"),
    ("straight-flush", "normal", "stud5"),
    ("suihua-three-card", "chips-10", "three-card"),
    ("lequ-showhand", "table", "stud5"),
]


def start(virtual_host, located: Located, plan, tables: int = 1, **options):
    host = virtual_host(
        located,
        plan=[plan],
        tables=tables,
        seed="nb",
        listen="127.0.0.1:0",
        grace=600.0,
        **options,
    )
    host.run_until(lambda: host.host.gateway.url, what="the gateway listening")
    return host


def network_bots(host, count: int, hands: int = 0, prefix: str = "netbot") -> list[NetworkBot]:
    """`count` bots with tokens and coins from the store (as `bots --connect --db` makes
    them), playing the room's table through the gateway."""
    names = netbots.bot_names(prefix, count)
    made = netbots.prepare(host.store, gm_identity("boss"), names, GRANT, 3600)
    return netbots.make_bots(
        host.host.gateway.url,
        made["tokens"],
        made["rules"],
        netbots.policies([]),
        None,
        hands,
        seed="nb",
    )


def total_coins(store) -> int:
    return store.one("SELECT SUM(coins) AS total FROM players")["total"]


@pytest.mark.parametrize("plan", PLANS, ids=[plan[0] for plan in PLANS])
def test_network_bots_play_full_hands_of_every_system_and_the_audit_is_clean(
    gm, virtual_host, deployed_store: Located, plan
) -> None:
    owner_ante = plan[0] == "lequ-showhand"  # four seats: three bots and one of the host's
    host = start(virtual_host, deployed_store, plan, **({"bots": 1} if owner_ante else {}))
    bots = network_bots(host, 3, hands=3)
    before = total_coins(host.store)  # (after the grants: the bots' coins are in it)
    played = host.stepper.start(netbots.play(bots))
    host.run_until(played.done, what="three hands for each bot", within=50_000)
    report = played.result()
    assert report.refused == [] and not report.interrupted
    assert all(bot.stats.hands >= 3 for bot in bots)
    assert all(bot.stats.round_trips for bot in bots), "every bot acted"
    assert all(bot.stats.errors == [] for bot in bots), [bot.stats.errors for bot in bots]
    host.stop()
    assert total_coins(host.store) == before, "coins only change hands"
    granted = [ledger.coins_or_none(host.store, bot.name) for bot in bots]
    assert all(coins is not None for coins in granted)
    host.close()
    audit_clean(gm, deployed_store)


def test_a_bot_whose_socket_drops_resumes_its_table_and_misses_no_event(
    gm, virtual_host, deployed_store: Located
) -> None:
    host = start(virtual_host, deployed_store, PLANS[0])
    table = next(iter(host.host.tables.values()))
    bots = network_bots(host, 2, hands=4)
    ann = bots[0]
    seen: list[int] = []
    receive = ann.receive

    def receive_and_note(frame: dict) -> list[dict]:
        if frame.get("type") == "event":
            seen.append(frame["seq"])
        return receive(frame)

    ann.receive = receive_and_note  # type: ignore[method-assign]
    played = host.stepper.start(netbots.play(bots))
    host.run_until(
        lambda: ann.table and not ann.told.over and ann.name in ann.told.live,
        what="ann in a running hand",
    )
    ann.drop()
    host.run_until(lambda: ann.name in table.away, what="the host to see the drop")
    host.run_until(played.done, what="the bots' hands", within=50_000)
    assert played.result().refused == []
    assert ann.stats.resumes == 1 and ann.stats.hands >= 4
    assert seen == sorted(set(seen)), "no event twice"
    assert seen == list(range(seen[0], seen[-1] + 1)), "no event lost across the drop"
    rows = host.store.all("SELECT type, payload FROM events WHERE table_id = ?", (table.id,))
    kinds = {(row["type"], json.loads(row["payload"]).get("player")) for row in rows}
    assert ("disconnect", ann.name) in kinds and ("reconnect", ann.name) in kinds
    host.stop()
    host.close()
    audit_clean(gm, deployed_store)


def test_a_bot_judges_only_what_it_was_told() -> None:
    told = Told("ann")
    told.see(
        {
            "type": "hand_started",
            "game": "stud5",
            "config_id": "c",
            "seats": [{"player": "ann", "coins": 9}, {"player": "bob", "coins": 9}],
        }
    )
    told.see({"type": "ante", "player": "ann", "amount": 10})
    told.see({"type": "ante", "player": "bob", "amount": 10})
    told.see(
        {
            "type": "deal",
            "cards": [
                {"player": "ann", "card": "AS", "face": "down"},
                {"player": "bob", "card": "??", "face": "down"},
                {"player": "ann", "card": "AH", "face": "up"},
                {"player": "bob", "card": "8D", "face": "up"},
            ],
        }
    )
    assert (told.own, told.up, told.pot) == (["AS"], {"ann": ["AH"], "bob": ["8D"]}, 20)
    told.see({"type": "fold", "player": "bob", "pot": 30})
    assert (told.live, told.pot) == (["ann"], 30)
    three = Told("ann")
    three.see({"type": "hand_started", "game": "three-card", "seats": [{"player": "ann"}]})
    three.see({"type": "deal", "cards": [{"player": "ann", "card": "??", "face": "down"}]})
    assert three.own == [] and three.strength(None) is None  # blind until the look (H4)
    three.see({"type": "look", "player": "ann", "cards": ["AS", "KS", "QS"]})
    assert three.looked and three.own == ["AS", "KS", "QS"]
    legal = legal_of([{"verb": "bet", "min": 100, "max": 500, "step": 100}, {"verb": "fold"}])
    assert legal[0].allows(300) and not legal[0].allows(250) and legal[1].verb == "fold"


def gmtool(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "gmtool", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env or clean_env(),
    )


def test_an_unreachable_url_is_one_line_and_exit_2(tmp_path: Path) -> None:
    out = gmtool(
        "bots", "--connect", "ws://127.0.0.1:9", "--count", "1", "--token-file", os.devnull
    )
    assert out.returncode == 2 and "no token" in out.stderr, out.stderr
    tokens = tmp_path / "tokens.txt"
    tokens.write_text("not.a.token\n")
    out = gmtool("bots", "--connect", "ws://127.0.0.1:9", "--token-file", str(tokens))
    assert out.returncode == 2, out.stderr
    assert "Traceback" not in out.stderr
    (said,) = [line for line in out.stderr.splitlines() if line.startswith("error")]
    assert said.startswith("error: cannot reach ws://127.0.0.1:9: connection refused"), said
    out = gmtool("bots", "--connect", "http://127.0.0.1:9", "--token-file", str(tokens))
    assert out.returncode == 2 and "ws://" in out.stderr, out.stderr


def test_the_command_plays_against_a_real_host_and_a_refused_token_is_exit_2(
    deployed_store: Located, tmp_path: Path
) -> None:
    located = deployed_store
    host = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gmtool",
            "house",
            "run",
            "--db",
            located.db,
            *located.host_args(),
            "--tables",
            "1",
            "--system",
            "qq-showhand",
            "--speed",
            "50",
            "--listen",
            "127.0.0.1:0",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=clean_env(),
    )
    try:
        url = ""
        for line in host.stdout:  # type: ignore[union-attr]
            if "ws://" in line:
                url = line[line.index("ws://") :].split()[0]
                break
        assert url, "the host said no address"
        out = gmtool(
            "bots",
            "--connect",
            url,
            "--count",
            "2",
            "--db",
            located.db,
            "--as",
            "boss",
            "--grant",
            "100000",
            "--hands",
            "1",
            "--json",
            env=located.env(),
        )
        assert out.returncode == 0, out.stdout + out.stderr
        assert '"hands"' in out.stdout and '"refused": []' in out.stdout, out.stdout
        playing = subprocess.Popen(
            [*gmtool_command(), "bots", "--connect", url, "--db", located.db],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=located.env(GMTOOL_USER="boss"),
        )
        assert "Ctrl-C stops them" in playing.stderr.readline()  # type: ignore[union-attr]
        playing.send_signal(signal.SIGINT)
        said, _ = playing.communicate(timeout=60)
        assert playing.returncode == 0 and "(interrupted)" in said, said
        stale = tmp_path / "stale.txt"
        stale.write_text("eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJhbm4ifQ.c2ln\n")
        out = gmtool("bots", "--connect", url, "--token-file", str(stale))
        assert out.returncode == 2, out.stdout + out.stderr
        assert "Traceback" not in out.stderr
        (said,) = [line for line in out.stderr.splitlines() if line.startswith("error")]
        assert said == "error: the host refused the token of bot 1: unknown_key", said
    finally:
        host.send_signal(signal.SIGTERM)
        host.wait(timeout=60)
