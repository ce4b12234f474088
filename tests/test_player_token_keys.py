"""Player-token keys in the store (issue 25 item 3): an operator registers a login
service's Ed25519 key as a signed, logged GM action (`players token-key`); `players token
NAME` mints a token with `<db>.token.key`, made (mode 0600) and registered when missing.
The host accepts what the registered keys sign for this store, and the audit holds each
registration to its operator's signed request."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from helpers import query, rewrite_log

from gmtool.gateway.tokens import key_id, new_key, public_text, verify
from gmtool.house.privacy import SECRET_SUFFIXES
from gmtool.ops.player_tokens import registered
from gmtool.store import log_append
from gmtool.store.db import connect


def _store_keys(db: Path) -> tuple[str, dict]:
    store = connect(db)
    try:
        return log_append.store_id(store), registered(store)
    finally:
        store.close()


def test_players_token_makes_and_registers_its_key_once(gm, tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    gm("db", "init", "--db", db, "--as", "boss")
    first = gm("players", "token", "ann", "--ttl", "1h", "--db", db, "--as", "boss")
    key_file = db.with_name(db.name + ".token.key")
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert "registered token key" in first.stderr
    store_id, keys = _store_keys(db)
    claims = verify(first.stdout.strip(), keys, store_id, claims_now(first.stdout.strip()))
    assert claims.subject == "ann"
    assert claims.expires - claims.issued == 3600
    made = query(db, "SELECT coins, kind FROM players WHERE name = 'ann'")
    assert [(r["coins"], r["kind"]) for r in made] == [(0, "human")]  # a GM grants coins
    second = gm("players", "token", "bob", "--ttl", "30m", "--db", db, "--as", "boss")
    assert "registered" not in second.stderr  # the same key, registered once
    shown = gm.json("players", "token", "cat", "--db", db, "--as", "boss", "--json")
    assert shown["store"] == store_id  # the audience a login service's tokens must name
    assert verify(shown["token"], keys, store_id, claims_now(shown["token"])).store == store_id
    actions = query(db, "SELECT target, request FROM gm_actions WHERE action = 'token_key'")
    assert len(actions) == 1 and actions[0]["request"]
    assert gm("audit", "--db", db).returncode == 0


def claims_now(token: str) -> float:
    import base64

    body = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))["iat"]


def test_an_outside_services_key_is_registered_by_an_operator_only(gm, tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    gm.add_roles(db)
    key = new_key()
    line = public_text(key.public_key())
    refused = gm("players", "token-key", line, "--db", db, "--as", "sue", expect=None)
    assert refused.returncode != 0 and "refused" in refused.stderr
    done = gm("players", "token-key", line, "--reason", "login service", "--db", db, "--as", "boss")
    assert key_id(key.public_key()) in done.stdout
    again = gm("players", "token-key", line, "--db", db, "--as", "boss")
    assert "already registered" in again.stdout
    assert list(_store_keys(db)[1]) == [key_id(key.public_key())]
    log = gm("gm", "log", "--db", db).stdout
    assert "player tokens signed by " + line in log
    assert gm("audit", "--db", db).returncode == 0


def test_a_key_that_is_not_one_is_a_usage_error(gm, tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    gm("db", "init", "--db", db, "--as", "boss")
    bad = gm("players", "token-key", "ed25519:AAAA", "--db", db, "--as", "boss", expect=2)
    assert "32 bytes" in bad.stderr
    ttl = gm("players", "token", "ann", "--ttl", "1 hour", "--db", db, "--as", "boss", expect=2)
    assert "--ttl" in ttl.stderr


def test_a_registration_edited_in_the_log_is_found_by_the_audit(gm, tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    gm("db", "init", "--db", db, "--as", "boss")
    gm("players", "token-key", public_text(new_key().public_key()), "--db", db, "--as", "boss")
    other = public_text(new_key().public_key())

    def swap(conn) -> None:  # the store now trusts a key no operator signed for
        row = conn.execute("SELECT id, outcome FROM gm_actions WHERE action='token_key'").fetchone()
        outcome = {**json.loads(row["outcome"]), "key": other}
        conn.execute(
            "UPDATE gm_actions SET outcome = ? WHERE id = ?", (json.dumps(outcome), row["id"])
        )

    rewrite_log(db, swap)
    audit = gm("audit", "--db", db, expect=None)
    assert audit.returncode == 1, audit.stdout
    assert "gm_signature" in audit.stdout and "token_key" in audit.stdout


def test_the_token_key_is_one_of_the_files_the_host_keeps_private() -> None:
    assert ".token.key" in SECRET_SUFFIXES
