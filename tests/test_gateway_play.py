"""The player gateway (issue 25): real `websockets` clients over loopback play at a real
host (in this process, on virtual time, tests/hosting.py) through `house run --listen`'s
endpoint; every frame they receive is checked against the published server schema. Each
test runs on both store backends (`deployed_store`, tests/backends.py)."""

from __future__ import annotations

import json
import re

import pytest
from backends import (  # noqa: F401
    Located,
    audit_clean,
    deployed_store_fixture,
    pg_server_fixture,
)
from gateway_clients import open_client
from helpers import gm_identity

from gmtool.errors import UsageError
from gmtool.ops.gm import adjust
from gmtool.ops.player_tokens import mint
from gmtool.store import log_append
from gmtool.store.db import files_of

TABLE_PLAN = [("qq-showhand", "junior", "stud5")]
GRANT = 200_000
# The tests of the gateway's own handling of a socket (turns, frames, limits, resumes from
# its memory) read and write nothing of the store's but what every hand does, which the
# suite's other tests play on both backends: they run on SQLite alone (CI's time).
SQLITE_ONLY = pytest.mark.parametrize("deployed_store", ["sqlite"], indirect=True)


@pytest.fixture
def played(virtual_host, deployed_store: Located):
    """A host with one QQ junior table and its gateway on a free loopback port."""
    host = virtual_host(
        deployed_store,
        plan=TABLE_PLAN,
        tables=1,
        seed="gw",
        listen="127.0.0.1:0",
        grace=600.0,
    )
    host.run_until(lambda: host.host.gateway.url, what="the gateway listening")
    return host


def token(host, player: str, ttl: int = 3600) -> str:
    return mint(host.store, gm_identity("boss"), player, ttl)["token"]


def join(host, player: str, coins: int = GRANT, auto: bool = True):
    """`player` connected (welcomed), granted coins by a GM, and asking to sit."""
    client = host.stepper.run(open_client(host.host.gateway.url, token(host, player), auto))
    host.run_until(lambda: client.of("welcome"), what=f"{player}'s welcome")
    if coins:
        adjust(host.store, gm_identity("boss"), player, coins, "test grant")
    table = next(iter(host.host.tables))
    host.stepper.run(client.send({"type": "sit", "table": table, "id": "s1"}))
    host.run_until(lambda: client.of("snapshot"), what=f"{player}'s snapshot")
    return client


def settled_hands(client) -> int:
    return sum(1 for _, event in client.events() if event["type"] == "settlement")


def test_a_remote_player_plays_full_hands_with_bots_and_the_audit_is_clean(
    gm, played, deployed_store: Located
) -> None:
    ann = join(played, "ann")
    played.run_until(lambda: settled_hands(ann) >= 2, what="two hands with ann", within=7200)
    assert ann.of("your_turn"), "ann was never asked to act"
    assert sum(e["type"] == "settlement" and "ann" in str(e) for _, e in ann.events()) >= 1
    seqs = [seq for seq, _ in ann.events()]
    assert seqs == sorted(set(seqs)), "events arrive numbered, in order, once"
    assert ann.invalid == []
    acted = [e["type"] for _, e in ann.events() if e.get("player") == "ann" and e["type"] != "ante"]
    assert len(acted) >= len(ann.of("your_turn")) - 1  # each turn answered (the last may run)
    played.stop()
    played.stepper.run(ann.close())
    played.close()
    audit_clean(gm, deployed_store)


def in_hand(host, player: str) -> bool:
    """`player` is dealt into the table's running hand and still in it."""
    table = next(iter(host.host.tables.values()))
    hand = table.current_hand()
    return (
        hand is not None
        and not hand.is_over
        and player in hand.players
        and not hand.players[player].folded
    )


@SQLITE_ONLY
def test_S12_an_act_out_of_turn_gets_the_rule_and_changes_nothing(played) -> None:
    ann = join(played, "ann", auto=False)
    table = next(iter(played.host.tables.values()))
    played.run_until(
        lambda: in_hand(played, "ann") and table.current_hand().to_act not in (None, "ann"),
        what="a hand where another player is to act",
    )
    hand = table.current_hand()
    before = len(hand.events)
    played.stepper.run(ann.send({"type": "act", "table": table.id, "verb": "check", "id": "x1"}))
    played.run_until(lambda: ann.of("error"), what="the refusal")
    error = ann.of("error")[0]
    assert (error["error"], error["rule"], error["id"]) == ("illegal", "S12", "x1")
    assert "turn" in error["message"]
    assert not [e for e in hand.events[before:] if e.get("player") == "ann"]
    assert ann.invalid == []


