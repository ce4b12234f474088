"""How tests/data/stores/engine-3.sqlite was made: by the engine of version "3".

Run it from a checkout of commit 99722b4 (the last commit of engine version 3):

    git worktree add /tmp/engine3 99722b4
    cd /tmp/engine3 && python tests/data/stores/make_engine3_store.py OUT.sqlite

It is kept beside the store as a record of what the store holds; it does not run on later
engines (it relies on their rules of the time). Beside the store lie what its audit reads:
the host key (`.key`), the checkpoint key (`.checkpoint.pub`) and the witness folder.
The store holds:

- hands played by the host's bots on every shipped profile, with chaos (timeouts,
  disconnects, escapes); every three-card hand's first follow answers the ante (H5
  before its correction);
- hands that the rule fixes of engine version 4 decide differently, on tables of their
  own: showing cards tied on the top card and decided by its suit where seed 000 compares
  every rank (S7), a reconnect window counted from the turn rather than the disconnect
  (S18), a raise of one coin at an ante of 10 and an opener raising again (L10), a
  three-card player seated with less than the ante plus one follow at the cap (H12), and
  a QQ street skipped because every hand total was at the hand cap (S14);
- GM users, a coin adjustment and their log, and a signed checkpoint of the whole log.

Audit of this store must find nothing under every later engine: old hands replay under
the rules they were played with (their recorded config and engine version).
"""

from __future__ import annotations

import asyncio
import hashlib
import sys
from pathlib import Path

from gmtool.engine.config import deck_for
from gmtool.engine.events import Action
from gmtool.engine.hand import Seat
from gmtool.engine.owner_table import OwnerTable
from gmtool.engine.play import seeded_source, start_hand
from gmtool.engine.ranking import Stud5Ranking
from gmtool.house import demo as demo_setup, gm_ops
from gmtool.house.host import HostOptions, prepare_host
from gmtool.house.notary import Notary
from gmtool.house.recorder import Recorder
from gmtool.house.seeds import hand_seed, keep_demo_key
from gmtool.store import configs, ledger, tables as table_store

SEED = "engine-3"
KEY = hashlib.sha256(SEED.encode()).digest()  # what `--seed engine-3` makes the host key


def config_of(store, profile, tier):
    return configs.load_config(store, configs.active_config_id(store, profile, tier))


def play_hand(store, table_id, profile, tier, players, script):
    """One hand on a table of its own, driven by `script(hand, step)` -> next Action."""
    config = config_of(store, profile, tier)
    table_store.open_table(store, table_id, profile, tier, config["game"], 0)
    recorder = Recorder(store, table_id)
    seed = hand_seed(KEY, table_id, 1)
    seats = [Seat(p, ledger.coins(store, p)) for p in players]
    hand = start_hand(config, tier, seats, players[0], seeded_source(config, seed))
    recorder.record(hand.events, seed=seed, number=1)
    step = 0
    while not hand.is_over:
        before = len(hand.events)
        hand.apply(script(hand, step))
        step += 1
        recorder.record(hand.events[before:])
    table_store.stop_table(store, table_id)
    return hand


def _verbs(hand):
    return {entry.verb: entry for entry in hand.legal_actions()}


def window_from_the_turn(hand, step):
    """S18: the next player disconnects while the banker is to act; the banker takes 10 s,
    then the disconnected player is waited for 171 s more (181 s after the disconnect)."""
    if step == 0:
        return Action("disconnect", hand.next_live(hand.to_act))
    if step == 1:
        return Action("wait", amount=10)
    if step == 2:
        return Action("check", hand.to_act)
    if step == 3:
        return Action("wait", amount=171)
    if step == 4:
        return Action("reconnect", hand.to_act)
    legal = _verbs(hand)
    return Action("check" if "check" in legal else "call", hand.to_act)


def to_the_hand_cap(hand, step):
    """S14: bet the street's cap and call, so every total reaches the hand cap on street 4."""
    legal = _verbs(hand)
    if "bet" in legal:
        return Action("bet", hand.to_act, amount=legal["bet"].max_amount)
    return Action("call" if "call" in legal else "check", hand.to_act)


def three_card_minimum(hand, step):
    """Follow the least amount for two rounds, then open or pass."""
    legal = _verbs(hand)
    if "open" in legal:
        return Action("open", hand.to_act)
    if "follow" in legal and hand.round <= 2:
        return Action("follow", hand.to_act, amount=legal["follow"].min_amount)
    return Action("pass", hand.to_act)


