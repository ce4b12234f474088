"""Issue 25's whole path on every game system of the seeds: several people over real
WebSocket connections play full hands beside the host's bots; one drops mid-hand and
resumes inside the window (S18: nothing missed, nothing twice), one drops and stays away
past it (S19: an escape), one is kicked (G2: 4003), the table is closed (everyone told),
and the audit of the store is clean. On both store backends (`deployed_store`,
tests/backends.py)."""

from __future__ import annotations

import json

import pytest
from backends import (  # noqa: F401
    Located,
    audit_clean,
    deployed_store_fixture,
    pg_server_fixture,
)
from gateway_people import hands_played, person, play_along

PLANS = {
    "qq-showhand": ("junior", "stud5"),
    "video-showhand": ("junior", "stud5"),
    "straight-flush": ("normal", "stud5"),
    "lequ-showhand": ("table", "stud5"),
    "suihua-three-card": ("chips-10", "three_card"),
}
COINS = 2_000_000


def truth(host, table_id: str, *kinds: str) -> list[tuple[str, str | None]]:
    """(type, player) of the table's recorded events, in order (of `kinds` only, if given:
    a condition checked at every step of play reads only those)."""
    only = f" AND type IN ({', '.join('?' * len(kinds))})" if kinds else ""
    rows = host.store.all(
        f"SELECT type, payload FROM events WHERE table_id = ?{only} ORDER BY seq",
        (table_id, *kinds),
    )
    return [(row["type"], json.loads(row["payload"]).get("player")) for row in rows]


def in_hand(table, name: str) -> bool:
    hand = table.current_hand()
    return (
        hand is not None
        and not hand.is_over
        and name in hand.players
        and not hand.players[name].folded
    )


@pytest.mark.parametrize("profile", sorted(PLANS))
def test_people_play_every_system_with_a_resume_an_escape_a_kick_and_a_close(
    gm, virtual_host, deployed_store: Located, profile: str
) -> None:
    tier, game = PLANS[profile]
    host = virtual_host(
        deployed_store,
        plan=[(profile, tier, game)],
        tables=1,
        seed=f"every-{profile}",
        listen="127.0.0.1:0",
    )
    host.run_until(lambda: host.host.gateway.url, what="the gateway listening")
    table = next(iter(host.host.tables.values()))
    people = {name: person(host, name, COINS) for name in ("ann", "bob", "cat")}

    def all_played(n: int):
        return lambda: all(hands_played(c, name) >= n for name, c in people.items())

    play_along(host, table, people, all_played(1))

    # S18: ann drops mid-hand and comes back inside the window
    play_along(host, table, people, lambda: in_hand(table, "ann"))
    ann = people["ann"]
    host.stepper.run(ann.close())
    last = ann.events()[-1][0]
    host.run_until(lambda: "ann" in table.away, what="the host to see ann's drop")
    host.advance(20)
    back = person(host, "ann", 0, resume={"table": table.id, "seq": last})
    people["ann"] = back
    play_along(host, table, people, lambda: hands_played(back, "ann") >= 1)
    seqs = [seq for seq, _ in back.events()]
    assert seqs[0] == last + 1 and seqs == list(range(last + 1, last + 1 + len(seqs)))
    assert ("reconnect", "ann") in truth(host, table.id)

    # S19: bob drops mid-hand and stays away past the window
    play_along(host, table, people, lambda: in_hand(table, "bob"))
    bob = people.pop("bob")
    host.stepper.run(bob.close())
    play_along(
        host,
        table,
        people,
        lambda: any(who == "bob" for _, who in truth(host, table.id, "window_expired", "escape")),
        steps=20_000,
    )

    # G2: cat is kicked; then the table is closed
    cat = people.pop("cat")
    play_along(host, table, people, lambda: "cat" in table.seated)
    host.command("boss", "kick", table.id, "cat", "test: kicked")
    host.run_until(lambda: cat.closed, what="cat's socket closing")
    assert cat.close_code == 4003 and cat.of("kicked")
    host.command("boss", "close", table.id, None, "test: closing")
    host.run_until(lambda: back.of("closed"), what="ann told of the close")

    for client in (ann, back, bob, cat):
        assert client.invalid == []
    host.stop()
    host.stepper.run(back.close())
    host.close()
    audit_clean(gm, deployed_store)
