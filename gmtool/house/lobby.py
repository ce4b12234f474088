"""The gateway's lobby (docs/protocol.md): every table a live host plays, by room, each
with the host that serves it and the address players reach that host at.

This host's tables come from its own (`here`: `sit` is for those); on a store several
hosts share, the other hosts' come from the store: the tables whose lease a live host
holds, and the address that host published (store/host_addresses.py). A client that
wants another host's table connects to its address and sits there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gmtool.engine.errors import SetupError
from gmtool.engine.seating import coins_to_sit
from gmtool.store import host_addresses
from gmtool.store.errors import StoreError

if TYPE_CHECKING:
    from gmtool.house.host import Host


def rooms(host: Host, name: str, url: str) -> list[dict[str, Any]]:
    """The lobby's rooms: a profile's tier, what it takes to sit and its tables, each
    with `host`, `address` (None: a host without a gateway) and `here`. `name` and `url`
    are this host's."""
    listed = [
        (table.id, table.profile_id, table.tier, table.game, name, url or None)
        + (len(table.seated), True)
        for table in host.tables.values()
        if not table.closed
    ]
    if host.ownership is not None:
        listed.extend(
            (t.table_id, t.profile, t.tier, t.game, t.host, t.address, t.seated, False)
            for t in host_addresses.served(host.store)
            if t.host != name
        )
    by_room: dict[tuple[str, str], dict[str, Any]] = {}
    for table_id, profile, tier, game, served_by, address, seated, here in listed:
        room = by_room.get((profile, tier))
        if room is None:
            room = _room(host, profile, tier, game)
            if room is None:
                continue  # another host's room with no active deployment now
            by_room[(profile, tier)] = room
        table = {"table": table_id, "seated": seated, "host": served_by, "address": address}
        room["tables"].append({**table, "here": here})
    return list(by_room.values())


def _room(host: Host, profile: str, tier: str, game: str) -> dict[str, Any] | None:
    """A room of the lobby with no table in it yet (None: it has no active config)."""
    try:
        config = host.room(profile, tier).config
    except StoreError:
        return None
    try:
        need: int | None = coins_to_sit(config, tier)
    except SetupError:
        need = None  # an owner-ante table: the owner's ante decides (L7)
    return {
        "profile": profile,
        "tier": tier,
        "game": game,
        "coins_to_sit": need,
        "seats": config.table.seats,
        "tables": [],
    }
