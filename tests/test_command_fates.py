"""A GM command has exactly one fate (issue 14): a command the console withdrew is never
carried out, even if a host had already picked it up; a command a host took is never
reported to the GM as withdrawn."""

from __future__ import annotations

from pathlib import Path

from gmtool.store import gm as gm_store

OPERATOR = "boss"


def _hosting(tmp_path: Path, gm, virtual_host):
    """A host playing two tables, and (table, player) of a running hand."""
    db = tmp_path / "fates.db"
    gm.deploy_all(db)
    gm.add_roles(db)
    host = virtual_host(db, tables=2, seed="fates")
    return host, host.run_until(host.running_players, what="a running hand")[0]


def test_a_withdrawn_command_is_never_carried_out(tmp_path: Path, gm, virtual_host) -> None:
    host, (table_id, player) = _hosting(tmp_path, gm, virtual_host)
    store = host.store
    command_id = gm_store.enqueue(store, "kick", table_id, player, "late kick", OPERATOR)
    command = gm_store.command(store, command_id)
    table = host.host.tables[table_id]
    # The host has picked the command up (it is in the table's queue) when the console,
    # tired of waiting, withdraws it; the table then reaches its queue.
    table.commands.put_nowait(command)
    assert gm_store.expire(store, command_id) is True
    table.wake.set()
    host.advance(2)
    assert gm_store.command(store, command_id)["status"] == "expired"
    assert gm_store.command(store, command_id)["outcome"] is None
    assert player in host.host.tables[table_id].seated  # still there: not kicked


def test_a_taken_command_is_not_withdrawn(tmp_path: Path, gm, virtual_host) -> None:
    host, (table_id, player) = _hosting(tmp_path, gm, virtual_host)
    store = host.store
    command_id = gm_store.enqueue(store, "kick", table_id, player, "taken", OPERATOR)
    assert gm_store.claim(store, command_id) is True  # a host took it
    assert gm_store.expire(store, command_id) is False  # the console may not withdraw it
    assert gm_store.command(store, command_id)["status"] == "taken"
    assert gm_store.claim(store, command_id) is False  # and no second host takes it again
