"""The table host (issue 5; RULES G2, G4, G5).

Most tests run the real `Host` in this process on virtual time (`virtual_host`,
tests/hosting.py): the test steps the host to a situation, issues a GM command or
deploys a profile while the host is still, steps on and reads the store. What the host
plays depends only on its seed, so these checks are exact (a hand that starts after a
deployment committed plays the new config; a command is acknowledged within one poll of
the command queue, in virtual seconds) and a busy machine only makes them slower.

Two kinds of test stay end to end: `gmtool house run` in a real subprocess, with another
process reading the store while it plays, and SIGINT/SIGTERM stopping it cleanly. They
wait for what the host says (`LiveHost`), never for a fixed time, and assert nothing
about how long anything took.

Every test runs once per store backend (`deployed_store`, tests/backends.py): a SQLite
file, and a PostgreSQL database whose host keeps its files in a home folder.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import textwrap
from datetime import datetime
from itertools import pairwise
from pathlib import Path

import pytest
from backends import Located, deployed_store_fixture, pg_server_fixture  # noqa: F401
from helpers import clean_env, gm_identity
from hosting import VirtualHost, hand_events

from gmtool.audit.chain import verify_event_chains
from gmtool.audit.coins import verify_balances
from gmtool.errors import NotFound, Unavailable
from gmtool.house.commands import COMMAND_POLL_S, WORD_POLL_S
from gmtool.house.lease import REFRESH_S
from gmtool.ops.deploy import deploy_profile
from gmtool.ops.tables import CommandFailed
from gmtool.rules.edit import set_in_file
from gmtool.store import gm as gm_store
from gmtool.store import table_leases
from gmtool.store import tables as table_store
from gmtool.store.db import Store

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "rules"
SHIPPED = ("lequ-showhand", "qq-showhand", "straight-flush", "suihua-three-card", "video-showhand")
TWO = ["qq-showhand", "suihua-three-card"]  # the systems of the stop tests
OPERATOR = "boss"
# A command is queued at some virtual moment; the host's poller sees it at its next poll
# (at most COMMAND_POLL_S later), its console writes its word again at most REFRESH_S
# after queueing it (a host carries a command out only on a word written after it saw
# it: house/lease.py), the poller looks again within WORD_POLL_S, and the table wakes and
# answers at that same moment. The margin covers the microseconds of stored timestamps
# and the loop's nanosecond ticks.
ACK_WITHIN_S = COMMAND_POLL_S + REFRESH_S + WORD_POLL_S + 0.001
LIVE_TIMEOUT_S = 120  # the end-to-end tests: generous, only a hung host reaches it


# -- stores ---------------------------------------------------------------------------------


def json_at(where, column: str, field: str) -> str:
    """SQL that reads `field` of the JSON text in `column`, in the dialect of `where` (a
    store, or a `Located`)."""
    if getattr(where, "dialect", None) == "postgresql" or getattr(where, "postgres", False):
        return f"({column}::jsonb ->> '{field}')"
    return f"json_extract({column}, '$.{field}')"


def rows(store: Store, sql: str, params: tuple = ()) -> list[dict]:
    return [dict(r) for r in store.all(sql, params)]


def seconds_between(start: str, end: str) -> float:
    return (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()


def last_hand_id(store: Store) -> int:
    return store.one("SELECT COALESCE(MAX(id), 0) FROM hands")[0]


def live_of(store: Store, table_id: str) -> dict:
    row = store.one("SELECT live FROM tables WHERE id = ?", (table_id,))
    return json.loads(row[0]) if row and row[0] else {}


def running_hands(store: Store) -> dict[str, int]:
    """table -> id of the hand running there."""
    return {
        r["table_id"]: r["id"]
        for r in store.all("SELECT id, table_id FROM hands WHERE outcome = 'running'")
    }


def assert_store_consistent(located: Located) -> None:
    with located.open() as store:
        assert list(verify_event_chains(store)) == []
        assert list(verify_balances(store)) == []
        assert store.one("SELECT COUNT(*) FROM hands WHERE outcome = 'running'")[0] == 0
        granted = store.one(
            "SELECT COALESCE(SUM(delta), 0) FROM ledger WHERE reason = 'opening_balance'"
        )[0]
        assert store.one("SELECT COALESCE(SUM(coins), 0) FROM players")[0] == granted


def assert_host_healthy(host: VirtualHost) -> None:
    assert not [m for m in host.messages if "internal error" in m], host.messages


# -- G2: GM kicks and closes, as the console sends them --------------------------------------


def kick_during_a_hand(
    host: VirtualHost, profile: str, attempts: int = 8
) -> tuple[dict, str, str, int]:
    """Kick a player in a running hand with coins, as the console does; (outcome, table,
    player, the hand running when the kick was issued). Every command is acknowledged
    within one poll of the queue; retries if a hand ended before its kick arrived."""
    for _ in range(attempts):
        table_id, player = host.run_until(
            lambda: host.running_players(profile, coins_only=True),
            what=f"a running {profile} hand with coins",
        )[0]
        hand_id = live_of(host.store, table_id)["hand"]
        outcome = host.command(OPERATOR, "kick", table_id, player, "test kick")
        command = gm_store.command(host.store, outcome["command"])
        assert command["status"] == "done", command
        assert seconds_between(command["issued_at"], command["acked_at"]) <= ACK_WITHIN_S, command
        if outcome["during_hand"]:
            return outcome, table_id, player, hand_id
    raise AssertionError(f"no kick hit a running {profile} hand in {attempts} attempts")


def hand_of_kick(store: Store, table_id: str, player: str) -> int:
    found = store.all(
        "SELECT hand_id FROM events WHERE table_id = ? AND type = 'kick' AND "
        f"{json_at(store, 'payload', 'player')} = ? ORDER BY seq",
        (table_id, player),
    )
    assert len(found) == 1 and found[0]["hand_id"] is not None, (table_id, player)
    return found[0]["hand_id"]


def assert_never_seated_again(store: Store, player: str, after_hand: int) -> None:
    """A kicked player sits out the rest of the host's run (G2)."""
    later = rows(store, "SELECT id, seats FROM hands WHERE id > ?", (after_hand,))
    assert later, "no hand was played after the kick"
    for hand in later:
        assert player not in {s["player"] for s in json.loads(hand["seats"])}, hand["id"]
    assert all(
        player not in (t["live"] or {}).get("seated", []) for t in table_store.list_tables(store)
    )


