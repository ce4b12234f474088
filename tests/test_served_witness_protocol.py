"""The tlog-witness protocol as `gmtool witness serve` speaks it (issue 24, point 3): it
cosigns only a checkpoint its log's key signed that extends the one it holds, answers
everything else with the protocol's status codes, keeps its state across restarts and
under racing submissions, and hostile HTTP input gets a plain 4xx without stopping it.
Every witness here is a real process on a loopback port."""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path

import pytest
from helpers import clean_env
from witness_server import ServedWitness, call, log_key, obeying_file_modes, serving

from gmtool.evidence.cosign import CosignerKey
from gmtool.evidence.merkle import Tree, leaf_hash, root_of
from gmtool.evidence.note import Checkpoint, Signer, sign_checkpoint
from gmtool.evidence.tlog_witness import request_body


@pytest.fixture
def served():
    """`served(folder, *log_keys)`: a real `gmtool witness serve`, stopped after the test."""
    yield from serving()


def test_the_witness_refuses_an_inconsistent_checkpoint_and_keeps_its_state(
    tmp_path: Path, served
) -> None:
    signer, pub = log_key(tmp_path)
    leaves = [leaf_hash(f"record {i}".encode()) for i in range(20)]
    tree = Tree(lambda lo, hi: leaves[lo:hi])

    def note(size: int, root: bytes | None = None, by: Signer = signer) -> str:
        return sign_checkpoint(Checkpoint(by.name, size, root or root_of(leaves[:size])), by)

    remote = served(tmp_path / "w", pub)
    port = remote.port
    key = CosignerKey.parse(remote.public.read_text())
    status, _, body = call(port, request_body(0, [], note(5)))
    assert (
        status == 200
        and key.timestamp(
            Checkpoint(signer.name, 5, root_of(leaves[:5])).text(), body.decode().strip()
        )
        is not None
    )
    status, kind, body = call(port, request_body(0, [], note(9)))  # it holds 5, not 0
    assert (status, kind, body) == (409, "text/x.tlog.size", b"5\n")
    forked = [*leaves[:3], leaf_hash(b"rewritten"), *leaves[4:]]
    fork_root = root_of(forked[:9])
    bad_proof = Tree(lambda lo, hi: forked[lo:hi]).consistency(5, 9)
    status, _, _ = call(port, request_body(5, bad_proof, note(9, fork_root)))
    assert status == 422  # history before 5 rewritten: the proof cannot hold
    status, kind, body = call(port, request_body(5, [], note(5, fork_root)))
    assert (status, body) == (409, b"5\n")  # the same size with another root
    assert call(port, request_body(9, [], note(5)))[0] == 400  # old larger than the size
    stranger = Signer.generate(signer.name)
    assert call(port, request_body(5, tree.consistency(5, 9), note(9, by=stranger)))[0] == 403
    other = Signer.generate("other.test/log")
    assert call(port, request_body(0, [], note(3, by=other)))[0] == 404
    status, _, _ = call(port, request_body(5, tree.consistency(5, 9), note(9)))
    assert status == 200
    # its state survives a restart: it still holds 9
    assert remote.stop() == 0
    again = ServedWitness(tmp_path / "w", pub)
    try:
        status, kind, body = call(again.port, request_body(0, [], note(12)))
        assert (status, body) == (409, b"9\n")
        status, _, body = call(again.port, b"", "GET", "/checkpoint/example.test%2Flog")
        assert status == 200 and body.decode().startswith("example.test/log\n9\n")
    finally:
        again.stop()


def test_hostile_http_input_gets_a_clean_4xx_and_never_stops_the_witness(
    tmp_path: Path, served
) -> None:
    signer, pub = log_key(tmp_path)
    remote = served(tmp_path / "w", pub)
    port = remote.port
    stalled = socket.create_connection(("127.0.0.1", port))  # says nothing, holds a thread
    stalled.sendall(b"POST /add-checkpoint HTTP/1.1\r\nContent-Length: 100\r\n\r\nold")
    for body in (b"garbage", b"old 0\n\n", b"\xff\xfe\x00" * 100, b"old 01\n\nx\n", b"old -1\n\n"):
        assert call(port, body)[0] == 400, body
    too_many = request_body(0, [b"\x00" * 32] * 64, "x\n1\nAAAA\n\n- y z\n")
    assert call(port, too_many)[0] == 400
    for method in ("PUT", "DELETE", "PATCH", "OPTIONS", "BREW"):
        assert call(port, b"x", method)[0] == 405, method
    assert call(port, b"", "GET", "/add-checkpoint")[0] == 405
    assert call(port, b"", "GET", "/")[0] == 404
    assert call(port, b"", "GET", "/checkpoint/%ff")[0] == 400
    assert call(port, b"", "GET", "/checkpoint/nobody")[0] == 404
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
    assert call(port, request_body(0, [], note))[0] == 200
    stalled.close()
    assert remote.proc.poll() is None
    assert remote.stop() == 0


def test_witness_serve_refuses_bad_options_in_plain_words(tmp_path: Path, gm) -> None:
    _, pub = log_key(tmp_path)
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
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o555)
    run = subprocess.run(
        [*obeying_file_modes(), "witness", "serve", "--listen", "127.0.0.1:0"]
        + ["--state", str(locked), "--key", str(tmp_path / "k3"), "--log", str(pub)],
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 2 and "may not write there" in run.stderr, run.stderr
    assert not (tmp_path / "k3").exists() and not (tmp_path / "k").exists()  # nothing made


def test_concurrent_submissions_never_roll_the_witness_back(tmp_path: Path, served) -> None:
    """Checking the old size and saving the new checkpoint are one step: of many
    submissions racing from the same old size, exactly one is cosigned, and what the
    witness holds afterwards is that one."""
    from concurrent.futures import ThreadPoolExecutor

    signer, pub = log_key(tmp_path)
    leaves = [leaf_hash(f"record {i}".encode()) for i in range(40)]
    tree = Tree(lambda lo, hi: leaves[lo:hi])
    remote = served(tmp_path / "w", pub)

    def note(size: int) -> str:
        return sign_checkpoint(Checkpoint(signer.name, size, root_of(leaves[:size])), signer)

    assert call(remote.port, request_body(0, [], note(4)))[0] == 200
    sizes = list(range(5, 40))
    with ThreadPoolExecutor(8) as pool:
        answers = list(
            pool.map(
                lambda size: call(
                    remote.port, request_body(4, tree.consistency(4, size), note(size))
                ),
                sizes,
            )
        )
    won = [size for size, (status, _, _) in zip(sizes, answers, strict=True) if status == 200]
    assert len(won) == 1, answers
    assert {status for status, _, _ in answers} == {200, 409}
    status, _, body = call(remote.port, b"", "GET", "/checkpoint/example.test%2Flog")
    assert body.decode().split("\n")[1] == str(won[0])