def showing_key_000(ranking, cards):
    """Who speaks first under seed 000's policy as engine 4 reads S7: high card compares
    every face-up rank, then the top card's suit; other categories as engine 3."""
    category = ranking._showing_value(cards)[0]
    if category != "high_card":
        return (1, ranking.showing_key(cards))
    ordered = sorted(cards, key=lambda c: (-c.rank, c.suit))
    return (0, tuple(c.rank for c in ordered), -ordered[0].suit)


def drive_owner_table(config, table_id, players, store, ante, moves=()):
    """Owner sets `ante`, the other agrees; `moves` are played first, then both bet the
    least or call to the end."""
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
    for action in [Action("ante", players[0], amount=ante), Action("agree", players[1]),
                   Action("start", players[0])]:
        record(table.apply(action))
    hand = table.hand
    pending = list(moves)
    while not hand.is_over:
        if pending:
            verb, amount = pending.pop(0)
            record(table.apply(Action(verb, hand.to_act, amount=amount)))
            continue
        legal = _verbs(hand)
        if "call" in legal:
            action = Action("call", hand.to_act)
        else:
            action = Action("bet", hand.to_act, amount=legal["bet"].min_amount)
        record(table.apply(action))
    if store is not None:
        table_store.stop_table(store, table_id)
    return table


def showing_tie_hand(store, players):
    """A lequ hand whose first speaker engine 3 picks by the top card's suit where seed
    000's policy compares the next rank (S7, corrected 2026-12-02)."""
    config = config_of(store, "lequ-showhand", "table")
    ranking = Stud5Ranking(deck_for(config), config["ranking"]["categories"], "ranks_then_suit")
    for attempt in range(1, 5000):
        table_id = f"lequ-showhand-showing-{attempt}"
        hand = drive_owner_table(config, table_id, players, None, 1).hand
        for event in hand.events:
            if event.type != "first_speaker" or event.fields["street"] < 3:
                continue
            street = event.fields["street"]
            shown = {name: p.cards[1:street] for name, p in hand.players.items()}
            best = max(shown, key=lambda name: showing_key_000(ranking, shown[name]))
            if best != event.fields["player"]:
                return drive_owner_table(config, table_id, players, store, 1)
    raise SystemExit("no showing-card tie found")


def main(out: Path) -> None:
    if out.exists():
        raise SystemExit(f"{out} exists")
    store = demo_setup.fresh_store(out)
    keep_demo_key(out, SEED)
    olga = demo_setup.demo_operator(store, "olga")
    demo_setup.deploy_shipped(store, olga)
    plan = demo_setup.demo_table_plan(store)
    host = prepare_host(store, HostOptions(tables=len(plan), speed=400, hands=150, chaos=0.2,
                                           seed=SEED, grace=2.0), plan=plan)
    asyncio.run(host.run())
    gm_ops.adjust(store, olga, "bot-001", 500, "goodwill after a disconnect")
    rich = [row["name"] for row in store.all(
        "SELECT name FROM players WHERE coins >= 50000 ORDER BY name")]
    play_hand(store, "qq-showhand-junior-window", "qq-showhand", "junior", rich[0:3],
              window_from_the_turn)
    play_hand(store, "qq-showhand-junior-cap", "qq-showhand", "junior", rich[3:5],
              to_the_hand_cap)
    showing_tie_hand(store, rich[5:7])
    config = config_of(store, "lequ-showhand", "table")
    # L10: at an ante of 10 a raise of the call plus 1 coin, and the opener raising again
    drive_owner_table(config, "lequ-showhand-chips", rich[7:9], store, 10,
                      moves=[("bet", 10), ("raise", 11), ("raise", 6)])
    poor = rich[9]
    gm_ops.adjust(store, olga, poor, 12 - ledger.coins(store, poor), "a player with 12 coins")
    play_hand(store, "suihua-three-card-chips-5-poor", "suihua-three-card", "chips-5",
              [poor, *rich[10:12]], three_card_minimum)
    play_hand(store, "suihua-three-card-chips-10-first", "suihua-three-card", "chips-10",
              rich[12:15], three_card_minimum)
    Notary(store).sign()
    store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()


if __name__ == "__main__":
    main(Path(sys.argv[1]))
