"""Several witnesses for one store, one out of the host's reach (issue 24, point 3).

Whoever can write the witness folder deletes its newer checkpoints, and a careful rewrite
of the store before them audited clean. A served witness (`gmtool witness serve`, the
C2SP tlog-witness protocol) keeps its own state, cosigns only a checkpoint consistent
with the last one it cosigned, and the audit asks it: the store must extend what it
cosigned, and the configured quorum of served witnesses must agree. Every witness here is
a real `gmtool witness serve` process on a loopback port it picked itself (port 0), read
from its own log line; the hosts are real hosts on virtual time.
"""

from __future__ import annotations

import json
import shutil
import signal
from pathlib import Path

import pytest
from conftest import OPERATOR, RULES, copy_db
from helpers import query, rewrite_log
from witness_server import log_key, serving

from gmtool.evidence import witness
from gmtool.evidence.cosign import CosignerKey
from gmtool.store.db import connect


@pytest.fixture
def served():
    """`served(folder, *log_keys)`: a real `gmtool witness serve`, stopped after the test."""
    yield from serving()


def _audit(gm, db: Path, *args) -> tuple[int, dict, str]:
    run = gm("audit", "--db", db, "--json", *args, expect=None)
    return run.returncode, json.loads(run.stdout), run.stderr


def _log_size(db: Path) -> int:
    return query(db, "SELECT COUNT(*) FROM log")[0][0]


def _hosted(tmp_path: Path, gm, virtual_host) -> tuple[Path, Path]:
    """A store (one profile) whose first host signed into the folder F: (store, F)."""
    folder = tmp_path / "store"
    folder.mkdir()
    db = folder / "live.db"
    gm("db", "init", "--db", db, "--as", OPERATOR)
    gm("deploy", RULES / "qq-showhand.toml", "--db", db, "--as", OPERATOR)
    witness_folder = tmp_path / "elsewhere" / "F"
    host = virtual_host(db, tables=2, seed="served", witness=str(witness_folder))
    host.advance(60)
    host.stop()
    host.close()
    return db, witness_folder


def _play(virtual_host, db: Path, seconds: float) -> list[str]:
    host = virtual_host(db, tables=2, seed="served")
    host.advance(seconds)
    host.stop()
    host.close()
    return host.messages


