"""People at an owner-ante table (seed 000, RULES L1-L8) over real sockets: a person
agrees to a bot owner's ante and plays; the bot owner kicked, the table passes to the
person (L1), who sets the ante, is agreed to by a second person, starts and plays; an owner
who lets the 10 s pass is removed (L4). The engine judges every click; the audit of the
store is clean. Clients: tests/gateway_clients.py; host: tests/hosting.py (virtual time), on
both store backends (`deployed_store`, tests/backends.py)."""

from __future__ import annotations

import pytest
from backends import (  # noqa: F401
    Located,
    audit_clean,
    deployed_store_fixture,
    pg_server_fixture,
)
from gateway_people import hands_played, play_along, send
from gateway_people import person as connected

PLAN = [("lequ-showhand", "table", "stud5")]
GRANT = 200_000  # an ante of 1 to 1,000 (L2: at most 1/200 of the owner's coins)
# The owner rules' timers and refusals (L4, an illegal click) are the table's and the
# engine's: they run on SQLite alone (CI's time); the play with its audit runs on both.
SQLITE_ONLY = pytest.mark.parametrize("deployed_store", ["sqlite"], indirect=True)


def person(host, name: str):
    return connected(host, name, GRANT)


@pytest.fixture
def lequ(virtual_host, deployed_store: Located):
    """A host with one lequ owner-ante table, one bot, and its gateway on loopback."""
    host = virtual_host(
        deployed_store,
        plan=PLAN,
        tables=1,
        seed="oa",
        listen="127.0.0.1:0",
        grace=600.0,
        bots=1,
    )
    host.run_until(lambda: host.host.gateway.url, what="the gateway listening")
    return host


def test_L1_L3_L5_people_agree_set_the_ante_start_and_play_and_the_audit_is_clean(
    gm, lequ, deployed_store: Located
) -> None:
    table = next(iter(lequ.host.tables.values()))
    lequ.run_until(lambda: table.state is not None and table.state.owner, what="a bot owner")
    bot = table.state.owner
    ann = person(lequ, "ann")
    play_along(lequ, table, {"ann": ann}, lambda: hands_played(ann, "ann") >= 1)
    assert any(e["type"] == "agree" and e["player"] == "ann" for _, e in ann.events())
    assert ann.of("your_turn"), "ann was asked to act in the hand"

    lequ.run_until(lambda: table.state.phase != "playing", what="between hands")
    lequ.command("boss", "kick", table.id, bot, "test: the owner leaves")
    lequ.run_until(lambda: table.state.owner == "ann", what="ann the owner (L1)")
    bob = person(lequ, "bob")
    people = {"ann": ann, "bob": bob}
    play_along(lequ, table, people, lambda: hands_played(bob, "bob") >= 1)
    kinds = [(e["type"], e.get("player")) for _, e in ann.events()]
    assert ("owner", "ann") in kinds and ("ante_set", "ann") in kinds
    assert ("agree", "bob") in kinds
    for client in people.values():
        assert client.invalid == []
        assert not [e for e in client.of("error") if e["error"] != "illegal"]
    lequ.stop()
    for client in people.values():
        lequ.stepper.run(client.close())
    lequ.close()
    audit_clean(gm, deployed_store)


@SQLITE_ONLY
def test_L4_a_person_owner_who_lets_the_ten_seconds_pass_is_removed(lequ) -> None:
    table = next(iter(lequ.host.tables.values()))
    lequ.run_until(lambda: table.state is not None and table.state.owner, what="a bot owner")
    lequ.run_until(lambda: table.state.phase != "playing", what="between hands")
    lequ.command("boss", "kick", table.id, table.state.owner, "test: the owner leaves")
    lequ.run_until(lambda: not table.state.seated, what="an empty table")
    ann = person(lequ, "ann")
    send(lequ, ann, {"type": "sit", "table": table.id})
    lequ.run_until(lambda: table.state.owner == "ann", what="ann the owner (L1)")
    lequ.run_until(lambda: "ann" not in table.state.seated, what="the L4 timeout", within=60)
    removed = [e for _, e in ann.events() if e.get("player") == "ann" and e.get("rule") == "L4"]
    assert removed, [e for _, e in ann.events()][-5:]


@SQLITE_ONLY
def test_an_illegal_click_gets_the_rule_and_changes_nothing(lequ) -> None:
    table = next(iter(lequ.host.tables.values()))
    lequ.run_until(
        lambda: table.state is not None and table.state.phase in ("agreeing", "countdown"),
        what="an ante to agree to",
    )
    ann = person(lequ, "ann")
    send(lequ, ann, {"type": "act", "table": table.id, "verb": "ante", "amount": 1})
    lequ.run_until(lambda: ann.of("error"), what="the refusal")
    error = ann.of("error")[0]
    assert error["error"] == "illegal" and error["rule"].startswith(("L", "S"))
    send(lequ, ann, {"type": "start", "table": table.id})
    lequ.run_until(lambda: len(ann.of("error")) >= 2, what="the second refusal")
    assert ann.of("error")[1]["rule"].startswith(("L", "S"))