@SQLITE_ONLY
def test_H5_an_amount_the_caps_do_not_allow_gets_the_rule(played) -> None:
    ann = join(played, "ann", auto=False)
    played.run_until(lambda: ann.of("your_turn"), what="ann's turn")
    turn = ann.of("your_turn")[-1]
    bets = [legal for legal in turn["legal"] if legal["verb"] in ("bet", "raise")]
    assert bets, turn
    over = (bets[0].get("max") or max(bets[0].get("amounts", [1]))) + 1
    act = {"type": "act", "table": turn["table"], "verb": bets[0]["verb"], "amount": over}
    played.stepper.run(ann.send(act))
    played.run_until(lambda: ann.of("error"), what="the refusal")
    error = ann.of("error")[0]
    assert error["error"] == "illegal" and error["rule"][0] in "HQS", error
    assert ann.invalid == []


@SQLITE_ONLY
def test_S17_a_player_who_does_not_act_is_timed_out_on_the_host_clock(played) -> None:
    ann = join(played, "ann", auto=False)
    played.run_until(lambda: ann.of("your_turn"), what="ann's turn")
    started = played.now()
    played.run_until(
        lambda: any(e["type"] == "timeout" and e.get("player") == "ann" for _, e in ann.events()),
        what="ann's timeout",
    )
    action_s = next(iter(played.host.tables.values())).config.timeouts.action_s
    assert played.now() - started >= action_s - 1  # not before the clock ran out
    assert ann.of("your_turn")[0]["seconds"] == action_s


@SQLITE_ONLY
def test_S17_a_drop_and_a_resume_do_not_give_the_player_to_act_a_fresh_clock(played) -> None:
    """An outside probe dropped and resumed every 12 s of a 15 s turn and was told 15 s
    each time, holding the table for as long as it liked: the seconds used before a drop
    count against the turn's clock, so the turn ends."""
    table = next(iter(played.host.tables.values()))
    action_s = table.config.timeouts.action_s
    ann = join(played, "ann", auto=False)
    played.run_until(lambda: ann.of("your_turn"), what="ann's turn")
    hand = table.current_hand()
    client, told = ann, []
    for _ in range(action_s):  # more drops than the clock has seconds
        played.advance(action_s - 3)
        if hand.is_over or hand.players["ann"].folded:
            break
        seq = client.events()[-1][0]
        played.stepper.run(client.close())
        played.run_until(lambda: "ann" in table.away or hand.players["ann"].folded, what="the drop")
        if hand.players["ann"].folded:
            break
        client = back = played.stepper.run(
            open_client(
                played.host.gateway.url,
                token(played, "ann"),
                False,  # she never acts: she only drops and resumes
                resume={"table": table.id, "seq": seq},
            )
        )
        played.run_until(
            lambda back=back: back.of("your_turn") or hand.players["ann"].folded or hand.is_over,
            what="ann's turn again, or her timeout",
        )
        told += [turn["seconds"] for turn in back.of("your_turn")]
    kinds = [(e.type, e.get("player")) for e in hand.events]
    assert ("timeout", "ann") in kinds, (told, kinds[-6:])
    assert all(seconds < action_s for seconds in told), told


@pytest.mark.parametrize("why", ["expired", "audience", "unknown_key"])
def test_a_token_that_opens_nothing_here_is_closed_with_4001(played, why) -> None:
    from gmtool.gateway import tokens
    from gmtool.ops.player_tokens import key_path

    if why == "expired":
        text = token(played, "ann", ttl=60)
        played.advance(60 + tokens.LEEWAY_S + 5)
    elif why == "audience":  # this store's registered key, for another store
        token(played, "bob")  # (makes and registers the key beside the store)
        key = tokens.load_private_pem(key_path(files_of(played.store)).read_bytes())
        text = tokens.mint(key, "another-store-id", "ann", 3600, played.clock.wall())
    else:  # this store, a key nobody registered here
        store_id = log_append.store_id(played.store)
        text = tokens.mint(tokens.new_key(), store_id, "ann", 3600, played.clock.wall())
    client = played.stepper.run(open_client(played.host.gateway.url, text))
    played.run_until(lambda: client.closed, what="the close")
    assert (client.close_code, client.close_reason) == (4001, why)
    assert client.frames == []
    assert "ann" not in played.host.gateway.connections


