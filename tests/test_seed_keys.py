"""Every hand's seed is checkable without any secret (issue 24, point 5).

A seed is the host's RSA seed key's signature over (store, table, number), unique for the
key, registered in the evidence log with the host's checkpoint key's signature. So an
auditor holding the database, the witness and the checkpoint key's `.pub` (a regulator)
checks every seed, and a host run on a copy of the store with a key of its own is found,
with no `<db>.key` or `<db>.seed.key` anywhere near the audit.
"""

from __future__ import annotations

import base64
import json
import shutil
import signal
import sqlite3
from pathlib import Path

import pytest
from conftest import Gmtool
from cryptography.hazmat.primitives.asymmetric import ed25519

from gmtool.engine.deck import commitment, hand_seed
from gmtool.evidence import hand_seeds, witness
from gmtool.evidence.hand_seeds import SeedSigner
from gmtool.house.seeds import key_path, seed_key_path
from gmtool.store.db import connect
from gmtool.store.log_append import origin_of

SECRETS = (".key", ".seed.key", ".checkpoint.key")


def qq_host(gm: Gmtool, db: Path, *extra: str, expect: int = 0):
    return gm(
        "house", "run", "--db", db, "--system", "qq-showhand", "--tables", "2",
        "--hands", "4", "--speed", "1000", *extra, expect=expect,
    )  # fmt: skip


def without_secrets(db: Path, folder: Path) -> Path:
    """What a regulator holds: the database alone (its witness and `.pub` stay where the
    house keeps them, and are passed to the audit)."""
    folder.mkdir()
    copy = folder / db.name
    with sqlite3.connect(db) as source, sqlite3.connect(copy) as target:
        source.backup(target)
    return copy


def audit(gm: Gmtool, db: Path, original: Path, expect: int) -> dict:
    for suffix in SECRETS:
        assert not db.with_name(db.name + suffix).exists(), suffix  # no secret at hand
    run = gm(
        "audit", "--db", db, "--json", "--key", witness.public_key_path(original),
        "--witness", witness.witness_dir(original), expect=expect,
    )  # fmt: skip
    return json.loads(run.stdout)


def seed_problems(report: dict) -> list[dict]:
    return [p for p in report["problems"] if p["kind"] in ("seed", "seed_key")]


def test_seeds_a_clean_store_audits_ok_without_any_secret(
    gm: Gmtool, deployed_db: Path, tmp_path: Path
) -> None:
    qq_host(gm, deployed_db)
    assert seed_key_path(deployed_db).exists() and not key_path(deployed_db).exists()
    copy = without_secrets(deployed_db, tmp_path / "regulator")
    report = audit(gm, copy, deployed_db, expect=0)
    assert report["hands_checked"] >= 4 and report["problems"] == []
    with connect(copy, write=False) as store:  # and every seed really is checked: the
        # registered key, the host's signature over it, each seed the key's over its slot
        (body,) = [
            json.loads(r["body"]) for r in store.all("SELECT body FROM log WHERE kind = 'seed_key'")
        ]
        verifier = witness.load_verifier(witness.public_key_path(deployed_db))
        assert body["scheme"] == hand_seeds.RSA and hand_seeds.key_signed(verifier, body)
        rows = store.all("SELECT table_id, number, seed FROM hands WHERE seed IS NOT NULL")
        origin = origin_of(store)
    assert rows
    for row in rows:
        seed = bytes.fromhex(row["seed"])
        assert hand_seeds.seed_holds(
            body["scheme"], body["key"], origin, row["table_id"], row["number"], seed
        )
        assert not hand_seeds.seed_holds(
            body["scheme"], body["key"], origin, row["table_id"], row["number"] + 1, seed
        )


@pytest.mark.parametrize(
    "house, attacker",
    [([], []), (["--seed", "house"], ["--seed", "mine"])],
    ids=["seed-key", "demo-store-seed-text"],
)
def test_seeds_a_host_run_on_a_copy_with_its_own_key_is_found_without_the_secret(
    gm: Gmtool, deployed_db: Path, tmp_path: Path, house: list[str], attacker: list[str]
) -> None:
    """The copy is hosted without the store's secrets (it makes a seed key and a
    checkpoint key of its own); its hands are then audited as a regulator would."""
    qq_host(gm, deployed_db, *house)
    with connect(deployed_db, write=False) as store:
        before = store.one("SELECT MAX(id) FROM hands")[0]
    copy = without_secrets(deployed_db, tmp_path / "attacker")
    qq_host(gm, copy, *attacker)
    for suffix in SECRETS:
        copy.with_name(copy.name + suffix).unlink(missing_ok=True)
    shutil.rmtree(witness.witness_dir(copy))
    report = audit(gm, copy, deployed_db, expect=1)
    found = seed_problems(report)
    assert [p["kind"] for p in found if p["kind"] == "seed_key"] == ["seed_key"], found
    assert "not signed by this store's checkpoint key" in found[0]["detail"]
    with connect(copy, write=False) as store:
        appended = [
            r[0]
            for r in store.all("SELECT id FROM hands WHERE id > ? AND seed IS NOT NULL", (before,))
        ]
    assert appended and {p.get("hand") for p in found if p["kind"] == "seed"} == set(appended)