def test_g2_kick_during_a_hand_forfeits_to_the_banker_qq(
    deployed_store: Located, virtual_host
) -> None:
    """G2: a GM kick during a running hand is an escape under the profile's policy (S19);
    qq-showhand's policy forfeit_to_banker: the escapee pays the pot, the banker wins it,
    and the hand ends at once."""
    located = deployed_store
    host = virtual_host(
        located,
        systems=["qq-showhand"],
        tables=3,
        seed="kick-qq",
        grace=1.0,
    )
    store = host.store
    outcome, table_id, player, hand_id = kick_during_a_hand(host, "qq-showhand")
    assert outcome["ok"] and outcome["kicked"] == player
    assert player not in live_of(store, table_id)["seated"]  # the seat is free at once
    assert outcome["escape_policy"] == "forfeit_to_banker"
    settlement = outcome["settlement"]
    assert settlement is not None, outcome  # forfeit ends the hand at once
    deltas = {e["player"]: e["delta"] for e in settlement["entries"]}
    banker = settlement["winners"][0]
    assert banker != player
    assert deltas[player] < 0 and deltas[banker] == -deltas[player] > 0
    assert all(d == 0 for p, d in deltas.items() if p not in (player, banker)), deltas
    # the kick landed in the hand that was running when it was issued, and ended it
    assert hand_of_kick(store, table_id, player) == hand_id
    events = hand_events(store, hand_id)
    kick_at = next(i for i, (kind, _) in enumerate(events) if kind == "kick")
    assert [kind for kind, _ in events[kick_at:]] == ["kick", "hand_ended", "settlement"]
    ended = events[kick_at + 1][1]
    assert ended["reason"] == "escape" and ended["escaped"] == player
    assert ended["winners"] == settlement["winners"] and ended["charge"] == -deltas[player]
    # and the store says the same: the hand is settled, its ledger rows match
    hand = store.one("SELECT outcome, winners FROM hands WHERE id = ?", (hand_id,))
    assert hand["outcome"] == "settled" and json.loads(hand["winners"]) == [banker]
    ledger_rows = {
        r["player"]: r["delta"]
        for r in store.all("SELECT player, delta FROM ledger WHERE hand_id = ?", (hand_id,))
    }
    assert ledger_rows == {p: d for p, d in deltas.items() if d}
    # the console logged the kick with the host's outcome
    logged = rows(
        store, "SELECT actor, action, target, outcome FROM gm_actions WHERE action = 'kick'"
    )
    assert logged[-1]["actor"] == OPERATOR and logged[-1]["target"] == f"{table_id}/{player}"
    assert json.loads(logged[-1]["outcome"])["during_hand"] is True
    # the tables play on, without the kicked player
    host.advance(120)
    assert_never_seated_again(store, player, hand_id)
    report = host.stop()
    assert_host_healthy(host)
    assert report.commands >= 1
    assert_store_consistent(located)