def test_a_folder_emptied_and_the_store_rewritten_before_it_is_found_by_a_served_witness(
    tmp_path: Path, gm, virtual_host, served
) -> None:
    """The Done-when item: two witnesses, a folder and `gmtool witness serve` on loopback;
    the folder's newer checkpoints removed and the store carefully put back before them
    (an older copy, whole and consistent; then that copy grown past them with records the
    log holds faithfully): the audit reports it, naming the served witness."""
    db, folder = _hosted(tmp_path, gm, virtual_host)
    remote = served(tmp_path / "witness-host", witness.public_key_path(db))
    added = gm(
        "gm", "witness", "add", remote.url, "--key", remote.public, "--db", db, "--as", OPERATOR
    )
    assert f"{remote.url} is now a witness of this store" in added.stdout, added.stdout
    assert "warning" not in added.stderr, added.stderr
    backup = copy_db(db, tmp_path / "backup", db.name)  # what the attacker puts back later
    older = {path.name for path in witness.files(folder)}
    messages = _play(virtual_host, db, 60)
    assert not [m for m in messages if "witness http" in m], messages  # every one cosigned
    newest = witness.files(folder)[-1]
    key = CosignerKey.parse(remote.public.read_text())
    assert key.cosigned(newest.read_text()) is not None  # the folder's copy is cosigned too
    code, audit, _ = _audit(gm, db)
    assert code == 0 and audit["problems"] == [], audit
    assert [(w["witness"], w["status"]) for w in audit["witnesses"]] == [(remote.url, "agrees")]
    signed = audit["checkpoint"]["size"]
    code, audit, _ = _audit(gm, db, "--from-checkpoint", sorted(older)[-1])  # incremental too
    assert code == 0 and audit["witnesses"][0]["status"] == "agrees", audit

    # The attack: the folder's newer checkpoints deleted, the store put back before them.
    for path in witness.files(folder):
        if path.name not in older:
            path.unlink()
    for suffix in ("-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    shutil.copyfile(backup, db)
    assert _log_size(db) < signed
    code, audit, _ = _audit(gm, db)
    kinds = [p["kind"] for p in audit["problems"]]
    assert code == 1 and kinds == ["checkpoint_rollback", "witness_disagrees", "witness_quorum"]
    disagrees = audit["problems"][1]["detail"]
    assert f"the witness {remote.url} cosigned a checkpoint at {signed} records" in disagrees
    assert audit["witnesses"][0]["status"] == "disagrees"
    # ... and a host will not deal hands again from it
    run = gm("house", "run", "--db", db, "--hands", "1", "--speed", "1000", expect=2)
    assert f"but the witness {remote.url} cosigned a checkpoint at {signed}" in run.stderr

    # Grown past the witness's size with records the log holds faithfully (players with no
    # coins: nothing else in the store contradicts them), every hash recomputed.
    from gmtool.store import ledger

    with connect(db) as store, store.write():
        for index in range(signed - _log_size(db) + 3):
            ledger.ensure_player(store, f"padding-{index}")
    rewrite_log(db, lambda conn: None)
    code, audit, _ = _audit(gm, db)
    kinds = [p["kind"] for p in audit["problems"]]
    assert code == 1 and kinds == ["checkpoint_rewrite", "witness_disagrees", "witness_quorum"]
    assert remote.url in audit["problems"][0]["detail"]
    assert remote.url in audit["problems"][1]["detail"]


def test_an_unreachable_witness_is_named_and_the_quorum_decides(
    tmp_path: Path, gm, virtual_host, served
) -> None:
    """Two served witnesses, quorum 1 (a signed, logged GM action): one stopped, the audit
    warns about it by name and passes; quorum 2, it fails naming why."""
    db, _ = _hosted(tmp_path, gm, virtual_host)
    first = served(tmp_path / "w1", witness.public_key_path(db))
    second = served(tmp_path / "w2", witness.public_key_path(db))
    for one in (first, second):
        gm("gm", "witness", "add", one.url, "--key", one.public, "--db", db, "--as", OPERATOR)
    gm("gm", "witness", "quorum", "3", "--db", db, "--as", OPERATOR, expect=2)
    gm("gm", "witness", "quorum", "1", "--db", db, "--as", OPERATOR)
    _play(virtual_host, db, 30)
    second.stop()
    code, audit, stderr = _audit(gm, db)
    assert code == 0 and audit["problems"] == [], audit
    assert f"served witness {second.url} not checked: {second.url} did not answer" in stderr
    gm("gm", "witness", "remove", first.url, "--db", db, "--as", OPERATOR)  # 1 still holds
    code, audit, _ = _audit(gm, db)
    assert code == 1 and [p["kind"] for p in audit["problems"]] == ["witness_quorum"], audit
    assert f"{second.url} did not answer" in audit["problems"][0]["detail"]
    listed = gm.json("gm", "witness", "list", "--db", db, "--json")
    assert listed["quorum"] == 1 and [w["type"] for w in listed["witnesses"]] == [
        "folder",
        "tlog-witness",
    ]
    text = gm("gm", "witness", "list", "--db", db).stdout
    assert "quorum: 1 served witness(es) must agree" in text
    assert f"quorum set to 1 (by {OPERATOR}" in text
    log = gm.json("gm", "log", "--db", db, "--json")
    actions = [entry["action"] for entry in log if entry["action"].startswith("witness")]
    assert actions.count("witness_quorum") == 2  # the refused 3 and the 1, both logged


def test_a_served_witness_key_changed_in_the_store_is_found(
    tmp_path: Path, gm, virtual_host, served
) -> None:
    """The witness's key is signed in the operator's request: a key swapped in the row and
    its record, every hash recomputed, is not what the GM action made."""
    db, _ = _hosted(tmp_path, gm, virtual_host)
    remote = served(tmp_path / "w", witness.public_key_path(db))
    gm("gm", "witness", "add", remote.url, "--key", remote.public, "--db", db, "--as", OPERATOR)
    theirs = CosignerKey.parse(remote.public.read_text())
    from gmtool.evidence.cosign import Cosigner

    forged = Cosigner.generate(theirs.name).key.text()

    def swap(conn) -> None:
        conn.execute("UPDATE witnesses SET key = ? WHERE key IS NOT NULL", (forged,))
        idx, body = conn.execute(
            "SELECT idx, body FROM log WHERE kind = 'witness' AND body LIKE '%tlog-witness%'"
        ).fetchone()
        from gmtool.canonical import canonical_json

        record = {**json.loads(body), "key": forged}
        conn.execute("UPDATE log SET body = ? WHERE idx = ?", (canonical_json(record), idx))

    rewrite_log(db, swap)
    code, audit, _ = _audit(gm, db)
    found = [(p["kind"], p["detail"]) for p in audit["problems"]]
    assert code == 1 and ("witness_quorum" in [k for k, _ in found]), found
    assert any(k == "witness" and "is not what GM action" in d for k, d in found), found


def test_gm_witness_add_url_refuses_what_cannot_be_a_served_witness(
    tmp_path: Path, gm, virtual_host, served
) -> None:
    db, folder = _hosted(tmp_path, gm, virtual_host)
    _, other = log_key(tmp_path)
    remote = served(tmp_path / "w", other)  # another log's witness: refuses this store's
    add = ("gm", "witness", "add")
    who = ("--db", db, "--as", OPERATOR)
    run = gm(*add, remote.url, *who, expect=2)
    assert "give the witness's verifier key with --key" in run.stderr
    run = gm(*add, remote.url, "--key", witness.public_key_path(db), *who, expect=2)
    assert "not a witness's cosignature key" in run.stderr  # the store's own key, not its
    run = gm(*add, tmp_path / "F2", "--key", remote.public, *who, expect=2)
    assert "a folder witness takes none" in run.stderr and not (tmp_path / "F2").exists()
    for url in ("ftp://host/x", "http://user:pw@host:1", "http://host:1/?a=b", "http://"):
        run = gm(*add, url, "--key", remote.public, *who, expect=2)
        assert "URL" in run.stderr, url
    added = gm(*add, remote.url, "--key", remote.public, *who)
    assert "this witness does not witness that log" in added.stderr  # said, and recorded
    again = gm(*add, remote.url, "--key", remote.public, *who)
    assert "a witness of this store already (unchanged)" in again.stdout
    remote.stop()
    exported = gm("checkpoint", "export", "--db", db)  # a witness down: said, not fatal
    assert f"witness {remote.url}" in exported.stderr and "did not answer" in exported.stderr
    assert witness.files(folder)[-1].read_text() == exported.stdout


def test_the_running_host_never_waits_for_a_witness_that_does_not_answer(
    tmp_path: Path, gm, virtual_host, served
) -> None:
    """The host's periodic checkpoint (`sign(wait=False)`) is saved at once and sent in the
    background: with the witness stopped (SIGSTOP: it takes the connection, never
    answers) the call returns with the round still on its way, and the cosignature joins
    the saved file once the witness answers (SIGCONT)."""
    from gmtool.house.notary import Notary
    from gmtool.store import ledger

    db, folder = _hosted(tmp_path, gm, virtual_host)
    remote = served(tmp_path / "w", witness.public_key_path(db))
    gm("gm", "witness", "add", remote.url, "--key", remote.public, "--db", db, "--as", OPERATOR)
    key = CosignerKey.parse(remote.public.read_text())
    with connect(db) as store:
        notary = Notary(store)
        notary.check_not_behind()  # learns the size the witness holds
        with store.write():
            ledger.ensure_player(store, "newcomer")
        remote.proc.send_signal(signal.SIGSTOP)
        try:
            (path,) = notary.sign(wait=False)
            assert notary.cosigning.sending  # returned while the witness is silent
            assert key.cosigned(path.read_text()) is None
        finally:
            remote.proc.send_signal(signal.SIGCONT)
        notary.cosigning.join()
        assert key.cosigned(path.read_text()) is not None
        assert notary.cosigning.missing == set()
    code, audit, _ = _audit(gm, db)
    assert code == 0 and audit["witnesses"][0]["size"] == _log_size(db), audit


def test_a_store_rolled_back_to_before_its_served_witness_is_found_by_an_auditor_who_knows_it(
    tmp_path: Path, gm, virtual_host, served
) -> None:
    """The outside attack suite of issue 24 (w06): the store put back as it was before its
    served witness was added (so it records none and nobody asks it), the folder's newer
    checkpoints deleted: the store alone audits clean, as it must (it cannot know what it
    no longer records). An auditor who knows the witness names it (`--served URL=KEY`):
    the witness cosigned a checkpoint the store does not extend."""
    db, folder = _hosted(tmp_path, gm, virtual_host)
    before = copy_db(db, tmp_path / "before", db.name)
    older = {path.name for path in witness.files(folder)}
    remote = served(tmp_path / "witness-host", witness.public_key_path(db))
    gm("gm", "witness", "add", remote.url, "--key", remote.public, "--db", db, "--as", OPERATOR)
    _play(virtual_host, db, 60)
    known = f"{remote.url}={remote.public}"
    code, audit, _ = _audit(gm, db, "--served", known)
    assert code == 0 and [w["status"] for w in audit["witnesses"]] == ["agrees"], audit
    for path in witness.files(folder):  # the attack
        if path.name not in older:
            path.unlink()
    for suffix in ("-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    shutil.copyfile(before, db)
    code, audit, _ = _audit(gm, db)
    assert code == 0, audit  # the store alone cannot tell
    code, audit, _ = _audit(gm, db, "--served", known)
    assert code == 1 and "witness_disagrees" in [p["kind"] for p in audit["problems"]], audit


def test_served_given_wrong_is_a_usage_error(tmp_path: Path, gm, virtual_host) -> None:
    db, _ = _hosted(tmp_path, gm, virtual_host)
    for given in ("http://127.0.0.1:9", "ftp://x=KEY", f"http://127.0.0.1:9={tmp_path}/no.pub"):
        run = gm("audit", "--db", db, "--served", given, expect=2)
        assert run.stderr.startswith(f"error: --served {given!r}"), run.stderr


def test_a_gm_write_the_served_witnesses_cannot_cosign_is_refused_but_removing_one_is_not(
    tmp_path: Path, gm, virtual_host, served
) -> None:
    """Its served witness down, a console write would be covered by the folders alone,
    which whoever can write them can cut (outside probe a48): refused, nothing written. A
    change of the witnesses themselves goes on (removing a dead one is the remedy)."""
    db, _ = _hosted(tmp_path, gm, virtual_host)
    one = served(tmp_path / "w1", witness.public_key_path(db))
    gm("gm", "witness", "add", one.url, "--key", one.public, "--db", db, "--as", OPERATOR)
    gm("players", "adjust", "bot-001", "5", "--reason", "up", "--db", db, "--as", OPERATOR)
    one.stop()
    size = _log_size(db)
    run = gm(
        "players",
        "adjust",
        "bot-001",
        "5",
        "--reason",
        "down",
        "--db",
        db,
        "--as",
        OPERATOR,
        expect=2,
    )
    assert f"0 of the store's 1 served witness(es) answer, the quorum is 1: {one.url}" in (
        run.stderr
    )
    assert "Nothing was written" in run.stderr and _log_size(db) == size
    gm("gm", "witness", "remove", one.url, "--db", db, "--as", OPERATOR)
    gm("players", "adjust", "bot-001", "5", "--reason", "after", "--db", db, "--as", OPERATOR)