@SQLITE_ONLY
def test_a_first_frame_that_is_not_a_hello_is_closed_with_4002(played) -> None:
    from websockets.asyncio.client import connect

    async def rude() -> tuple[int | None, str | None]:
        socket = await connect(played.host.gateway.url)
        await socket.send('{"type": "lobby"}')
        await socket.wait_closed()
        return socket.close_code, socket.close_reason

    assert played.stepper.run(rude()) == (4002, "hello first")


def true_events(host, table_id: str) -> list[dict]:
    """Every event the table recorded, whole, in order (the store's own copy)."""
    rows = host.store.all(
        "SELECT type, payload FROM events WHERE table_id = ? ORDER BY seq", (table_id,)
    )
    return [{"type": row["type"], **json.loads(row["payload"])} for row in rows]


def check_numbering(client_events: list[tuple[int, dict]], truth: list[dict]) -> None:
    """Each (seq, event) a client got is the table's event number seq, as recorded."""
    for seq, event in client_events:
        assert event["type"] == truth[seq - 1]["type"], (seq, event, truth[seq - 1])


def test_S18_a_drop_and_a_resume_inside_the_window_lose_no_event_and_repeat_none(
    gm, played, deployed_store: Located
) -> None:
    table = next(iter(played.host.tables.values()))
    ann = join(played, "ann")
    played.run_until(lambda: in_hand(played, "ann"), what="ann in a hand")
    played.run_until(lambda: len(ann.events()) > 8, what="a few events")
    played.stepper.run(ann.close())  # the socket drops mid-hand
    last = ann.events()[-1][0]
    hand = table.current_hand()
    played.run_until(lambda: "ann" in table.away, what="the host to see the drop")
    assert not hand.players["ann"].connected
    played.advance(60)  # a minute of the three-minute window (S18)
    missed_meanwhile = played.host.gateway.feeds[table.id].seq - last
    back = played.stepper.run(
        open_client(
            played.host.gateway.url, token(played, "ann"), resume={"table": table.id, "seq": last}
        )
    )
    played.run_until(lambda: settled_hands(back) >= 1, what="the hand's end after the resume")
    before, after = [s for s, _ in ann.events()], [s for s, _ in back.events()]
    assert after[0] == last + 1, "the first event after the resume is the first one missed"
    assert after == list(range(last + 1, last + 1 + len(after))), "none lost, none twice"
    assert not set(before) & set(after)
    assert missed_meanwhile > 0  # (its own disconnect at least)
    truth = true_events(played, table.id)
    check_numbering(ann.events() + back.events(), truth)
    kinds = [(e["type"], e.get("player")) for e in truth]
    assert ("disconnect", "ann") in kinds and ("reconnect", "ann") in kinds
    assert ("window_expired", "ann") not in kinds
    assert back.invalid == [] and ann.invalid == []
    played.stop()
    played.stepper.run(back.close())
    played.close()
    audit_clean(gm, deployed_store)


def test_S19_past_the_window_a_dropped_player_has_escaped(
    gm, played, deployed_store: Located
) -> None:
    table = next(iter(played.host.tables.values()))
    ann = join(played, "ann")
    played.run_until(lambda: in_hand(played, "ann"), what="ann in a hand")
    hand = table.current_hand()
    played.stepper.run(ann.close())
    window = table.config.timeouts.reconnect_min * 60
    dropped = played.now()
    played.run_until(lambda: hand.is_over, what="the hand's end", within=2 * window)
    kinds = [(e.type, e.get("player")) for e in hand.events]
    assert ("disconnect", "ann") in kinds
    assert ("window_expired", "ann") in kinds  # her turn came: the table waited the window
    assert played.now() - dropped > window
    assert hand.players["ann"].escaped
    played.run_until(lambda: "ann" not in table.seated, what="ann standing up")
    played.stop()
    played.close()
    audit_clean(gm, deployed_store)