def test_s17_the_first_speakers_clock_starts_when_the_hand_does(
    deployed_store: Located, virtual_host
) -> None:
    """S17: a new hand's first snapshot gives the first speaker the whole `action_s`
    (counted from the deal, not from the end of the hand before)."""
    located = deployed_store
    host = virtual_host(
        located,
        systems=["qq-showhand"],
        tables=1,
        seed="first-clock",
        speed=2.0,
    )
    store = host.store
    ((table_id, table),) = host.host.tables.items()
    seen: set[int] = set()
    for _ in range(3):
        live = host.run_until(
            lambda: (
                (lv := live_of(store, table_id)).get("running") and lv["hand"] not in seen and lv
            ),
            what="a new hand's first snapshot",
        )
        seen.add(live["hand"])
        action_s = table.config.timeouts.action_s
        left = live["running"]["deadline_at"] - live["published_at"]
        assert left == pytest.approx(action_s / 2.0), (live["hand"], left)
    host.stop()
    assert_host_healthy(host)


def test_g2_a_kick_ends_the_wait_of_a_disconnected_player_at_once(
    deployed_store: Located, virtual_host
) -> None:
    """G2: kicking the player to act while they are away ends their turn at once; the table
    does not sit out the rest of their reconnect window before it plays on."""
    located = deployed_store
    host = virtual_host(
        located,
        systems=["qq-showhand"],
        tables=4,
        seed="kick-away",
        chaos=0.6,
        grace=1.0,
    )
    store = host.store

    def away_to_act() -> list[tuple[str, str, int]]:
        found = []
        for table_id, live in ((t, live_of(store, t)) for t in host.host.tables):
            running = live.get("running") or {}
            if live.get("profile") and live["tier"] != "training" and running.get("to_act"):
                actor = next(p for p in running["players"] if p["name"] == running["to_act"])
                if not actor["connected"]:
                    found.append((table_id, actor["name"], live["hand"]))
        return found

    table_id, player, hand_id = host.run_until(
        away_to_act, what="a disconnected player to act in a hand with coins"
    )[0]
    kicked_at = host.now()
    outcome = host.command(OPERATOR, "kick", table_id, player, "away too long")
    assert outcome["during_hand"], outcome
    window_s = host.host.tables[table_id].config.timeouts.reconnect_min * 60
    host.run_until(
        lambda: live_of(store, table_id).get("hand") not in (None, hand_id),
        within=window_s / 4,
        what="the table's next hand after the kick",
    )
    assert host.now() - kicked_at < window_s / 4
    host.stop()
    assert_host_healthy(host)


def test_g2_kick_during_a_hand_folds_the_player_lequ(deployed_store: Located, virtual_host) -> None:
    """G2 with lequ-showhand's policy fold (S19/L13): the kicked player is folded, forfeits
    what they put in the pot, the hand goes on without them, and their seat is freed when
    it ends."""
    located = deployed_store
    host = virtual_host(
        located,
        systems=["lequ-showhand"],
        tables=2,
        seed="kick-lequ",
        grace=1.0,
    )
    store = host.store
    outcome, table_id, player, hand_id = kick_during_a_hand(host, "lequ-showhand")
    assert outcome["ok"] and outcome["kicked"] == player
    assert outcome["escape_policy"] == "fold"
    assert hand_of_kick(store, table_id, player) == hand_id
    kinds = hand_events(store, hand_id)
    kick_at = next(i for i, (t, _) in enumerate(kinds) if t == "kick")
    kind, payload = kinds[kick_at + 1]  # folded by the kick itself, at once
    assert kind == "fold" and payload["player"] == player and payload["cause"] == "kick", kinds[
        kick_at:
    ]
    # the hand goes on without them (or ends if one player is left); play to its end
    host.run_until(
        lambda: store.one("SELECT 1 FROM hands WHERE id = ? AND outcome != 'running'", (hand_id,)),
        what=f"the end of hand {hand_id}",
    )
    kinds = hand_events(store, hand_id)
    assert not any(t == "hand_ended" and p.get("reason") == "escape" for t, p in kinds)
    acted_after = [(t, p) for t, p in kinds[kick_at + 2 :] if p.get("player") == player]
    assert acted_after == [], acted_after  # a folded player takes no further turn
    hand = store.one("SELECT outcome, winners FROM hands WHERE id = ?", (hand_id,))
    assert hand["outcome"] == "settled"  # no chaos, no stop: nothing else can end it
    assert player not in json.loads(hand["winners"])
    ledger_rows = store.all(
        "SELECT delta FROM ledger WHERE hand_id = ? AND player = ?", (hand_id, player)
    )
    assert ledger_rows and sum(r["delta"] for r in ledger_rows) < 0
    # the seat is freed as the hand ends (a table event), and they are not dealt in again
    freed = rows(
        store,
        "SELECT type, payload FROM events WHERE table_id = ? AND hand_id IS "
        f"NULL AND type = 'removed' AND {json_at(store, 'payload', 'player')} = ?",
        (table_id, player),
    )
    assert [json.loads(r["payload"])["reason"] for r in freed] == ["kicked"]
    host.run_until(
        lambda: store.one("SELECT 1 FROM hands WHERE table_id = ? AND id > ?", (table_id, hand_id)),
        what="the table's next hand",
    )
    assert_never_seated_again(store, player, hand_id)
    host.stop()
    assert_host_healthy(host)
    assert_store_consistent(located)


