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
import socket
import subprocess
import threading
from pathlib import Path

import pytest
from conftest import OPERATOR, RULES, copy_db
from helpers import clean_env, gmtool_command, query, rewrite_log

from gmtool.evidence import witness
from gmtool.evidence.cosign import CosignerKey
from gmtool.evidence.merkle import Tree, leaf_hash, root_of
from gmtool.evidence.note import Checkpoint, Signer, sign_checkpoint
from gmtool.evidence.tlog_witness import request_body
from gmtool.store.db import connect

READY_TIMEOUT_S = 60


class ServedWitness:
    """A real `gmtool witness serve` process; its URL is the one it says it listens on."""

    def __init__(self, folder: Path, *logs: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.key = folder / "witness.key"
        self.state = folder / "state"
        args = [str(a) for log in logs for a in ("--log", log)]
        self.proc = subprocess.Popen(
            [*gmtool_command(), "witness", "serve", "--listen", "127.0.0.1:0"]
            + ["--state", str(self.state), "--key", str(self.key), *args],
            env=clean_env(PYTHONUNBUFFERED="1"),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: list[str] = []
        self._said = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()
        with self._said:
            self._said.wait_for(
                lambda: self.url is not None or self.proc.poll() is not None, READY_TIMEOUT_S
            )
        assert self.url is not None, self.output

    def _read(self) -> None:
        for line in self.proc.stderr:
            with self._said:
                self.lines.append(line.rstrip("\n"))
                self._said.notify_all()
        with self._said:
            self._said.notify_all()

    @property
    def output(self) -> str:
        return "\n".join(self.lines)

    @property
    def url(self) -> str | None:
        found = [line.rsplit(" ", 1)[1] for line in self.lines if "listening on http" in line]
        return found[0] if found else None

    @property
    def port(self) -> int:
        return int(str(self.url).rsplit(":", 1)[1])

    @property
    def public(self) -> Path:
        return self.key.with_name(self.key.name + ".pub")

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(timeout=READY_TIMEOUT_S)
        assert "Traceback" not in self.output, self.output
        return code


@pytest.fixture
def served():
    """`served(folder, *log_keys)`: a ServedWitness, stopped (by its pid) after the test."""
    started: list[ServedWitness] = []

    def start(folder: Path, *logs: Path) -> ServedWitness:
        started.append(ServedWitness(folder, *logs))
        return started[-1]

    yield start
    for one in started:
        one.stop()


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


# -- the protocol: a witness cosigns only what extends what it holds ----------------------


def _log(tmp_path: Path) -> tuple[Signer, Path]:
    signer = Signer.generate("example.test/log")
    pub = tmp_path / "log.pub"
    pub.write_text(signer.verifier.text() + "\n")
    return signer, pub


def _post(port: int, body: bytes, method: str = "POST", path: str = "/add-checkpoint"):
    import http.client

    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=READY_TIMEOUT_S)
    try:
        connection.request(method, path, body)
        response = connection.getresponse()
        return response.status, response.getheader("Content-Type"), response.read()
    finally:
        connection.close()


def test_the_witness_refuses_an_inconsistent_checkpoint_and_keeps_its_state(
    tmp_path: Path, served
) -> None:
    signer, pub = _log(tmp_path)
    leaves = [leaf_hash(f"record {i}".encode()) for i in range(20)]
    tree = Tree(lambda lo, hi: leaves[lo:hi])

    def note(size: int, root: bytes | None = None, by: Signer = signer) -> str:
        return sign_checkpoint(Checkpoint(by.name, size, root or root_of(leaves[:size])), by)

    remote = served(tmp_path / "w", pub)
    port = remote.port
    key = CosignerKey.parse(remote.public.read_text())
    status, _, body = _post(port, request_body(0, [], note(5)))
    assert (
        status == 200
        and key.timestamp(
            Checkpoint(signer.name, 5, root_of(leaves[:5])).text(), body.decode().strip()
        )
        is not None
    )
    status, kind, body = _post(port, request_body(0, [], note(9)))  # it holds 5, not 0
    assert (status, kind, body) == (409, "text/x.tlog.size", b"5\n")
    forked = [*leaves[:3], leaf_hash(b"rewritten"), *leaves[4:]]
    fork_root = root_of(forked[:9])
    bad_proof = Tree(lambda lo, hi: forked[lo:hi]).consistency(5, 9)
    status, _, _ = _post(port, request_body(5, bad_proof, note(9, fork_root)))
    assert status == 422  # history before 5 rewritten: the proof cannot hold
    status, kind, body = _post(port, request_body(5, [], note(5, fork_root)))
    assert (status, body) == (409, b"5\n")  # the same size with another root
    assert _post(port, request_body(9, [], note(5)))[0] == 400  # old larger than the size
    stranger = Signer.generate(signer.name)
    assert _post(port, request_body(5, tree.consistency(5, 9), note(9, by=stranger)))[0] == 403
    other = Signer.generate("other.test/log")
    assert _post(port, request_body(0, [], note(3, by=other)))[0] == 404
    status, _, _ = _post(port, request_body(5, tree.consistency(5, 9), note(9)))
    assert status == 200
    # its state survives a restart: it still holds 9
    assert remote.stop() == 0
    again = ServedWitness(tmp_path / "w", pub)
    try:
        status, kind, body = _post(again.port, request_body(0, [], note(12)))
        assert (status, body) == (409, b"9\n")
        status, _, body = _post(again.port, b"", "GET", "/checkpoint/example.test%2Flog")
        assert status == 200 and body.decode().startswith("example.test/log\n9\n")
    finally:
        again.stop()


def test_hostile_http_input_gets_a_clean_4xx_and_never_stops_the_witness(
    tmp_path: Path, served
) -> None:
    signer, pub = _log(tmp_path)
    remote = served(tmp_path / "w", pub)
    port = remote.port
    stalled = socket.create_connection(("127.0.0.1", port))  # says nothing, holds a thread
    stalled.sendall(b"POST /add-checkpoint HTTP/1.1\r\nContent-Length: 100\r\n\r\nold")
    for body in (b"garbage", b"old 0\n\n", b"\xff\xfe\x00" * 100, b"old 01\n\nx\n", b"old -1\n\n"):
        assert _post(port, body)[0] == 400, body
    too_many = request_body(0, [b"\x00" * 32] * 64, "x\n1\nAAAA\n\n- y z\n")
    assert _post(port, too_many)[0] == 400
    for method in ("PUT", "DELETE", "PATCH", "OPTIONS", "BREW"):
        assert _post(port, b"x", method)[0] == 405, method
    assert _post(port, b"", "GET", "/add-checkpoint")[0] == 405
    assert _post(port, b"", "GET", "/")[0] == 404
    assert _post(port, b"", "GET", "/checkpoint/%ff")[0] == 400
    assert _post(port, b"", "GET", "/checkpoint/nobody")[0] == 404
    with socket.create_connection(("127.0.0.1", port)) as raw:  # 10 MB announced: refused unread
        raw.sendall(b"POST /add-checkpoint HTTP/1.1\r\nHost: x\r\nContent-Length: 10000000\r\n\r\n")
        assert raw.recv(100).startswith(b"HTTP/1.1 413")
    with socket.create_connection(("127.0.0.1", port)) as raw:
        raw.sendall(b"POST /add-checkpoint HTTP/1.1\r\nHost: x\r\n\r\n")
        assert raw.recv(100).startswith(b"HTTP/1.1 411")
    with socket.create_connection(("127.0.0.1", port)) as raw:
        raw.sendall(b"\x16\x03\x01 not http at all\r\n\r\n")  # (a TLS hello, say)
        assert raw.recv(100).startswith(b"400 ")  # as HTTP/0.9 answers: no status line
    # it still works, and is still running
    note = sign_checkpoint(Checkpoint(signer.name, 1, leaf_hash(b"a")), signer)
    assert _post(port, request_body(0, [], note))[0] == 200
    stalled.close()
    assert remote.proc.poll() is None
    assert remote.stop() == 0


def test_witness_serve_refuses_bad_options_in_plain_words(tmp_path: Path, gm) -> None:
    _, pub = _log(tmp_path)
    base = ["witness", "serve", "--state", tmp_path / "s", "--key", tmp_path / "k"]
    for listen in ("nowhere", "127.0.0.1:99999", ":80"):
        run = gm(*base, "--listen", listen, "--log", pub, expect=2)
        assert "is not HOST:PORT" in run.stderr
    run = gm(*base, "--listen", "127.0.0.1:0", "--log", tmp_path / "missing.pub", expect=2)
    assert "no verifier key at" in run.stderr
    run = gm(
        "witness",
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--state",
        tmp_path / "no" / "s",
        "--key",
        tmp_path / "k2",
        "--log",
        pub,
        expect=2,
    )
    assert "does not exist" in run.stderr
    assert not (tmp_path / "no").exists()


def test_gm_witness_add_url_refuses_what_cannot_be_a_served_witness(
    tmp_path: Path, gm, virtual_host, served
) -> None:
    db, folder = _hosted(tmp_path, gm, virtual_host)
    _, other = _log(tmp_path)
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


def test_concurrent_submissions_never_roll_the_witness_back(tmp_path: Path, served) -> None:
    """Checking the old size and saving the new checkpoint are one step: of many
    submissions racing from the same old size, exactly one is cosigned, and what the
    witness holds afterwards is that one."""
    from concurrent.futures import ThreadPoolExecutor

    signer, pub = _log(tmp_path)
    leaves = [leaf_hash(f"record {i}".encode()) for i in range(40)]
    tree = Tree(lambda lo, hi: leaves[lo:hi])
    remote = served(tmp_path / "w", pub)

    def note(size: int) -> str:
        return sign_checkpoint(Checkpoint(signer.name, size, root_of(leaves[:size])), signer)

    assert _post(remote.port, request_body(0, [], note(4)))[0] == 200
    sizes = list(range(5, 40))
    with ThreadPoolExecutor(8) as pool:
        answers = list(
            pool.map(
                lambda size: _post(
                    remote.port, request_body(4, tree.consistency(4, size), note(size))
                ),
                sizes,
            )
        )
    won = [size for size, (status, _, _) in zip(sizes, answers, strict=True) if status == 200]
    assert len(won) == 1, answers
    assert {status for status, _, _ in answers} == {200, 409}
    status, _, body = _post(remote.port, b"", "GET", "/checkpoint/example.test%2Flog")
    assert body.decode().split("\n")[1] == str(won[0])