def forbidden_by_seq(truth: list[dict], viewer: str | None) -> list[set[str]]:
    """For each event number (index seq - 1): the codes of other players' face-down cards
    no showdown (nor a buy the viewer was in, H7) had shown by then (RULES G3)."""
    out: list[set[str]] = []
    down: dict[str, str] = {}  # code -> owner, this hand
    shown: set[str] = set()
    for event in truth:
        if event["type"] == "hand_started":
            down, shown = {}, set()
        for card in event.get("cards", []) if event["type"] == "deal" else []:
            if card.get("face") != "up":
                down[card["card"]] = card["player"]
        if event["type"] == "showdown" or (
            event["type"] == "buy_result" and viewer in (event.get("buyer"), event.get("target"))
        ):
            shown |= {code for h in event.get("hands", []) for code in h.get("cards", [])}
        out.append({code for code, owner in down.items() if owner != viewer} - shown)
    return out


@pytest.mark.parametrize(
    "plan",
    [[("qq-showhand", "junior", "stud5")], [("suihua-three-card", "chips-10", "three_card")]],
)
def test_G3_no_frame_to_any_connection_holds_a_card_it_may_not_see(
    virtual_host, deployed_store: Located, plan
) -> None:
    host = virtual_host(
        deployed_store,
        plan=plan,
        tables=1,
        seed="g3",
        listen="127.0.0.1:0",
    )
    host.run_until(lambda: host.host.gateway.url, what="the gateway listening")
    players = {name: join(host, name, coins=2_000_000) for name in ("ann", "bob", "cat")}
    table = next(iter(host.host.tables.values()))
    dan = host.stepper.run(open_client(host.host.gateway.url, token(host, "dan")))
    host.stepper.run(dan.send({"type": "look", "table": table.id}))
    clients = {**players, None: dan}
    host.run_until(
        lambda: (
            sum(settled_hands(c) for c in players.values()) >= 9
            and all(settled_hands(c) >= 2 for c in players.values())
        ),
        what="hands with the three players",
        within=20_000,
    )
    truth = true_events(host, table.id)
    assert any(e["type"] == "showdown" for e in truth), "no showdown: nothing tested at it"
    people = {e.get("player") for e in truth}
    assert {"ann", "bob", "cat"} <= people
    for viewer, client in clients.items():
        check_numbering(client.events(), truth)
        forbidden = forbidden_by_seq(truth, viewer)
        assert client.invalid == []
        checked = 0
        for frame in client.frames:
            if frame["type"] not in ("event", "snapshot", "your_turn"):
                continue
            text = json.dumps(frame)
            for code in forbidden[frame["seq"] - 1] if frame["seq"] else ():
                assert f'"{code}"' not in text, (viewer, code, frame)
                checked += 1
        assert checked > 0, viewer


def test_G2_a_kicked_player_is_told_and_their_socket_closes_with_4003(played) -> None:
    table = next(iter(played.host.tables.values()))
    ann = join(played, "ann")
    played.run_until(lambda: in_hand(played, "ann"), what="ann in a hand")
    outcome = played.command("boss", "kick", table.id, "ann", "test: abusive chat")
    assert outcome["kicked"] == "ann" and outcome["during_hand"]
    played.run_until(lambda: ann.closed, what="ann's socket closing")
    assert ann.of("kicked") == [
        {"type": "kicked", "table": table.id, "reason": "test: abusive chat"}
    ]
    assert ann.close_code == 4003
    assert "ann" not in table.seated
    again = played.stepper.run(open_client(played.host.gateway.url, token(played, "ann")))
    played.stepper.run(again.send({"type": "sit", "table": table.id}))
    played.run_until(lambda: again.of("error"), what="the refusal")
    assert again.of("error")[0]["error"] == "kicked"  # sits out the host's run, as a bot does


def _service_token(host, player: str) -> str:
    """A token a login service would mint with the store's registered key (the console's
    `players token` refuses a bot's account itself)."""
    from gmtool.gateway import tokens
    from gmtool.ops.player_tokens import key_path

    token(host, "ann")  # (makes and registers the key beside the store)
    key = tokens.load_private_pem(key_path(files_of(host.store)).read_bytes())
    store_id = log_append.store_id(host.store)
    return tokens.mint(key, store_id, player, 3600, host.clock.wall())


def test_a_token_for_one_of_the_hosts_bots_is_refused(played) -> None:
    text = _service_token(played, "bot-001")
    bot = played.stepper.run(open_client(played.host.gateway.url, text))
    played.run_until(lambda: bot.closed, what="the close")
    assert (bot.close_code, bot.close_reason) == (4001, "bot")
    with pytest.raises(UsageError, match="bot's account"):
        token(played, "bot-001")