def test_g2_a_command_for_a_table_not_hosted_here_fails_at_once(
    deployed_store: Located, virtual_host
) -> None:
    """The host answers a command for a table it does not host with a failure, within one
    poll of the queue (PostgreSQL: it leaves it to the table's host; the console refuses a
    table no live host holds); the console refuses a table the store does not know at all."""
    located = deployed_store
    host = virtual_host(located, systems=["qq-showhand"], tables=2, seed="elsewhere")
    store = host.store
    host.run_until(lambda: running_hands(store), what="a running hand")
    # queued straight into the store by another writer (the old console path), on the
    # host's virtual clock so that its timestamps compare
    with located.open(write=True, clock=host.clock) as other:
        command_id = gm_store.enqueue(
            other, "kick", "no-such-table", "bot-001", "test kick", "tester", None
        )

    def answered() -> dict | None:
        command = gm_store.command(store, command_id)
        return command if command["status"] != "pending" else None

    if located.postgres:
        # A store several hosts share: a host takes only the commands of the tables it
        # holds and leaves the others to their hosts (house/commands.py): still pending.
        host.advance(4 * ACK_WITHIN_S)
        assert gm_store.command(store, command_id)["status"] == "pending"
    else:
        failed = host.run_until(answered, within=5, what="the acknowledgement")
        assert failed["status"] == "failed" and not failed["outcome"]["ok"]
        assert "not hosted here" in failed["outcome"]["error"], failed
        assert seconds_between(failed["issued_at"], failed["acked_at"]) <= ACK_WITHIN_S
    # a table in the store that another host runs
    elsewhere = "qq-showhand-junior-9"
    table_store.open_table(store, elsewhere, "qq-showhand", "junior", "stud5", 999_999)
    if located.postgres:
        # no live host holds its lease: the console refuses it at once, nothing queued
        queued = store.one("SELECT COUNT(*) FROM gm_commands")[0]
        with pytest.raises(Unavailable, match=f"no host runs {elsewhere} \\(no live"):
            host.command(OPERATOR, "kick", elsewhere, "bot-001", "test kick")
        assert store.one("SELECT COUNT(*) FROM gm_commands")[0] == queued
        # another host holds it: queued, left to that host, withdrawn when the console
        # gives up waiting (this host never answers for a table it does not hold)
        assert table_leases.take(store, elsewhere, "another-host", 3600.0) is not None
        with pytest.raises(CommandFailed, match="no host acknowledged within 10 s"):
            host.command(OPERATOR, "kick", elsewhere, "bot-001", "test kick")
        command = rows(store, "SELECT * FROM gm_commands ORDER BY id DESC LIMIT 1")[0]
        assert command["table_id"] == elsewhere and command["status"] == "expired", command
    else:  # queued, then failed by this host, the store's one host
        with pytest.raises(CommandFailed, match="not hosted here"):
            host.command(OPERATOR, "kick", elsewhere, "bot-001", "test kick")
        command = rows(store, "SELECT * FROM gm_commands ORDER BY id DESC LIMIT 1")[0]
        assert command["table_id"] == elsewhere and command["status"] == "failed"
        assert seconds_between(command["issued_at"], command["acked_at"]) <= ACK_WITHIN_S
    # no such table at all: the console refuses before queueing anything (and logs it)
    queued = store.one("SELECT COUNT(*) FROM gm_commands")[0]
    with pytest.raises(NotFound):
        host.command(OPERATOR, "kick", "no-such-table", "bot-001", "test kick")
    assert store.one("SELECT COUNT(*) FROM gm_commands")[0] == queued
    logged = rows(store, "SELECT target, outcome FROM gm_actions ORDER BY id DESC LIMIT 1")[0]
    assert logged["target"] == "no-such-table/bot-001" and not json.loads(logged["outcome"])["ok"]
    # none of this disturbed the host: its tables play on
    played = last_hand_id(store)
    host.run_until(
        lambda: store.one("SELECT 1 FROM hands WHERE id > ? AND outcome = 'settled'", (played,)),
        what="another settled hand",
    )
    host.stop()
    assert_host_healthy(host)
    assert_store_consistent(located)


