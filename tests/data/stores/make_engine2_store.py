"""How tests/data/stores/engine-2.sqlite was made: by the engine of version "2".

Run it from a checkout of commit 6ab295a (the last release of engine version 2):

    git worktree add /tmp/engine2 6ab295a
    cd /tmp/engine2 && python tests/data/stores/make_engine2_store.py OUT.sqlite

It is kept beside the store as a record of what the store holds; it does not run on later
engines (it relies on their rules of the time). The store holds:

- a few hundred hands played by the host's bots on every shipped profile, with chaos
  (timeouts, disconnects, escapes, reconnect windows run out at exactly n minutes);
- hands that the rule fixes of engine version 3 decide differently, played on tables of
  their own: a folded banker winning an escape (RULES S19 before D-10), a reconnect
  window closing at exactly n minutes (S18 before its correction), a lequ showdown won
  by a kicker under the old `ranks_then_suit` (S6 before its correction);
- GM users, a coin adjustment and their log.

Audit of this store must find nothing under every later engine: old hands replay under
the rules they were played with (their recorded config and engine version).
"""

from __future__ import annotations

import asyncio
import hashlib
import sys
from pathlib import Path

from gmtool.engine.events import Action
from gmtool.engine.hand import Seat
from gmtool.engine.owner_table import OwnerTable
from gmtool.engine.play import seeded_source, start_hand
from gmtool.engine.ranking import Stud5Ranking
from gmtool.engine.config import deck_for
from gmtool.house import demo as demo_setup, gm_ops
from gmtool.house.host import Host, HostOptions
from gmtool.house.recorder import Recorder
from gmtool.house.seeds import hand_seed
from gmtool.store import configs, ledger, tables as table_store

SEED = "engine-2"
KEY = hashlib.sha256(SEED.encode()).digest()  # what `--seed engine-2` makes the host key


def config_of(store, profile, tier):
    return configs.load_config(store, configs.active_config_id(store, profile, tier))


def play_hand(store, table_id, profile, tier, players, script):
    """One hand on a table of its own, driven by `script(hand)` -> next Action or None."""
    config = config_of(store, profile, tier)
    table_store.open_table(store, table_id, profile, tier, config["game"], 0)
    recorder = Recorder(store, table_id)
    seed = hand_seed(KEY, table_id, 1)
    seats = [Seat(p, ledger.coins(store, p)) for p in players]
    hand = start_hand(config, tier, seats, players[0], seeded_source(config, seed))
    recorder.record(hand.events, seed=seed, number=1)
    while not hand.is_over:
        before = len(hand.events)
        hand.apply(script(hand))
        recorder.record(hand.events[before:])
    table_store.stop_table(store, table_id)
    return hand


def folded_banker_escapes(hand):
    """The banker folds first on street 2; the next player escapes (S19 before D-10)."""
    if not hand.players[hand.banker].folded:
        return Action("fold", hand.banker)
    return Action("escape", hand.to_act)


def reconnect_at_boundary(hand):
    """The player to act disconnects and the window runs exactly n minutes (S18)."""
    player = hand.players[hand.to_act] if hand.to_act else None
    if player is not None and player.connected and not any(
            e.type == "disconnect" for e in hand.events):
        return Action("disconnect", player.name)
    if player is not None and not player.connected:
        return Action("wait", amount=hand.timeouts["reconnect_min"] * 60)
    return Action("call" if any(l.verb == "call" for l in hand.legal_actions()) else "check",
                  hand.to_act)


def lequ_kicker_hand(store, players):
    """A lequ showdown that all-kicker ranking and seed 000's ranking decide differently."""
    config = config_of(store, "lequ-showhand", "table")
    deck = deck_for(config)
    seed000 = Stud5Ranking(deck, config["ranking"]["categories"], "key_then_suit")
    old = Stud5Ranking(deck, config["ranking"]["categories"], "ranks_then_suit")
    for attempt in range(1, 5000):
        table_id = f"lequ-showhand-kicker-{attempt}"
        table = drive_owner_table(config, table_id, players, store=None)
        hand = table.hand
        showdown = [e for e in hand.events if e.type == "showdown"]
        if not showdown:
            continue
        a, b = (hand.players[p].cards for p in players)
        high_card = old.category(a) == "high_card" and old.category(b) == "high_card"
        if not high_card and (old.key(a) > old.key(b)) != (seed000.key(a) > seed000.key(b)):
            return drive_owner_table(config, table_id, players, store=store)
    raise SystemExit("no kicker hand found")


def drive_owner_table(config, table_id, players, store):
    """Owner sets an ante of 1, the other agrees, both bet the minimum to the showdown."""
    recorder = None
    if store is not None:
        table_store.open_table(store, table_id, "lequ-showhand", "table", "stud5", 0)
        recorder = Recorder(store, table_id)

    def deal(number):
        return seeded_source(config, hand_seed(KEY, table_id, number))

    table = OwnerTable(config, "table", hand_seed(KEY, table_id, 0), deal)

    def record(events):
        if recorder is not None:
            started = any(e.type == "hand_started" for e in events)
            recorder.record(events, seed=hand_seed(KEY, table_id, 1) if started else None,
                            number=1 if started else None)

    for name in players:
        before = len(table.events)
        table.join(name, ledger.coins(store, name) if store is not None else 100_000)
        record(table.events[before:])
    script = [Action("ante", players[0], amount=1), Action("agree", players[1]),
              Action("start", players[0])]
    for action in script:
        record(table.apply(action))
    hand = table.hand
    while not hand.is_over:
        legal = {entry.verb: entry for entry in hand.legal_actions()}
        if "call" in legal:
            action = Action("call", hand.to_act)
        else:
            action = Action("bet", hand.to_act, amount=legal["bet"].min_amount)
        record(table.apply(action))
    if store is not None:
        table_store.stop_table(store, table_id)
    return table


def main(out: Path) -> None:
    if out.exists():
        raise SystemExit(f"{out} exists")
    store = demo_setup.fresh_store(out)
    demo_setup.deploy_shipped(store)
    plan = demo_setup.demo_table_plan(store)
    host = Host(store, HostOptions(tables=len(plan), speed=400, hands=300, chaos=0.2,
                                   seed=SEED, grace=2.0))
    host.ensure_bots(plan)
    host.build_tables(plan)
    asyncio.run(host.run())
    gm_ops.add_user(store, None, "olga", "operator")
    gm_ops.add_user(store, "olga", "sam", "support")
    gm_ops.adjust(store, "olga", "bot-001", 500, "goodwill after a disconnect")
    rich = [row["name"] for row in store.all(
        "SELECT name FROM players WHERE coins >= 50000 ORDER BY name")]
    play_hand(store, "qq-showhand-junior-escape", "qq-showhand", "junior", rich[0:3],
              folded_banker_escapes)
    play_hand(store, "video-showhand-junior-escape", "video-showhand", "junior", rich[3:6],
              folded_banker_escapes)
    play_hand(store, "qq-showhand-junior-window", "qq-showhand", "junior", rich[6:8],
              reconnect_at_boundary)
    lequ_kicker_hand(store, rich[8:10])
    store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()


if __name__ == "__main__":
    main(Path(sys.argv[1]))