@SQLITE_ONLY
def test_a_token_for_a_bot_an_earlier_run_enrolled_is_refused(played) -> None:
    """A bot the host's pool does not hold now (an earlier run had more --bots) is still a
    bot's account: a person playing it would play its coins (outside probe of 2026-12-05)."""
    from gmtool.store import ledger

    with played.store.write():
        ledger.ensure_player(played.store, "bot-999", "bot")
    assert "bot-999" not in played.host.pool.styles
    bot = played.stepper.run(
        open_client(played.host.gateway.url, _service_token(played, "bot-999"))
    )
    played.run_until(lambda: bot.closed, what="the close")
    assert (bot.close_code, bot.close_reason) == (4001, "bot")


def test_a_gm_close_tells_every_connection_at_the_table(played) -> None:
    table = next(iter(played.host.tables.values()))
    ann = join(played, "ann")
    dan = played.stepper.run(open_client(played.host.gateway.url, token(played, "dan")))
    played.stepper.run(dan.send({"type": "look", "table": table.id}))
    played.run_until(lambda: dan.of("snapshot"), what="dan's snapshot")
    played.command("boss", "close", table.id, None, "test: closing")
    for client in (ann, dan):
        played.run_until(lambda c=client: c.of("closed"), what="the closed frame")
        assert client.of("closed")[0]["table"] == table.id
    assert ann.invalid == [] and dan.invalid == []


@SQLITE_ONLY
def test_the_same_player_connecting_again_replaces_the_first_socket(played) -> None:
    table = next(iter(played.host.tables.values()))
    feed = played.host.gateway._feed(table.id)
    first = played.stepper.run(open_client(played.host.gateway.url, token(played, "ann")))
    played.stepper.run(first.send({"type": "look", "table": table.id}))
    played.run_until(lambda: first.of("snapshot"), what="the first snapshot")
    second = played.stepper.run(open_client(played.host.gateway.url, token(played, "ann")))
    played.stepper.run(second.send({"type": "look", "table": table.id}))
    played.run_until(lambda: first.closed and second.of("snapshot"), what="the replacement")
    assert first.close_code == 4004
    assert not second.closed
    played.run_until(lambda: len(feed.watchers) == 1, what="the first socket forgotten")
    assert [w.player for w in feed.watchers] == ["ann"]


@SQLITE_ONLY
def test_bad_frames_get_one_error_frame_each_and_the_connection_stays(played) -> None:
    ann = played.stepper.run(open_client(played.host.gateway.url, token(played, "ann")))
    played.run_until(lambda: ann.of("welcome"), what="the welcome")

    async def send_raw(text: str) -> None:
        await ann.socket.send(text)

    for text in ("not json", '{"type": "dance"}', "x" * 9000, '{"type": "act", "table": 1}'):
        played.stepper.run(send_raw(text))
    played.run_until(lambda: len(ann.of("error")) == 4, what="four error frames")
    assert [e["error"] for e in ann.of("error")] == ["malformed", "unknown", "too_big", "malformed"]
    played.stepper.run(ann.send({"type": "lobby", "id": "after"}))
    played.run_until(lambda: ann.of("lobby"), what="the lobby after the errors")
    assert not ann.closed and ann.invalid == []
    logged = [m for m in played.messages if m.startswith("gateway: a frame from ann refused")]
    assert len(logged) == 1 and "(malformed)" in logged[0]  # the first in words, once
    played.stepper.run(ann.close())
    played.run_until(
        lambda: any("ann's connection ended (4 frames refused)" in m for m in played.messages),
        what="the count in the host's output",
    )