def test_g2_a_gm_close_voids_the_running_hand(deployed_store: Located, virtual_host) -> None:
    """A GM close of a table with a running hand voids that hand (every stake returned),
    closes the table for good and the host plays on with its other tables."""
    located = deployed_store
    host = virtual_host(
        located,
        systems=["qq-showhand"],
        tables=3,
        seed="close-qq",
        grace=1.0,
    )
    store = host.store
    # a hand with bets beyond the antes: stakes to return
    table_id = host.run_until(
        lambda: [
            t
            for t, h in running_hands(store).items()
            if store.one(
                "SELECT 1 FROM events WHERE hand_id = ? AND type IN ('bet', 'call', 'raise')", (h,)
            )
        ],
        what="a running hand with bets",
    )[0]
    hand_id = live_of(store, table_id)["hand"]
    seats = {
        s["player"]: s["coins"]
        for s in json.loads(store.one("SELECT seats FROM hands WHERE id = ?", (hand_id,))[0])
    }
    closed = host.command(OPERATOR, "close", table_id, None, "test close")
    command = gm_store.command(store, closed["command"])
    assert seconds_between(command["issued_at"], command["acked_at"]) <= ACK_WITHIN_S
    assert command["status"] == "done"
    assert closed["ok"] and closed["closed"] == table_id and closed["voided_hand"] == hand_id
    hand = store.one("SELECT table_id, outcome FROM hands WHERE id = ?", (hand_id,))
    assert dict(hand) == {"table_id": table_id, "outcome": "voided"}
    assert [t for t, _ in hand_events(store, hand_id)][-1] == "hand_voided"
    assert store.all("SELECT id FROM ledger WHERE hand_id = ?", (hand_id,)) == []
    coins = {
        r["name"]: r["coins"]
        for r in store.all(
            f"SELECT name, coins FROM players WHERE name IN ({','.join('?' * len(seats))})",
            tuple(seats),
        )
    }
    assert coins == seats  # every stake returned
    table = store.one("SELECT status, live FROM tables WHERE id = ?", (table_id,))
    assert table["status"] == "closed" and table["live"] is None
    assert store.all("SELECT * FROM seats WHERE table_id = ?", (table_id,)) == []
    # the closed table plays no more and takes no more commands; the others play on
    played = last_hand_id(store)
    host.run_until(
        lambda: (
            store.one(
                "SELECT COUNT(DISTINCT table_id) FROM hands WHERE id > ? AND outcome = 'settled'",
                (played,),
            )[0]
            >= 2
        ),
        what="settled hands on the other tables",
    )
    assert (
        store.all("SELECT id FROM hands WHERE table_id = ? AND id > ?", (table_id, hand_id)) == []
    )
    with pytest.raises(Unavailable, match=f"{table_id} is closed .*: nobody sits there"):
        host.command(OPERATOR, "kick", table_id, next(iter(seats)), "test kick")
    host.stop()
    assert_host_healthy(host)
    assert store.one("SELECT status FROM tables WHERE id = ?", (table_id,))[0] == "closed"
    assert_store_consistent(located)


# -- G5: a deployment reaches each table at its next hand ------------------------------------


def changed_profile(tmp_path: Path, profile: str, key: str, value: str) -> Path:
    changed = tmp_path / f"{profile}.toml"
    shutil.copy(RULES / f"{profile}.toml", changed)
    set_in_file(changed, key, value)
    set_in_file(changed, "profile.version", "99")  # new content needs a new version
    return changed


def replays(store: Store, hand: dict) -> bool:
    """The hand's recorded inputs, replayed under its recorded config, give its events."""
    from gmtool.engine.events import Event
    from gmtool.engine.hand import Seat
    from gmtool.engine.play import replay, seeded_source, start_hand
    from gmtool.store.configs import load_config

    config = load_config(store, hand["config_id"])
    seats = [Seat(s["player"], s["coins"]) for s in json.loads(hand["seats"])]
    ante = hand["ante"] if config["betting"].get("style") == "owner_ante" else None
    fresh = start_hand(
        config,
        hand["tier"],
        seats,
        hand["banker"],
        seeded_source(config, bytes.fromhex(hand["seed"])),
        ante=ante,
    )
    recorded = [
        Event(r["type"], json.loads(r["payload"]))
        for r in store.all(
            "SELECT type, payload FROM events WHERE hand_id = ? ORDER BY seq", (hand["id"],)
        )
    ]
    return [e.as_json() for e in replay(fresh, recorded)] == [e.as_json() for e in recorded]


def started_config(store: Store, hand_id: int) -> str:
    """The config_id the hand's `hand_started` event names."""
    return json.loads(
        store.one(
            "SELECT payload FROM events WHERE hand_id = ? AND type = 'hand_started'", (hand_id,)
        )[0]
    )["config_id"]


