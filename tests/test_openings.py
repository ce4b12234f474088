"""Opening balances the host signs (issue 14: a mint appended after the newest checkpoint
passed audit): the signature, the store from before signed openings, and the audit."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from gmtool.audit.run import run_audit
from gmtool.evidence import opening
from gmtool.evidence.note import Signer
from gmtool.house.pool import BotPool
from gmtool.store import ledger
from gmtool.store.db import connect
from gmtool.store.log_append import origin_of


def _openings(store) -> list[dict]:
    return [
        json.loads(body)
        for (body,) in store.all("SELECT body FROM log WHERE kind = 'opening' ORDER BY idx")
    ]


def _coins_problems(store, signer: Signer) -> list[tuple]:
    return [
        (p["kind"], p.get("player")) for p in run_audit(store, host_key=signer.verifier).problems
    ]


def test_the_signature_covers_the_store_the_row_the_player_and_the_amount() -> None:
    signer = Signer.generate("gmtool/0123456789abcdef")
    signature = opening.sign(signer, 7, "bot-001", 100_000)
    assert opening.verify(signer.verifier, 7, "bot-001", 100_000, signature)
    for other in [(8, "bot-001", 100_000), (7, "bot-002", 100_000), (7, "bot-001", 100_001)]:
        assert not opening.verify(signer.verifier, *other, signature)
    elsewhere = Signer("gmtool/fedcba9876543210", signer.seed)  # the same key, another store
    assert not opening.verify(elsewhere.verifier, 7, "bot-001", 100_000, signature)
    assert not opening.verify(
        Signer.generate(signer.name).verifier, 7, "bot-001", 100_000, signature
    )


@pytest.mark.parametrize("signature", [None, 12, "", "not base64!", "AAAA", "A" * 88, ["x"]])
def test_a_malformed_signature_is_not_one(signature) -> None:
    signer = Signer.generate("gmtool/0123456789abcdef")
    assert not opening.verify(signer.verifier, 1, "bot-001", 5, signature)


def test_a_store_from_before_signed_openings_has_its_own_signed_once(deployed_db: Path) -> None:
    """The first enrolment under this version signs the openings the store already holds
    (as older stores granted them, unsigned); after that an unsigned one is minted, and
    the host never signs it."""
    with connect(deployed_db) as store:
        ledger.grant(store, "ann", 500, "opening_balance")  # as a store from before did
        signer = Signer.generate(origin_of(store))
        assert _coins_problems(store, signer) == []  # before any signed one: as it was
        BotPool(store).enroll(2, 1_000, lambda: signer)
        signed = _openings(store)
        assert [(b["player"], b["delta"]) for b in signed] == [
            ("ann", 500),
            ("bot-001", 1_000),
            ("bot-002", 1_000),
        ]
        assert all(
            opening.verify(signer.verifier, b["id"], b["player"], b["delta"], b["signature"])
            for b in signed
        )
        assert _coins_problems(store, signer) == []

        ledger.grant(store, "mallory", 100_000_000, "opening_balance")
        assert _coins_problems(store, signer) == [("unjustified_coins", "mallory")]
        BotPool(store).enroll(3, 1_000, lambda: signer)
        assert [b["player"] for b in _openings(store)[3:]] == ["bot-003"]
        assert _coins_problems(store, signer) == [("unjustified_coins", "mallory")]


def test_an_edited_signed_opening_is_reported_without_the_key(deployed_db: Path) -> None:
    """Without the verifier key the signature cannot be checked, but the record must still
    match its row: an opening made larger in both ledger and balance is found."""
    with connect(deployed_db) as store:
        signer = Signer.generate(origin_of(store))
        BotPool(store).enroll(1, 1_000, lambda: signer)
    conn = sqlite3.connect(deployed_db)
    with conn:
        conn.execute("DROP TRIGGER ledger_no_update")
        conn.execute("UPDATE ledger SET delta = 9000000 WHERE player = 'bot-001'")
        conn.execute("UPDATE players SET coins = 9000000 WHERE name = 'bot-001'")
    conn.close()
    with connect(deployed_db, write=False) as store:
        kinds = {(p["kind"], p.get("player")) for p in run_audit(store).problems}
    assert ("unjustified_coins", "bot-001") in kinds