@SQLITE_ONLY
def test_a_flood_is_told_once_then_closed_with_4007_and_the_table_plays_on(played) -> None:
    from gmtool.gateway.limits import BURST, FLOOD

    table = next(iter(played.host.tables.values()))
    bob = join(played, "bob")  # a player at the table beside the flood
    ann = played.stepper.run(open_client(played.host.gateway.url, token(played, "ann")))
    played.run_until(lambda: ann.of("welcome"), what="the welcome")

    async def flood() -> None:
        for n in range(BURST + FLOOD + 50):
            await ann.send({"type": "lobby", "id": f"f{n}"})

    played.stepper.run(flood())
    played.run_until(lambda: ann.closed, what="the flooding socket closed")
    assert (ann.close_code, ann.close_reason) == (4007, "too many frames")
    assert len(ann.of("lobby")) <= BURST + 5  # (the budget refills a little as time runs)
    assert [e["error"] for e in ann.of("error")][:1] == ["too_fast"]
    assert ann.invalid == []
    assert any("flooded the socket" in m for m in played.messages)
    seen = settled_hands(bob)
    played.run_until(lambda: settled_hands(bob) > seen, what="the table playing on")
    assert not bob.closed and table.id in played.host.tables


@SQLITE_ONLY
def test_a_burst_within_the_budget_is_all_carried_out(played) -> None:
    from gmtool.gateway.limits import BURST

    ann = played.stepper.run(open_client(played.host.gateway.url, token(played, "ann")))
    played.run_until(lambda: ann.of("welcome"), what="the welcome")

    async def burst() -> None:
        for n in range(BURST - 2):  # (the hello took one)
            await ann.send({"type": "lobby", "id": f"b{n}"})

    played.stepper.run(burst())
    played.run_until(lambda: len(ann.of("lobby")) == BURST - 2, what="every lobby answered")
    assert ann.of("error") == [] and not ann.closed


def test_a_token_with_an_id_opens_one_connection_a_replay_is_closed_with_4001(played) -> None:
    from gmtool.gateway import tokens
    from gmtool.ops.player_tokens import key_path

    token(played, "ann")  # (makes and registers the key beside the store)
    key = tokens.load_private_pem(key_path(files_of(played.store)).read_bytes())
    store_id = log_append.store_id(played.store)
    once = tokens.mint(key, store_id, "ann", 3600, played.clock.wall(), token_id="login-1")
    first = played.stepper.run(open_client(played.host.gateway.url, once))
    played.run_until(lambda: first.of("welcome"), what="the first use's welcome")
    again = played.stepper.run(open_client(played.host.gateway.url, once))
    played.run_until(lambda: again.closed, what="the replay's close")
    assert (again.close_code, again.close_reason) == (4001, "replayed")
    assert again.frames == [] and not first.closed  # the first connection stays
    assert any("replayed" in m for m in played.messages)
    plain = token(played, "ann")  # a token without an id may be used again (reconnects)
    for _ in range(2):
        client = played.stepper.run(open_client(played.host.gateway.url, plain))
        played.run_until(lambda c=client: c.of("welcome"), what="a welcome with a plain token")


@SQLITE_ONLY
def test_a_resume_from_before_the_kept_events_gets_a_snapshot(played) -> None:
    table = next(iter(played.host.tables.values()))
    ann = join(played, "ann")
    played.run_until(lambda: settled_hands(ann) >= 3, what="three hands", within=20_000)
    played.stepper.run(ann.close())
    back = played.stepper.run(
        open_client(
            played.host.gateway.url, token(played, "ann"), resume={"table": table.id, "seq": 1}
        )
    )
    played.run_until(lambda: back.of("snapshot"), what="the snapshot")
    first = back.frames[1]  # after the welcome: not the events from 2 on, which are gone
    assert first["type"] == "snapshot" and first["seq"] > 1
    assert all(seq > first["seq"] for seq, _ in back.events()[len(first["events"]) :])


@SQLITE_ONLY
def test_a_client_that_leaves_its_frames_unread_is_closed_not_waited_for(played) -> None:
    from gmtool.house.connection import MAX_QUEUE

    ann = played.stepper.run(open_client(played.host.gateway.url, token(played, "ann")))
    played.run_until(lambda: ann.of("welcome"), what="the welcome")
    server_side = played.host.gateway.connections["ann"]

    async def burst() -> None:  # frames queued faster than any writer drains them
        for _ in range(MAX_QUEUE + 1):
            server_side.send({"type": "closed", "reason": "filler"})

    played.stepper.run(burst())
    played.run_until(lambda: ann.closed, what="the slow client's close")
    assert ann.close_code == 4005
    table = next(iter(played.host.tables.values()))
    hands = table.hands_played
    played.run_until(lambda: table.hands_played > hands, what="the table playing on")