def test_g5_a_profile_deployed_while_hands_run_applies_at_each_tables_next_hand(
    deployed_store: Located, virtual_host, tmp_path: Path
) -> None:
    """G5: a profile change takes effect at the next hand of each table, never mid-hand
    (checked by the config_id recorded with every hand, G4). The host is still while the
    deployment commits, so the boundary is exact: every hand that started before it plays
    the old config to its end, every hand that starts after it plays the new one, on the
    owner-ante tables too."""
    profiles = ["qq-showhand", "lequ-showhand"]
    located = deployed_store
    changed = [
        changed_profile(
            tmp_path, "qq-showhand", "tiers.junior.street_caps", "[300, 500, 1000, 1000]"
        ),
        changed_profile(tmp_path, "lequ-showhand", "owner_ante.min_holding_antes", "100"),
    ]
    host = virtual_host(located, systems=profiles, tables=6, seed="g5", grace=2.0)
    store = host.store
    old = {
        r["profile_id"]: r["config_id"]
        for r in store.all("SELECT profile_id, config_id FROM deployments")
    }
    profile_of = {r["id"]: r["profile_id"] for r in store.all("SELECT id, profile_id FROM tables")}
    assert len(profile_of) == 6 and set(profile_of.values()) == set(profiles)

    def tables_with_hands(after: int = 0) -> set[str]:
        return {
            r[0] for r in store.all("SELECT DISTINCT table_id FROM hands WHERE id > ?", (after,))
        }

    def ready() -> bool:  # every table has played, and both systems have a hand running now
        running = {profile_of[t] for t in running_hands(store)}
        return tables_with_hands() == set(profile_of) and running == set(profiles)

    host.run_until(ready, what="hands on every table, some running on each system")
    running_at_deploy = running_hands(store)
    before = last_hand_id(store)
    new = {}
    for path in changed:
        result = deploy_profile(store, path, None, gm_identity(OPERATOR))
        new[result["profile"]] = result["config_id"]
    assert set(new) == set(profiles) and all(new[p] != old[p] for p in profiles)
    (deployed_at,) = {
        r[0]
        for r in store.all(
            "SELECT deployed_at FROM deployments WHERE config_id IN (?, ?)", tuple(new.values())
        )
    }

    def all_played_after() -> bool:
        return tables_with_hands(before) == set(profile_of) and not (
            set(running_hands(store).values()) & set(running_at_deploy.values())
        )

    host.run_until(all_played_after, what="a hand after the deployment on every table")
    host.stop()
    assert_host_healthy(host)

    for table_id, profile in sorted(profile_of.items()):
        hands = rows(store, "SELECT * FROM hands WHERE table_id = ? ORDER BY number", (table_id,))
        for hand in hands:
            expected = old[profile] if hand["id"] <= before else new[profile]
            assert hand["config_id"] == expected, (table_id, hand["number"])
            # stored (virtual) timestamps tell the same story as the ids
            if hand["id"] <= before:
                assert hand["started_at"] <= deployed_at, (hand["started_at"], deployed_at)
            else:
                assert hand["started_at"] >= deployed_at, (hand["started_at"], deployed_at)
            assert started_config(store, hand["id"]) == expected
            if hand["outcome"] == "settled":
                assert replays(store, hand), (table_id, hand["number"])
        sequence = [h["config_id"] for h in hands]
        switches = sum(a != b for a, b in pairwise(sequence))
        assert switches == 1 and sequence[0] == old[profile], (table_id, sequence)
    # the hands running at the deployment finished under the rules they started with
    for table_id, hand_id in running_at_deploy.items():
        hand = dict(store.one("SELECT * FROM hands WHERE id = ?", (hand_id,)))
        assert hand["outcome"] == "settled" and hand["config_id"] == old[profile_of[table_id]]
        assert replays(store, hand)
    assert_store_consistent(located)


def test_g5_an_owner_ante_table_switches_at_its_next_hand(
    deployed_store: Located, virtual_host, tmp_path: Path
) -> None:
    """G5 on an owner-ante table (lequ): a hand that starts after a deployment committed
    plays the deployed config, also when the deployment lands while the bots are about to
    press start (the countdown after everyone agreed, or "continue" after a hand)."""
    from gmtool.rules.compile import compile_file

    located = deployed_store
    original = RULES / "lequ-showhand.toml"
    changed = changed_profile(tmp_path, "lequ-showhand", "owner_ante.min_holding_antes", "100")
    versions = [(path, compile_file(path)["config_id"]) for path in (changed, original)]
    assert versions[0][1] != versions[1][1]
    host = virtual_host(
        located,
        systems=["lequ-showhand"],
        tables=1,
        seed="g5-owner",
        grace=1.0,
    )
    store = host.store
    (table_id,) = host.host.tables
    boundaries = [(0, versions[1][1])]  # (hands after this id, the config they must play)
    for attempt, phase in enumerate(["countdown", "continue", "countdown", "continue"]):
        host.run_until(
            lambda phase=phase: live_of(store, table_id).get("phase") == phase,
            what=f"the table in phase {phase} (attempt {attempt})",
        )
        path, config_id = versions[attempt % 2]
        before = last_hand_id(store)
        deploy_profile(store, path, None, gm_identity(OPERATOR))
        boundaries.append((before, config_id))
        hand = host.run_until(
            lambda before=before: store.one(
                "SELECT id, config_id FROM hands WHERE table_id = ? AND id > ? ORDER BY id LIMIT 1",
                (table_id, before),
            ),
            what=f"the next hand (attempt {attempt})",
        )
        assert hand["config_id"] == config_id, (attempt, phase, dict(hand))
        assert started_config(store, hand["id"]) == config_id
    host.run_until(lambda: not running_hands(store), what="the last hand's end")
    host.stop()
    assert_host_healthy(host)
    # every hand played the config deployed last before it started, never another
    for hand in rows(store, "SELECT * FROM hands ORDER BY id"):
        expected = [c for after, c in boundaries if hand["id"] > after][-1]
        assert hand["config_id"] == expected, (hand["id"], boundaries)
        if hand["outcome"] == "settled":
            assert replays(store, hand), hand["id"]
    assert_store_consistent(located)