def test_seeds_a_hand_dealt_from_another_key_under_the_registered_one_is_found(
    gm: Gmtool, deployed_db: Path, tmp_path: Path
) -> None:
    """Someone who writes the store without the seed key appends a hand whose seed is
    their own key's signature (or any seed), its records consistent: the seed check
    alone finds it, with no secret."""
    from gmtool.engine.hand import Seat
    from gmtool.engine.play import seeded_source, start_hand
    from gmtool.house.recorder import Recorder
    from gmtool.store import ledger
    from gmtool.store import tables as table_store
    from gmtool.store.configs import active_config_id, load_config

    qq_host(gm, deployed_db)
    forged = {}
    with connect(deployed_db) as store:
        for name in ("ann", "bob"):
            ledger.grant(store, name, 100_000, "opening_balance")
        config = load_config(store, active_config_id(store, "qq-showhand", "junior"))
        table_store.open_table(store, "forged-1", "qq-showhand", "junior", "stud5", 0)
        for number, seed in (
            (1, SeedSigner.generate().seed(origin_of(store), "forged-1", 1)),  # another key
            (2, hand_seed(b"k" * 32, "forged-1", 2)),  # the old way, with a key of one's own
        ):
            hand = start_hand(
                config, "junior", [Seat("ann", 100_000), Seat("bob", 100_000)], "ann",
                seeded_source(config, seed),
            )  # fmt: skip
            recorder = Recorder(store, "forged-1")
            recorder.record(hand.events, seed=seed, number=number)
            forged[recorder.hand_id] = seed
            recorder.void("host_stopped", "forged")
    copy = without_secrets(deployed_db, tmp_path / "regulator")
    report = audit(gm, copy, deployed_db, expect=1)
    found = {p["hand"]: p["detail"] for p in seed_problems(report)}
    assert set(found) == set(forged), report["problems"]
    for detail in found.values():
        assert "is not the one the seed key registered from hand 1 gives forged-1 #" in detail


def test_seeds_a_replaced_seed_key_is_registered_again_and_every_seed_audits(
    gm: Gmtool, deployed_db: Path, tmp_path: Path
) -> None:
    """A lost seed key (moved away, as its error message says): the next host start makes
    a new one and registers it, signed, from its first hand on; both keys' hands verify."""
    qq_host(gm, deployed_db)
    seed_key_path(deployed_db).rename(tmp_path / "lost.seed.key")
    started = qq_host(gm, deployed_db)
    assert "seed key: hands from id" in started.stdout
    copy = without_secrets(deployed_db, tmp_path / "regulator")
    report = audit(gm, copy, deployed_db, expect=0)
    with connect(copy, write=False) as store:
        keys = store.all("SELECT body FROM log WHERE kind = 'seed_key'")
    assert len(keys) == 2 and report["problems"] == []


def test_seeds_a_registration_signed_by_another_key_is_reported(
    gm: Gmtool, deployed_db: Path, tmp_path: Path
) -> None:
    """The registration itself is what a copy's host cannot make: signed with any key
    but the store's checkpoint key, it is reported, and so is every hand under it."""
    qq_host(gm, deployed_db)
    with connect(deployed_db, write=False) as store:
        (body,) = [
            json.loads(r["body"]) for r in store.all("SELECT body FROM log WHERE kind = 'seed_key'")
        ]
        origin = origin_of(store)
    other = ed25519.Ed25519PrivateKey.generate()
    message = hand_seeds.key_message(origin, body["id"], body["scheme"], body["key"], body["at"])
    body["signature"] = base64.b64encode(other.sign(message)).decode()
    verifier = witness.load_verifier(witness.public_key_path(deployed_db))
    assert not hand_seeds.key_signed(verifier, body)
    assert not hand_seeds.key_signed(verifier, {**body, "signature": "not base64!"})
    assert not hand_seeds.key_signed(verifier, {**body, "id": True})


def test_seeds_crash_recovery_reveals_the_signed_seed(
    gm: Gmtool, deployed_db: Path, tmp_path: Path, start_host
) -> None:
    """A host killed (SIGKILL) mid-hand: the next start signs the slot again (the signature
    is a function of the key and the slot) and reveals the committed seed; the store then
    audits clean without any secret."""
    host = start_host(deployed_db, "--tables", "4", "--speed", "100", "--verbose")
    host.wait_for_line(r"hand \d+ started")
    assert host.stop(signal.SIGKILL) == -signal.SIGKILL, host.output
    with connect(deployed_db, write=False) as store:
        running = [r[0] for r in store.all("SELECT id FROM hands WHERE outcome = 'running'")]
    assert running
    qq_host(gm, deployed_db)
    with connect(deployed_db, write=False) as store:
        for hand_id in running:
            row = store.one("SELECT seed, commitment, outcome FROM hands WHERE id = ?", (hand_id,))
            assert row["outcome"] == "voided" and row["seed"] is not None
            assert commitment(bytes.fromhex(row["seed"])) == row["commitment"]
    copy = without_secrets(deployed_db, tmp_path / "regulator")
    assert audit(gm, copy, deployed_db, expect=0)["problems"] == []