def test_tables_show_says_who_is_connected_and_who_is_away(
    gm, played, deployed_store: Located
) -> None:
    table = next(iter(played.host.tables.values()))
    ann = join(played, "ann")
    played.run_until(lambda: in_hand(played, "ann"), what="ann in a hand")
    shown = gm.json(
        "tables", "show", table.id, "--db", deployed_store.db, "--json", env=deployed_store.env()
    )
    (person,) = shown["people"]
    assert person["name"] == "ann" and person["connected_s"] is not None
    assert person["away_s"] is None
    played.stepper.run(ann.close())
    played.run_until(lambda: "ann" in table.away, what="the host to see the drop")
    played.advance(5)
    text = gm(
        "tables", "show", table.id, "--db", deployed_store.db, env=deployed_store.env()
    ).stdout
    assert "people: ann (away" in text and "reconnect window running" in text


def test_tables_list_and_players_show_say_who_is_connected_and_who_is_away(
    gm, played, deployed_store: Located
) -> None:
    table = next(iter(played.host.tables.values()))
    ann = join(played, "ann")
    played.run_until(lambda: in_hand(played, "ann"), what="ann in a hand")
    played.advance(3)
    (listed,) = [
        t
        for t in gm.json(
            "tables", "list", "--db", deployed_store.db, "--json", env=deployed_store.env()
        )
    ]
    assert [p["name"] for p in listed["people"]] == ["ann"]
    text = gm(
        "tables", "list", "--db", deployed_store.db, env=deployed_store.env(COLUMNS="250")
    ).stdout
    assert "people" in text and "1 on" in text
    shown = gm.json(
        "players", "show", "ann", "--db", deployed_store.db, "--json", env=deployed_store.env()
    )
    assert shown["connection"]["table"] == table.id
    assert shown["connection"]["connected_s"] >= 3 and shown["connection"]["away_s"] is None
    text = gm("players", "show", "ann", "--db", deployed_store.db, env=deployed_store.env()).stdout
    assert re.search(rf"^connection: connected \d+ s at {table.id}$", text, re.M), text
    played.stepper.run(ann.close())
    played.run_until(lambda: "ann" in table.away, what="the host to see the drop")
    played.advance(5)
    assert (
        "0 on, 1 away"
        in gm(
            "tables", "list", "--db", deployed_store.db, env=deployed_store.env(COLUMNS="250")
        ).stdout
    )
    text = gm("players", "show", "ann", "--db", deployed_store.db, env=deployed_store.env()).stdout
    line = rf"^connection: away \d+ s at {table.id} \(reconnect window running\)$"
    assert re.search(line, text, re.M), text
    away = gm.json(
        "players", "show", "ann", "--db", deployed_store.db, "--json", env=deployed_store.env()
    )["connection"]
    assert away["away_s"] is not None and away["connected_s"] is None
    bot = next(name for name in table.seated if name != "ann")
    assert (
        gm.json(
            "players", "show", bot, "--db", deployed_store.db, "--json", env=deployed_store.env()
        )["connection"]
        is None
    )


@SQLITE_ONLY
def test_refused_hellos_are_said_at_most_so_many_a_minute(played) -> None:
    """An outside probe's junk hellos, 8,450 in 10 s, were 8,450 lines of the host's
    output (24 MB: each repeated the attacker's 3 KB `alg`): at most `REFUSALS_SAID` a
    minute are said now, each short, and the number held back comes with the next."""
    import base64

    from gmtool.gateway.limits import REFUSAL_PERIOD_S, REFUSALS_SAID

    header = base64.urlsafe_b64encode(json.dumps({"alg": "A" * 3000}).encode()).rstrip(b"=")
    junk = header.decode() + ".e30.AAAA"

    def refusals() -> list[str]:
        return [m for m in played.messages if "a token refused" in m]

    for _ in range(3 * REFUSALS_SAID):
        client = played.stepper.run(open_client(played.host.gateway.url, junk))
        played.run_until(lambda client=client: client.closed, what="the close")
        assert (client.close_code, client.close_reason) == (4001, "algorithm")
    said = refusals()
    assert len(said) == REFUSALS_SAID and all(len(m) < 200 for m in said), said[:2]
    played.advance(REFUSAL_PERIOD_S)
    client = played.stepper.run(open_client(played.host.gateway.url, junk))
    played.run_until(lambda: client.closed, what="the close")
    assert f"({2 * REFUSALS_SAID} more refused hello(s) not shown before it)" in refusals()[-1]