# -- a clean stop, on virtual time --------------------------------------------------------


def test_a_stop_lets_running_hands_finish_within_the_grace(
    deployed_store: Located, virtual_host
) -> None:
    """With grace enough, every hand running at the stop is played to its end; no new hand
    starts; the host reports the tables that finished and voids nothing."""
    located = deployed_store
    host = virtual_host(located, systems=TWO, tables=6, seed="stop-grace", grace=600.0)
    store = host.store
    running = host.run_until(
        lambda: len(r := running_hands(store)) >= 3 and r, what="three running hands"
    )
    before = last_hand_id(store)
    report = host.stop()
    assert_host_healthy(host)
    assert report.voided_on_stop == []
    assert set(report.finished_on_stop) == set(running)
    for hand_id in running.values():
        assert store.one("SELECT outcome FROM hands WHERE id = ?", (hand_id,))[0] == "settled"
    assert store.all("SELECT id FROM hands WHERE id > ?", (before,)) == []
    assert {r[0] for r in store.all("SELECT status FROM tables")} == {"stopped"}
    assert any("stopping" in m for m in host.messages)
    assert_store_consistent(located)


def test_a_stop_voids_the_hands_still_running_after_the_grace(
    deployed_store: Located, virtual_host
) -> None:
    """With no grace, the hands still running are voided (every stake returned, a
    `hand_voided` event saying why); the report names each hand it voided and each table
    whose hand ended first."""
    located = deployed_store
    host = virtual_host(located, systems=TWO, tables=6, seed="stop-void", grace=0.0)
    store = host.store
    running = host.run_until(
        lambda: len(r := running_hands(store)) >= 3 and r, what="three running hands"
    )
    before = last_hand_id(store)
    stakes = {
        h: {
            s["player"]: s["coins"]
            for s in json.loads(store.one("SELECT seats FROM hands WHERE id = ?", (h,))[0])
        }
        for h in running.values()
    }
    report = host.stop()
    assert_host_healthy(host)
    assert report.voided_on_stop, report
    assert set(report.voided_on_stop) <= set(running.values())
    assert {t for t, h in running.items() if h not in report.voided_on_stop} == set(
        report.finished_on_stop
    )
    for table_id, hand_id in running.items():
        outcome = store.one("SELECT outcome FROM hands WHERE id = ?", (hand_id,))[0]
        if hand_id in report.voided_on_stop:
            assert outcome == "voided"
            kind, payload = hand_events(store, hand_id)[-1]
            assert kind == "hand_voided" and payload["reason"] == "host_stopped"
            assert store.all("SELECT id FROM ledger WHERE hand_id = ?", (hand_id,)) == []
            for player, coins in stakes[hand_id].items():
                assert store.one("SELECT coins FROM players WHERE name = ?", (player,))[0] == coins
        else:
            assert outcome == "settled", (table_id, hand_id)
    assert store.all("SELECT id FROM hands WHERE id > ?", (before,)) == []
    assert_store_consistent(located)


# -- end to end: `gmtool house run` in a real process ----------------------------------------


READER = textwrap.dedent("""
    import json, sys
    from gmtool.store.db import open_location

    # Count-based: at least `rounds` rounds of reads, and on until the reader has seen the
    # store change under it `changes` times (the host is writing meanwhile).
    where, rounds, changes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    postgres = "://" in where


    def plain():  # a plain tool: sqlite3 with its default timeout, or psycopg
        if postgres:
            import psycopg
            return psycopg.connect(where, autocommit=True)
        import sqlite3
        return sqlite3.connect(where)


    reads, errors, seen, last = 0, [], 0, None
    while reads < rounds or seen < changes:
        try:
            with open_location(where, postgres=True) as store:  # as the console opens it
                state = tuple(map(tuple, store.all(
                    "SELECT outcome, COUNT(*) FROM hands GROUP BY outcome ORDER BY outcome")))
                store.all("SELECT id, live FROM tables")
                store.all("SELECT * FROM events ORDER BY id DESC LIMIT 20")
                store.one("SELECT SUM(coins) FROM players")
            conn = plain()
            try:
                conn.execute("SELECT COUNT(*) FROM ledger").fetchone()
                conn.execute("SELECT * FROM hands ORDER BY id DESC LIMIT 5").fetchall()
            finally:
                conn.close()
            reads += 1
            seen += last is not None and state != last
            last = state
        except Exception as error:
            errors.append(f"{type(error).__name__}: {error}")
            if len(errors) > 1000:
                break
    print(json.dumps({"reads": reads, "changes": seen, "errors": errors[:20],
                      "error_count": len(errors)}))
""")
READ_ROUNDS, READ_CHANGES = 50, 5


