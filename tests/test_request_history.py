"""Issue 24 point 2: a GM's signed request is bound to the history it was made on.

Copies of a store share its id, so before, adjustments an operator signed on a copy could
be appended to the original's tail (as gmtool writes them: GM actions, ledger rows, log
records) and `gmtool audit` exited 0, for one request (+3 coins) and for twenty. A request
now names the evidence log's size and root when it was signed (an adjustment's, inside
the transaction that logs it), and the audit holds it to this store's log: a request made
on another history is `gm_replay`, an action dated before its own request `gm_time`.
Everything here is real: real stores made by the host and the console, real copies of
their files, the operators' own keys.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import OPERATOR, copy_db
from helpers import gm_identity, public_key

from gmtool.evidence import request as requests
from gmtool.store import gm as gm_store
from gmtool.store import ledger, log_append, log_history
from gmtool.store.db import Store, connect

QQ = Path(__file__).resolve().parent.parent / "rules" / "qq-showhand.toml"


def _adjust_on(gm, db: Path, player: str, delta: int, reason: str = "goodwill") -> None:
    gm("players", "adjust", player, str(delta), "--reason", reason, "--db", db, "--as", OPERATOR)


def _signed_adjustments(db: Path, since: int) -> list[dict]:
    """The successful adjustments logged after GM action `since`, with their requests."""
    with connect(db, write=False) as store:
        return [
            dict(row)
            for row in store.all(
                "SELECT * FROM gm_actions WHERE action = 'adjust' AND id > ? AND "
                "json_extract(outcome, '$.ok') ORDER BY id",
                (since,),
            )
        ]


def _replay(store: Store, action: dict) -> None:
    """An adjustment written into the store as gmtool writes one (the chain's hash, the
    ledger row, the balance and the log records all made by gmtool's own functions), with
    the operator's genuine signed request from the other copy."""
    outcome = json.loads(action["outcome"])
    delta = outcome["delta"]
    coins = ledger.coins_or_none(store, action["target"])
    made = gm_store.log_action(
        store,
        action["actor"],
        "adjust",
        action["target"],
        action["reason"],
        {"ok": True, "coins_before": coins, "coins": coins + delta, "delta": delta},
        action["request"],
    )
    ledger.post(store, [(action["target"], delta, "gm_adjust")], gm_action_id=made)


def _last_action(db: Path) -> int:
    with connect(db, write=False) as store:
        return store.one("SELECT MAX(id) FROM gm_actions")[0]


def _audit(gm, db: Path, expect: int | None = None) -> list[dict]:
    run = gm("audit", "--db", db, "--json", expect=expect)
    return json.loads(run.stdout)["problems"]


@pytest.mark.parametrize("count", [1, 20])
def test_adjustments_signed_on_a_copy_fail_the_originals_audit(
    host_copy: Path, tmp_path: Path, gm, count: int
) -> None:
    """The attack of the issue: the operator adjusts on a copy (+3 coins, `count` times);
    the original goes on (its operator adjusts someone else); the copy's signed
    adjustments are appended to the original's tail. Each one is found."""
    original = host_copy
    copy = copy_db(original, tmp_path / "copy")
    before = _last_action(copy)
    for _ in range(count):
        _adjust_on(gm, copy, "bot-001", 3)
    _adjust_on(gm, original, "bot-002", 1, "the original goes on")
    assert _audit(gm, copy, expect=0) == []  # the copy's own history is sound
    stolen = _signed_adjustments(copy, before)
    assert len(stolen) == count
    with connect(original) as store, store.write():
        for action in stolen:
            _replay(store, action)
    problems = _audit(gm, original, expect=1)
    assert {p["kind"] for p in problems} == {"gm_replay"}, problems
    assert len(problems) == count, problems
    assert all("a copy of this store" in p["detail"] for p in problems), problems


def test_one_adjustment_signed_on_a_copy_that_went_its_own_way_fails(
    host_copy: Path, tmp_path: Path, gm
) -> None:
    """The original writes nothing after the copy; the copy does (an adjustment of
    another player), then the operator's adjustment there is appended to the original:
    the first records its request names are not the original's."""
    original = host_copy
    copy = copy_db(original, tmp_path / "copy")
    _adjust_on(gm, copy, "bot-003", 1, "the copy goes on")
    before = _last_action(copy)
    _adjust_on(gm, copy, "bot-001", 3)
    with connect(original) as store, store.write():
        _replay(store, _signed_adjustments(copy, before)[0])
    problems = _audit(gm, original, expect=1)
    assert [p["kind"] for p in problems] == ["gm_replay"], problems
    assert "signed on another history" in problems[0]["detail"], problems
    assert problems[0]["gm_action"] == _last_action(original)


def test_an_adjustment_the_console_makes_on_a_busy_store_audits_clean(host_copy: Path, gm) -> None:
    """The binding holds for what the console does itself: several adjustments and a GM
    user registered, each signed inside the transaction that logs it."""
    for delta in (5, -2, 7):
        _adjust_on(gm, host_copy, "bot-004", delta)
    gm("gm", "users", "add", "sue", "--role", "operator", "--db", host_copy, "--as", OPERATOR)
    assert _audit(gm, host_copy, expect=0) == []
    with connect(host_copy, write=False) as store:
        note = store.one("SELECT request FROM gm_actions ORDER BY id DESC LIMIT 1")[0]
    assert "log" in requests.fields_of(note)


def test_an_action_dated_before_its_own_request_is_found(host_copy: Path, gm) -> None:
    """A genuine request of the operator (their key, this store's history), carried out by
    an action whose time is earlier than the request's."""
    with connect(host_copy) as store, store.write():
        request = requests.make(
            gm_identity(OPERATOR),
            log_append.store_id(store),
            "adjust",
            "bot-001",
            "goodwill",
            {"delta": 3},
            "2099-01-01T00:00:00+00:00",
            log_history.now(store),
        )
        _replay(
            store,
            {"actor": OPERATOR, "target": "bot-001", "reason": "goodwill",
             "outcome": json.dumps({"delta": 3}), "request": request},
        )  # fmt: skip
    problems = _audit(gm, host_copy, expect=1)
    assert [p["kind"] for p in problems] == ["gm_time"], problems
    assert "before its own request (2099-01-01T00:00:00+00:00)" in problems[0]["detail"]


def test_an_adjustment_dated_long_after_its_request_is_found(host_copy: Path, gm) -> None:
    """An adjustment is signed in the write that logs it: an action dated later than a
    minute after its request was re-dated (outside probe a10: an adjust moved to 2031, the
    log recomputed). Here the request is genuine and old, the action dated now."""
    with connect(host_copy) as store, store.write():
        request = requests.make(
            gm_identity(OPERATOR),
            log_append.store_id(store),
            "adjust",
            "bot-001",
            "goodwill",
            {"delta": 3},
            "2000-01-01T00:00:00+00:00",
            log_history.now(store),
        )
        _replay(
            store,
            {"actor": OPERATOR, "target": "bot-001", "reason": "goodwill",
             "outcome": json.dumps({"delta": 3}), "request": request},
        )  # fmt: skip
    problems = _audit(gm, host_copy, expect=1)
    assert [p["kind"] for p in problems] == ["gm_time"], problems
    assert "after its request (2000-01-01T00:00:00+00:00)" in problems[0]["detail"]
    assert "re-dated" in problems[0]["detail"]


def test_a_request_in_the_old_form_after_bound_ones_is_a_replay(host_copy: Path, gm) -> None:
    """Requests signed before requests named their history (2026-12-02) stay valid where
    they were logged; one carried out after this store's requests began naming theirs is an
    old request replayed, whoever signed it."""
    with connect(host_copy) as store, store.write():
        request = requests.make(  # the form of a request before: no `log`
            gm_identity(OPERATOR),
            log_append.store_id(store),
            "adjust",
            "bot-001",
            "goodwill",
            {"delta": 3},
            store.now(),
        )
        _replay(
            store,
            {"actor": OPERATOR, "target": "bot-001", "reason": "goodwill",
             "outcome": json.dumps({"delta": 3}), "request": request},
        )  # fmt: skip
    problems = _audit(gm, host_copy, expect=1)
    assert [p["kind"] for p in problems] == ["gm_replay"], problems
    assert "names no history" in problems[0]["detail"], problems


def test_the_host_and_console_refuse_a_request_made_on_another_copy(
    host_copy: Path, tmp_path: Path, gm
) -> None:
    """What the host checks before it claims a command (and `deploy apply` before it
    deploys a saved plan): a request signed on a copy that went its own way is refused."""
    copy = copy_db(host_copy, tmp_path / "copy")
    _adjust_on(gm, copy, "bot-003", 1, "the copy goes on")
    with connect(copy) as store:
        table = store.one("SELECT id FROM tables ORDER BY id LIMIT 1")[0]
        note = requests.make(
            gm_identity(OPERATOR),
            log_append.store_id(store),
            "close",
            table,
            "maintenance",
            {},
            store.now(),
            log_history.now(store),
        )
        assert (
            gm_store.request_problem(store, note, OPERATOR, "close", table, "maintenance", {})
            is None
        )
    with connect(host_copy) as store:
        why = gm_store.request_problem(store, note, OPERATOR, "close", table, "maintenance", {})
    assert why is not None and "signed on another history" in why


def test_a_deploy_plan_saved_on_a_copy_is_refused_on_the_original(
    deployed_db: Path, tmp_path: Path, gm
) -> None:
    """`deploy apply` checks the plan's signed request as the host checks a command's: a
    plan the operator saved on a copy that had written something of its own (here an
    adjustment) is not applied to the original, and nothing is deployed or logged."""
    copy = copy_db(deployed_db, tmp_path / "copy")
    gm("gm", "users", "add", "carol", "--role", "support", "--key", public_key("carol"),
       "--db", copy, "--as", OPERATOR)  # fmt: skip
    profile = tmp_path / "qq.toml"
    shutil.copy(QQ, profile)
    gm("rules", "set", profile, "profile.version", "2", "timeouts.action_s", "20")
    plan = tmp_path / "qq.plan"
    gm("deploy", profile, "--plan-out", plan, "--db", copy, "--as", OPERATOR)
    before = _last_action(deployed_db)
    run = gm("deploy", "apply", plan, "--db", deployed_db, expect=1)
    assert "signed on another history" in run.stderr, run.stderr
    assert _last_action(deployed_db) == before
