"""GM keys and signed requests (issue 14): each GM signs what they ask for with their own
Ed25519 key, kept 0600 in their config folder; a request holds only for the key it was
signed with, for exactly what it asks, on the store it names."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from helpers import clean_env, gm_identity, public_key

from gmtool.errors import UsageError
from gmtool.evidence import gm_keys
from gmtool.evidence import request as requests
from gmtool.evidence.note import NoteError

STORE = "0123456789abcdef"


def _request(by: str = "alice", **change) -> str:
    fields = {
        "action": "adjust",
        "target": "bot-001",
        "reason": "refund",
        "args": {"delta": 5},
        **change,
    }
    return requests.make(
        gm_identity(by),
        STORE,
        fields["action"],
        fields["target"],
        fields["reason"],
        fields["args"],
        "2026-12-01T00:00:00+00:00",
    )


def _problem(
    note: str, by: str = "alice", role: str = "operator", key: str | None = None, **asked
) -> str | None:
    wanted = {
        "action": "adjust",
        "target": "bot-001",
        "reason": "refund",
        "args": {"delta": 5},
        **asked,
    }
    return requests.problem(note, by, role, key or public_key(by), STORE, **wanted)


def test_a_request_holds_for_its_signer_and_exactly_what_it_asks() -> None:
    note = _request()
    assert _problem(note) is None
    assert (
        requests.fields_of(note)["by"] == "alice" and len(requests.fields_of(note)["nonce"]) == 32
    )
    assert note != _request()  # the nonce: no two requests are the same note


@pytest.mark.parametrize(
    "change, expected",
    [
        ({"args": {"delta": 500}}, "args differ"),
        ({"target": "bot-002"}, "target differ"),
        ({"reason": "other"}, "reason differ"),
        ({"action": "deploy"}, "action differ"),
    ],
)
def test_a_request_for_something_else_does_not_hold(change: dict, expected: str) -> None:
    assert expected in _problem(_request(), **change)


def test_a_request_signed_by_another_key_or_edited_does_not_hold() -> None:
    assert "not signed by alice's registered key" in _problem(_request("mallory"))
    note = _request()
    edited = note.replace('"delta":5', '"delta":9')
    assert "not signed by alice's registered key" in _problem(edited, args={"delta": 9})
    assert "another GM or another store" in requests.problem(
        note,
        "alice",
        "operator",
        public_key("alice"),
        "another-store",
        "adjust",
        "bot-001",
        "refund",
        {"delta": 5},
    )


def test_roles_and_missing_keys_are_named() -> None:
    note = _request()
    assert "is support" in _problem(note, role="support")
    assert "not a GM user" in requests.problem(
        note, "alice", None, None, STORE, "adjust", "bot-001", "refund"
    )
    assert "no registered key" in requests.problem(
        note, "alice", "operator", None, STORE, "adjust", "bot-001", "refund"
    )
    assert "not signed" in _problem(None)


@pytest.mark.parametrize(
    "note", ["", "not a note", '{"by": "alice"}\n\n— alice AAAA\n', "[1]\n\n— alice AAAAAAAA\n"]
)
def test_a_malformed_request_is_a_note_error(note: str) -> None:
    with pytest.raises(NoteError):
        requests.fields_of(note)
    assert _problem(note) is not None


def test_keys_are_private_and_never_silently_replaced(tmp_path: Path) -> None:
    signer, path = gm_keys.new_key("alice", tmp_path / "keys")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert gm_keys.load_key("alice", tmp_path / "keys") == signer
    with pytest.raises(OSError, match="already exists"):
        gm_keys.new_key("alice", tmp_path / "keys")
    assert gm_keys.new_key("alice", tmp_path / "keys", replace=True)[0] != signer
    assert gm_keys.load_key("bob", tmp_path / "keys") is None
    path.rename(path.with_name("bob.key"))
    with pytest.raises(OSError, match="alice's key, not bob's"):
        gm_keys.load_key("bob", tmp_path / "keys")


@pytest.mark.parametrize("name", ["", "a b", "a+b", "../etc/x", ".hidden", "x/y"])
def test_a_name_no_key_can_have_is_a_usage_error(name: str, tmp_path: Path) -> None:
    with pytest.raises(UsageError):
        gm_keys.key_path(name, tmp_path)


def test_gm_keys_new_and_show_on_the_command_line(tmp_path: Path, gm) -> None:
    env = clean_env(GMTOOL_KEYS=str(tmp_path / "mine"))
    made = gm.json("gm", "keys", "new", "zoe", "--json", env=env)
    assert made["name"] == "zoe" and made["key"].startswith("zoe+")
    assert stat.S_IMODE(Path(made["private_key_file"]).stat().st_mode) == 0o600
    assert gm("gm", "keys", "show", "zoe", env=env).stdout.strip() == made["key"]
    again = gm("gm", "keys", "new", "zoe", env=env, expect=2)
    assert "already exists" in again.stderr
    assert "no GM key for nobody" in gm("gm", "keys", "show", "nobody", env=env, expect=2).stderr
    assert gm("gm", "keys", "new", "a b", env=env, expect=2).stderr.startswith("error:")
    assert (
        json.loads(gm("gm", "keys", "show", "zoe", "--json", env=env).stdout)["key"] == made["key"]
    )


def test_an_action_without_a_key_is_a_usage_error_that_changes_nothing(tmp_path: Path, gm) -> None:
    db = tmp_path / "nokey.db"
    gm("db", "init", "--db", db, "--as", "alice")
    run = gm(
        "players",
        "adjust",
        "bot-001",
        "5",
        "--reason",
        "x",
        "--db",
        db,
        "--as",
        "keyless",
        expect=2,
    )
    assert "no GM key for keyless" in run.stderr and "gm keys new keyless" in run.stderr
    assert [r["actor"] for r in gm.json("gm", "log", "--db", db, "--json")] == ["alice"]


def test_db_init_makes_the_first_operators_key_when_they_have_none(tmp_path: Path, gm) -> None:
    env = clean_env(GMTOOL_KEYS=str(tmp_path / "keys"))
    run = gm("db", "init", "--db", tmp_path / "new.db", "--as", "olga", env=env)
    assert "made your GM key" in run.stdout and "olga is the store's first operator" in run.stdout
    assert (tmp_path / "keys" / "olga.key").exists()
    users = gm.json("gm", "users", "list", "--db", tmp_path / "new.db", "--json", env=env)
    assert [(u["name"], u["role"]) for u in users] == [("olga", "operator")]
    again = gm("db", "init", "--db", tmp_path / "new.db", "--as", "olga", env=env)
    assert "first operator" not in again.stdout
