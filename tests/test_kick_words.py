"""Issue 23's leftover in `tables kick`: the result line says what became of the player's
stake and which rule and profile option decided it (G2, S19's escape_policy, D-9, S22),
for a kick under each policy. The host is the real one on virtual time (tests/hosting.py)."""

from __future__ import annotations

from pathlib import Path

from conftest import OPERATOR

from gmtool.cli.render_tables import command_lines
from gmtool.store import tables as table_store


def _in_hand(host, profile: str) -> list[tuple[str, str, int, int]]:
    """(table, player, chips they put in, hand) for players still in a running hand of
    `profile`'s coin rooms, just published (a command sent now lands in that hand)."""
    out = []
    for row in table_store.list_tables(host.store):
        live = row["live"] or {}
        running = live.get("running")
        if row["profile_id"] != profile or not running or running.get("over"):
            continue
        if "training" in row["id"] or host.clock.wall() - live["published_at"] > 0.5:
            continue
        players = [p for p in running["players"] if not p["folded"]]
        if len(players) >= 3:  # a fold leaves the others playing on
            out += [(row["id"], p["name"], p["total"], live["hand"]) for p in players]
    return out


def test_g2_s19_a_kick_under_policy_fold_says_what_the_player_forfeits(
    deployed_db: Path, virtual_host
) -> None:
    host = virtual_host(deployed_db, tables=4, systems=["lequ-showhand"], seed="kick-fold")
    table, player, total, hand = host.run_until(
        lambda: _in_hand(host, "lequ-showhand"), what="a lequ hand of three players or more"
    )[0]
    outcome = host.command(OPERATOR, "kick", table, player, "abuse")
    assert (outcome["during_hand"], outcome["escape_policy"], outcome["hand"]) == (
        True,
        "fold",
        hand,
    )
    assert outcome["stake"] >= total > 0
    (line,) = command_lines(outcome)
    assert line == (
        f"kicked {player} during hand {hand}: an escape (G2) under the profile's "
        f"escape_policy fold: {player} is folded and forfeits the {outcome['stake']:,} they "
        "had put in the pot (S19); the others play on"
    ), line
