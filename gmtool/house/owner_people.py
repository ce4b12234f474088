"""People at owner-ante tables (seed 000, RULES L1-L8) through the gateway.

Between hands an owner-ante table is a conversation, not a hand: the owner sets the ante
(L2), the others agree or reject it (L3), the owner starts (L5), and after a hand everyone
presses start again or leaves (L6). A person takes part with `act ante/agree/reject`,
`start` and `leave`; the engine's OwnerTable alone judges each (an IllegalAction names
the rule). The table's driver (owner_host.py) decides only for its bots, and keeps the
owner's and the players' clocks (L4, L5, L6) for people as it does for bots: it tells the
engine how much time passed while a person has to decide.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gmtool.engine.events import Action

if TYPE_CHECKING:
    from gmtool.house.owner_host import OwnerAnteTable

BETWEEN_HANDS = ("ante", "agree", "reject")  # the act verbs of an owner-ante table's setup


def setup(table) -> dict | None:
    """An owner-ante table's state between hands, all of it public (who owns it, the ante,
    who agreed, who pressed start again); None for another kind of table."""
    from gmtool.house.owner_host import OwnerAnteTable

    state = table.state if isinstance(table, OwnerAnteTable) else None
    if state is None:
        return None
    return {
        "phase": state.phase,
        "owner": state.owner,
        "ante": state.ante,
        "seated": list(state.seated),
        "agreed": [name for name in state.seated if name in state.agreed],
        "ready": [name for name in state.seated if name in state.ready],
        "chips": list(table.config.owner_ante.chips),  # the owner's ante buttons (L2)
    }


def sit(table: OwnerAnteTable, player: str) -> None:
    """Seat `player` now (the first at an empty table is its owner, L1); during a hand they
    wait to sit until it ends. IllegalAction when the table has no seat (S8)."""
    table.sync_seats()
    if player in table.seated or player in table.joining:
        return
    if table.state is None or table.state.phase == "playing":
        table.joining.append(player)
        return
    table.join_person(player)
    table.publish()
    table.wake.set()


def act(table: OwnerAnteTable, player: str, action: Action) -> None:
    """An ante click, an agreement or a rejection, or a start (L2, L3, L5, L6)."""
    if table.state is None or player not in table.state.seated:
        from gmtool.engine.errors import IllegalAction

        raise IllegalAction("L3", player, "sits at no seat of this table")
    table.apply(action)
    table.sync_seats()
    table.publish()
    table.wake.set()


def leave(table: OwnerAnteTable, player: str) -> None:
    """`player` stands up: in a running hand an escape (L13), else the seat is freed (L1
    passes the table on when the owner leaves)."""
    if player in table.joining:
        table.joining.remove(player)
    if table.state is not None and player in table.state.seated:
        from gmtool.house import remote

        remote.sync_time(table, table.current_hand())
        table.apply(Action("leave", player))
    table.away.pop(player, None)
    table.sync_seats()
    table.publish()
    table.wake.set()
