"""Forged GM actions that the log records faithfully (issue 14): whoever can write the
store can append to its evidence log through gmtool's own store functions, so the log
alone cannot tell such an action from a real one. Only the GM's signature can: audit
checks every action that did something against the keys and roles the log held at the
time. Each of these passed `gmtool audit` before GM keys (an action was whoever's name
it carried), and each is reported as `gm_signature` or `gm_command` now.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from backends import Audited, audited_fixture, pg_server_fixture  # noqa: F401
from helpers import gm_identity, public_key

from gmtool.evidence import records
from gmtool.evidence import request as requests
from gmtool.store import gm as gm_store
from gmtool.store import ledger, log_append
from gmtool.store.db import Store, connect

OPERATOR = "boss"


def _sign(store: Store, by: str, action: str, target: str, reason: str | None, args: dict) -> str:
    return requests.make(
        gm_identity(by), log_append.store_id(store), action, target, reason, args, store.now()
    )


def _adjust(store: Store, actor: str, request: str | None, delta: int = 777) -> None:
    """An adjustment of bot-001 written as gmtool writes one: action, ledger row, balance."""
    coins = ledger.coins_or_none(store, "bot-001")
    action = gm_store.log_action(
        store,
        actor,
        "adjust",
        "bot-001",
        "forged",
        {"ok": True, "coins_before": coins, "coins": coins + delta, "delta": delta},
        request,
    )
    ledger.post(store, [("bot-001", delta, "gm_adjust")], gm_action_id=action)


def adjustment_signed_by_an_unregistered_key(store: Store) -> str:
    _adjust(
        store,
        OPERATOR,
        _sign(store, "mallory", "adjust", "bot-001", "forged", {"delta": 777}).replace(
            "mallory", OPERATOR, 1
        ),
    )
    return "gm_signature"


def adjustment_without_a_request(store: Store) -> str:
    _adjust(store, OPERATOR, None)
    return "gm_signature"


def adjustment_in_a_supports_name(store: Store) -> str:
    _adjust(store, "sue", _sign(store, "sue", "adjust", "bot-001", "forged", {"delta": 777}))
    return "gm_signature"


def adjustment_for_more_than_was_signed(store: Store) -> str:
    _adjust(
        store,
        OPERATOR,
        _sign(store, OPERATOR, "adjust", "bot-001", "forged", {"delta": 1}),
        delta=777,
    )
    return "gm_signature"


def replayed_adjustment(store: Store) -> str:
    """The operator's real request for the fixture's adjustment, used again."""
    old = store.one(
        "SELECT request, reason, outcome FROM gm_actions WHERE action = 'adjust' "
        "AND request IS NOT NULL ORDER BY id DESC LIMIT 1"
    )
    delta = json.loads(old["outcome"])["delta"]
    coins = ledger.coins_or_none(store, "bot-002")
    action = gm_store.log_action(
        store,
        OPERATOR,
        "adjust",
        "bot-002",
        old["reason"],
        {"ok": True, "coins_before": coins, "coins": coins + delta, "delta": delta},
        old["request"],
    )
    ledger.post(store, [("bot-002", delta, "gm_adjust")], gm_action_id=action)
    return "gm_signature"


def self_made_operator_logged(store: Store) -> str:
    key = public_key("mallory")
    request = _sign(
        store, "mallory", "users_add", "mallory", None, {"role": "operator", "key": key}
    )
    gm_store.add_user(store, "mallory", "operator", key)
    gm_store.log_action(
        store,
        "mallory",
        "users_add",
        "mallory",
        None,
        {"ok": True, "role": "operator", "key": key},
        request,
    )
    return "gm_signature"


def second_bootstrap(store: Store) -> str:
    key = public_key("mallory")
    args = {"role": "operator", "key": key, "bootstrap": True}
    request = _sign(store, "mallory", "users_add", "mallory", None, args)
    gm_store.add_user(store, "mallory", "operator", key)
    gm_store.log_action(
        store, "mallory", "users_add", "mallory", None, {"ok": True, **args}, request
    )
    return "gm_signature"


def operator_key_swapped(store: Store) -> str:
    """The operator's registered key replaced by mallory's, with no signed request."""
    store.conn.execute(
        "UPDATE gm_users SET key = ? WHERE name = ?", (public_key("mallory"), OPERATOR)
    )
    log_append.append_row(store, records.gm_user_body, "gm_users", "name", OPERATOR)
    return "gm_signature"


def forged_command_request(store: Store) -> str:
    table = store.one("SELECT id FROM tables ORDER BY id LIMIT 1")["id"]
    request = _sign(store, "mallory", "close", table, "forged", {})
    store.conn.execute(
        "INSERT INTO gm_commands (kind, table_id, player, reason, issued_by, "
        "issued_at, status, request) VALUES ('close', ?, NULL, 'forged', ?, ?, "
        "'pending', ?)",
        (table, OPERATOR, store.now(), request),
    )
    log_append.append_row(
        store,
        records.gm_request_body,
        "gm_commands",
        "id",
        store.one("SELECT MAX(id) FROM gm_commands")[0],
    )
    return "gm_signature"


def revived_stale_command(store: Store) -> str:
    """A command whose fate is logged, made pending again (a host would carry it out)."""
    store.conn.execute(
        "UPDATE gm_commands SET status = 'pending' WHERE id = (SELECT MIN(id) FROM gm_commands)"
    )
    return "gm_command"


def kick_with_no_command(store: Store) -> str:
    """A logged kick that says it was done, pointing at a command that does not exist."""
    gm_store.log_action(
        store,
        OPERATOR,
        "kick",
        "t/bot-001",
        "forged",
        {"ok": True, "kicked": "bot-001", "command": 999_999},
    )
    return "gm_signature"


FORGERIES: dict[str, Callable[[Store], str]] = {
    f.__name__: f
    for f in (
        adjustment_signed_by_an_unregistered_key,
        adjustment_without_a_request,
        adjustment_in_a_supports_name,
        adjustment_for_more_than_was_signed,
        replayed_adjustment,
        self_made_operator_logged,
        second_bootstrap,
        operator_key_swapped,
        forged_command_request,
        revived_stale_command,
        kick_with_no_command,
    )
}


@pytest.mark.parametrize("name", list(FORGERIES))
def test_audit_finds_a_forged_gm_action_the_log_recorded(
    host_copy: Path, gm, name: str, audited: Audited
) -> None:
    """On both backends (the PostgreSQL store: a copy of the forged rows)."""
    gm("audit", "--db", host_copy)  # clean before
    with connect(host_copy) as store, store.write():
        kind = FORGERIES[name](store)
    where = audited.args(host_copy)
    assert where is not None
    run = gm("audit", *where, "--json", expect=None)
    problems = json.loads(run.stdout)["problems"]
    assert run.returncode == 1, f"audit did not notice {name}"
    assert kind in {p["kind"] for p in problems}, problems


def test_a_revived_command_is_not_carried_out_again(host_copy: Path, virtual_host) -> None:
    """The stale command: a command made pending again by hand after its fate was logged
    is never redone by the next host."""
    with connect(host_copy) as store, store.write():
        revived_stale_command(store)
        command = store.one("SELECT id FROM gm_commands WHERE status = 'pending'")["id"]
    host = virtual_host(host_copy, tables=2, seed="s")  # the session store's seed: its key
    host.advance(5)
    with connect(host_copy) as store:
        assert (
            store.one("SELECT status FROM gm_commands WHERE id = ?", (command,))[0] == "pending"
        )  # not taken
        assert (
            store.one(
                "SELECT COUNT(*) FROM gm_actions WHERE json_extract(outcome, '$.command') = ?",
                (command,),
            )[0]
            == 1
        )  # no second fate