def test_host_runs_every_shipped_system_while_another_process_reads(
    deployed_store: Located, start_host
) -> None:
    """`gmtool house run` hosts every shipped system while another process reads the store
    (as the console and plain tools, sqlite3 or psycopg, do) without a single error on
    either side."""
    located = deployed_store
    host = start_host(
        located.db,
        *located.host_args(),
        *("--tables", "8", "--speed", "200", "--seed", "x", "--grace", "3"),
    )
    host.wait_for_line(r"^hand \d+ started: ", timeout=LIVE_TIMEOUT_S)
    reader = subprocess.run(
        [sys.executable, "-c", READER, located.db, str(READ_ROUNDS), str(READ_CHANGES)],
        capture_output=True,
        text=True,
        timeout=LIVE_TIMEOUT_S,
        env=clean_env(),
        check=False,
    )
    assert reader.returncode == 0, reader.stderr
    reads = json.loads(reader.stdout)
    assert reads["error_count"] == 0, reads["errors"]
    assert reads["reads"] >= READ_ROUNDS and reads["changes"] >= READ_CHANGES, reads

    tables = located.rows("SELECT id, profile_id, game FROM tables")

    def every_table_settled_a_hand() -> bool:
        settled = located.rows("SELECT DISTINCT table_id FROM hands WHERE outcome = 'settled'")
        return {r[0] for r in settled} == {t[0] for t in tables}

    host.wait_until(every_table_settled_a_hand, timeout=LIVE_TIMEOUT_S)
    assert host.stop(signal.SIGTERM, timeout=LIVE_TIMEOUT_S) == 0, host.output
    output = host.output
    assert "database is locked" not in output and "Traceback" not in output
    assert "stopped:" in output

    assert len(tables) == 8
    assert {t[1] for t in tables} == set(SHIPPED)
    assert {t[2] for t in tables} == {"stud5", "three-card"}
    # every settled hand records its config (G4) and its revealed seed
    assert (
        located.rows(
            "SELECT id FROM hands WHERE outcome = 'settled' AND (seed IS NULL OR "
            "config_id NOT IN (SELECT config_id FROM configs))",
        )
        == []
    )
    assert_store_consistent(located)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_signal_stops_the_host_cleanly(deployed_store: Located, start_host, signum: int) -> None:
    """Running hands finish within the grace period or are voided (stakes returned); the
    host says which, and exits 0 (130 after Ctrl-C) with no hand left running."""
    located = deployed_store
    host = start_host(
        located.db,
        *located.host_args(),
        *("--system", TWO[0], "--system", TWO[1]),
        *("--tables", "6", "--speed", "4", "--seed", "stop", "--grace", "0.5"),
    )
    running = host.wait_until(
        lambda: (
            len(r := dict(located.rows("SELECT id, table_id FROM hands WHERE outcome = 'running'")))
            >= 3
            and r
        ),
        timeout=LIVE_TIMEOUT_S,
    )
    expected = 130 if signum == signal.SIGINT else 0  # Ctrl-C: the shell's 128 + 2
    assert host.stop(signum, timeout=LIVE_TIMEOUT_S) == expected, host.output
    output = host.output
    assert "Traceback" not in output
    assert "stopping" in output and "stopped:" in output
    voided = {
        r[0]
        for r in located.rows(
            "SELECT h.id FROM hands h JOIN events e ON "
            "e.hand_id = h.id AND e.type = 'hand_voided' WHERE "
            f"h.outcome = 'voided' AND {json_at(located, 'e.payload', 'reason')} = 'host_stopped'"
        )
    }
    said_voided: set[int] = set()
    said_finished: set[str] = set()
    for line in output.splitlines():
        if line.startswith("voided on stop"):
            said_voided = {int(x) for x in line.split("hand(s)")[1].replace(",", " ").split()}
        if line.startswith("finished their hand before stopping:"):
            said_finished = {x.strip() for x in line.split(":", 1)[1].split(",")}
    assert said_voided == voided, output
    assert voided or said_finished, output
    for hand_id in running:  # each hand running at the stop is accounted for
        outcome = located.one("SELECT outcome FROM hands WHERE id = ?", (hand_id,))
        assert outcome in ("settled", "voided")
        if outcome == "voided":
            assert hand_id in said_voided
    for table_id in said_finished:
        last = located.one(
            "SELECT outcome FROM hands WHERE table_id = ? ORDER BY number DESC LIMIT 1",
            (table_id,),
        )
        assert last == "settled", table_id
    assert_store_consistent(located)