def test_seeds_an_old_store_keeps_its_old_hands_and_registers_a_key_for_new_ones(
    gm: Gmtool, deployed_db: Path, tmp_path: Path
) -> None:
    """A store from before seed keys: its hands' seeds are HMACs of its secret `<db>.key`
    (written here as the host then wrote them). The first host start of this version
    registers a seed key from its next hand; the old hands are checked with `<db>.key`
    where it is, the new ones with no secret."""
    from gmtool.engine.hand import Seat
    from gmtool.engine.play import seeded_source, start_hand
    from gmtool.house.recorder import Recorder
    from gmtool.house.seeds import load_key
    from gmtool.store import ledger
    from gmtool.store import tables as table_store
    from gmtool.store.configs import active_config_id, load_config

    with connect(deployed_db) as store:
        for name in ("ann", "bob"):
            ledger.grant(store, name, 100_000, "opening_balance")
        config = load_config(store, active_config_id(store, "qq-showhand", "junior"))
        table_store.open_table(store, "old-1", "qq-showhand", "junior", "stud5", 0)
        seed = hand_seed(load_key(store.path), "old-1", 1)
        hand = start_hand(
            config, "junior", [Seat("ann", 100_000), Seat("bob", 100_000)], "ann",
            seeded_source(config, seed),
        )  # fmt: skip
        recorder = Recorder(store, "old-1")
        recorder.record(hand.events, seed=seed, number=1)
        recorder.void("host_stopped", "an old host's hand")
        table_store.stop_table(store, "old-1")
    qq_host(gm, deployed_db)
    with connect(deployed_db, write=False) as store:
        (body,) = [
            json.loads(r["body"]) for r in store.all("SELECT body FROM log WHERE kind = 'seed_key'")
        ]
    assert body["id"] == 2 and body["scheme"] == hand_seeds.RSA  # from the first new hand
    gm("audit", "--db", deployed_db)  # the old hand with `<db>.key`, the new ones without
    copy = without_secrets(deployed_db, tmp_path / "regulator")
    assert audit(gm, copy, deployed_db, expect=0)["problems"] == []
    key_path(deployed_db).write_text("0" * 64 + "\n")  # another old key: the old hand fails
    run = gm("audit", "--db", deployed_db, "--json", expect=1)
    found = [p for p in json.loads(run.stdout)["problems"] if p["kind"] == "seed"]
    assert [p["hand"] for p in found] == [1], found


def test_seeds_an_audit_from_a_checkpoint_finds_a_copys_hands_without_the_secret(
    gm: Gmtool, deployed_db: Path, tmp_path: Path
) -> None:
    """`audit --from-checkpoint` checks the seeds of the hands after it the same way: the
    copy's registration and every hand dealt under it, with no secret."""
    qq_host(gm, deployed_db)
    newest = sorted(witness.witness_dir(deployed_db).glob("*.checkpoint"))[-1]
    copy = without_secrets(deployed_db, tmp_path / "attacker")
    qq_host(gm, copy)
    for suffix in SECRETS:
        copy.with_name(copy.name + suffix).unlink(missing_ok=True)
    shutil.rmtree(witness.witness_dir(copy))
    run = gm(
        "audit", "--db", copy, "--json", "--key", witness.public_key_path(deployed_db),
        "--witness", witness.witness_dir(deployed_db), "--from-checkpoint", newest, expect=1,
    )  # fmt: skip
    report = json.loads(run.stdout)
    found = seed_problems(report)
    assert "seed_key" in {p["kind"] for p in found}, report["problems"]
    with connect(copy, write=False) as store:
        appended = {r[0] for r in store.all("SELECT id FROM hands WHERE seed IS NOT NULL")}
    dealt = {p["hand"] for p in found if p["kind"] == "seed"}
    assert dealt and dealt < appended, found
    clean = gm(
        "audit", "--db", deployed_db, "--json", "--from-checkpoint", newest.name, expect=0
    )  # the house's own store, from the same checkpoint
    assert json.loads(clean.stdout)["problems"] == []


def test_seeds_a_damaged_seed_key_is_refused_before_anything_changes(
    gm: Gmtool, deployed_db: Path
) -> None:
    """Without its seed key a host could not reveal the seeds of hands a crash leaves
    unfinished: a file that is not one stops the start (exit 2), the store untouched."""
    from test_host_start import sql_dump

    qq_host(gm, deployed_db)
    seed_key_path(deployed_db).write_text("not a key\n")
    dump = sql_dump(deployed_db)
    run = qq_host(gm, deployed_db, expect=2)
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in run.stderr, run.stderr
    assert lines[0].startswith(f"error: {seed_key_path(deployed_db)} is not a gmtool seed key")
    assert "move it away to start with a new key" in lines[0]
    assert sql_dump(deployed_db) == dump
