"""A GM command has exactly one fate, logged (issue 14): its signed request is logged when
it is made; a command the console withdrew is never carried out, even if a host had
already picked it up; a command a host took is never reported to the GM as withdrawn; a
command whose request does not verify is refused by the host; a command a killed host had
taken is logged as interrupted by the next host; a console that dies while waiting
leaves a command the host logs as withdrawn and never carries out (issue 24)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import gm_identity, query, until

from gmtool.evidence.note import sign
from gmtool.house import lease
from gmtool.house.lease import ConsoleLease
from gmtool.ops.gm import sign_request
from gmtool.store import gm as gm_store

OPERATOR = "boss"


def _hosting(tmp_path: Path, gm, virtual_host, **options):
    """A host playing two tables, and (table, player) of a running hand."""
    db = tmp_path / "fates.db"
    gm.deploy_all(db)
    gm.add_roles(db)
    host = virtual_host(db, tables=2, seed="fates", **options)
    return host, host.run_until(host.running_players, what="a running hand")[0]


def _held_lease(db: Path, request: str, note: str):
    """What an attacker who can write the store's folder leaves: the command's lease
    file holding `note`, its lock held by a process of theirs (not the console's)."""
    import fcntl
    import os

    fd = os.open(lease.lease_path(db, request), os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    os.write(fd, note.encode())
    return fd


def _queue(store, table_id: str, player: str, reason: str, by: str = OPERATOR) -> int:
    """A kick queued as the console queues it: with `by`'s signed request."""
    request = sign_request(store, gm_identity(by), "kick", f"{table_id}/{player}", reason, {})
    return gm_store.enqueue(store, "kick", table_id, player, reason, by, request)


def _fates(db: Path, command_id: int) -> list[dict]:
    """The GM actions that log the command's fate."""
    rows = query(db, "SELECT outcome FROM gm_actions")
    return [o for o in (json.loads(r["outcome"]) for r in rows) if o.get("command") == command_id]


def _answered(host, command_id: int) -> None:
    """Run the host until the command has a fate (carried out, refused or withdrawn)."""
    host.run_until(
        lambda: gm_store.command(host.store, command_id)["status"] != "pending",
        what="the host's answer",
    )


def test_a_withdrawn_command_is_never_carried_out(tmp_path: Path, gm, virtual_host) -> None:
    host, (table_id, player) = _hosting(tmp_path, gm, virtual_host)
    store = host.store
    command_id = _queue(store, table_id, player, "late kick")
    command = gm_store.command(store, command_id)
    table = host.host.tables[table_id]
    # The host has picked the command up (it is in the table's queue) when the console,
    # tired of waiting, withdraws it; the table then reaches its queue.
    table.commands.put_nowait(command)
    assert gm_store.expire(store, command_id, {"ok": False, "error": "withdrawn"}) is True
    table.wake.set()
    host.advance(2)
    assert gm_store.command(store, command_id)["status"] == "expired"
    assert player in host.host.tables[table_id].seated  # still there: not kicked
    assert [f["error"] for f in _fates(Path(store.path), command_id)] == ["withdrawn"]


def test_a_taken_command_is_not_withdrawn(tmp_path: Path, gm, virtual_host) -> None:
    host, (table_id, player) = _hosting(tmp_path, gm, virtual_host)
    store = host.store
    command_id = _queue(store, table_id, player, "taken")
    assert gm_store.claim(store, command_id, lambda command: None) is True  # a host took it
    assert gm_store.expire(store, command_id, {"ok": False}) is False  # not withdrawn now
    assert gm_store.command(store, command_id)["status"] == "taken"
    assert gm_store.claim(store, command_id, lambda command: None) is False  # taken once


def test_a_command_whose_console_died_is_withdrawn_not_carried_out(
    tmp_path: Path, gm, virtual_host
) -> None:
    """Issue 24 point 1: the request is logged when it is made, but with nobody waiting
    for the answer (no console holds the command's lease: it was killed) the host logs
    the command as withdrawn and never carries it out."""
    host, (table_id, player) = _hosting(tmp_path, gm, virtual_host)
    command_id = _queue(host.store, table_id, player, "console killed")
    _answered(host, command_id)
    assert gm_store.command(host.store, command_id)["status"] == "withdrawn"
    (fate,) = _fates(Path(host.store.path), command_id)
    assert fate["ok"] is False and fate["error"].startswith("withdrawn: the console"), fate
    assert "kicked" not in fate
    assert [m for m in host.messages if f"command {command_id} " in m and "withdrawn" in m]


def test_a_command_whose_console_waits_is_carried_out(tmp_path: Path, gm, virtual_host) -> None:
    """The same command, its console holding the lease (alive, waiting): carried out."""
    host, (table_id, player) = _hosting(tmp_path, gm, virtual_host)
    boss = gm_identity(OPERATOR)
    request = sign_request(host.store, boss, "kick", f"{table_id}/{player}", "waits", {})
    with ConsoleLease(host.store.path, request, boss.signer) as waiting:
        command_id = gm_store.enqueue(
            host.store, "kick", table_id, player, "waits", OPERATOR, request
        )

        def answered() -> bool:
            waiting.renew(host.now())  # as the console does while it waits
            return gm_store.command(host.store, command_id)["status"] != "pending"

        host.run_until(answered, what="the host's answer")
    assert gm_store.command(host.store, command_id)["status"] == "done"
    (fate,) = _fates(Path(host.store.path), command_id)
    assert fate["ok"] and fate["kicked"] == player


def test_a_command_without_a_valid_signature_is_refused_by_the_host(
    tmp_path: Path, gm, virtual_host
) -> None:
    """A command row written into the store by hand (no request, or one signed by a key
    nobody registered) is refused by the host, which logs the refusal; nobody is kicked."""
    host, (table_id, player) = _hosting(tmp_path, gm, virtual_host)
    store = host.store
    unsigned = gm_store.enqueue(store, "kick", table_id, player, "inserted", OPERATOR, None)
    forged = _queue(store, table_id, player, "forged", by="mallory")
    with store.write():  # mallory's request, claimed to be the operator's
        store.conn.execute("UPDATE gm_commands SET issued_by = ? WHERE id = ?", (OPERATOR, forged))
    host.run_until(
        lambda: all(gm_store.command(store, c)["status"] != "pending" for c in (unsigned, forged)),
        what="the host's answers",
    )
    for command_id in (unsigned, forged):
        assert gm_store.command(store, command_id)["status"] == "failed"
        (fate,) = _fates(Path(store.path), command_id)
        assert fate["ok"] is False and "request" in fate["refused"], fate
    assert player in host.host.tables[table_id].seated or not host.running_players()


def test_a_command_a_killed_host_had_taken_is_logged_as_interrupted(
    tmp_path: Path, gm, virtual_host
) -> None:
    """A host that took a command and died before answering leaves it 'taken'; the next
    host logs it as interrupted before it plays, so it has a fate and is never redone."""
    host, (table_id, player) = _hosting(tmp_path, gm, virtual_host)
    store = host.store
    command_id = _queue(store, table_id, player, "host dies")
    assert gm_store.claim(store, command_id, lambda command: None)
    host.stop()
    virtual_host(Path(store.path), tables=2, seed="fates")  # the store's key: its seed
    assert gm_store.command(store, command_id)["status"] == "interrupted"
    (fate,) = _fates(Path(store.path), command_id)
    assert fate["ok"] is False and "stopped while carrying" in fate["error"]
    gm("audit", "--db", store.path)


def _outcome_with_lease_held(tmp_path: Path, gm, virtual_host, note_for) -> tuple[str, dict]:
    """A kick whose console is gone while someone else holds its lease, the lease file
    holding `note_for(request)`: the command's status and its logged fate."""
    import os

    host, (table_id, player) = _hosting(tmp_path, gm, virtual_host)
    boss = gm_identity(OPERATOR)
    request = sign_request(host.store, boss, "kick", f"{table_id}/{player}", "held", {})
    fd = _held_lease(Path(host.store.path), request, note_for(request))
    try:
        command_id = gm_store.enqueue(
            host.store, "kick", table_id, player, "held", OPERATOR, request
        )
        _answered(host, command_id)
    finally:
        os.close(fd)
    (fate,) = _fates(Path(host.store.path), command_id)
    return gm_store.command(host.store, command_id)["status"], fate


def _word(request: str, age: float, signer=None) -> str:
    """The console's signed word for `request`, written `age` seconds ago."""
    from gmtool.store.clock import SYSTEM

    signer = signer or gm_identity(OPERATOR).signer
    return sign(lease._word(request, SYSTEM.wall() - age), signer)


STALE_WORDS = {
    "pid only": lambda request: "12345\n",  # a lock and a pid: what a lease held before
    "dead console's last word": lambda request: _word(request, lease.FRESH_S + 30),
    "another key's word": lambda request: _word(request, 0, gm_identity("mallory").signer),
    "another request's word": lambda request: _word(request.replace("held", "hold"), 0),
}


@pytest.mark.parametrize("note_for", STALE_WORDS.values(), ids=STALE_WORDS.keys())
def test_a06_a_killed_consoles_lock_held_by_another_is_not_its_word(
    tmp_path: Path, gm, virtual_host, note_for
) -> None:
    """Outside probe a06: the console was killed and someone holds its lease's lock. The
    lock alone is not the console's word: with the old pid-only file, a stale signed word
    (its last, written before it died), or a word signed by another key or for another
    request, the host logs the command as withdrawn and nobody is kicked."""
    status, fate = _outcome_with_lease_held(tmp_path, gm, virtual_host, note_for)
    assert status == "withdrawn", fate
    assert fate["error"].startswith("withdrawn: the console") and "kicked" not in fate


def _held_lease_with_a_fresh_word(tmp_path: Path, gm, virtual_host):
    """A kick whose lease's lock is held by a process that is not a console, the file
    holding the GM's word written just before the kick was queued (a console killed right
    after it queued it): the host, the command, the lease's fd, and (table, player)."""
    host, (table_id, player) = _hosting(tmp_path, gm, virtual_host)
    request = sign_request(
        host.store, gm_identity(OPERATOR), "kick", f"{table_id}/{player}", "held", {}
    )
    fd = _held_lease(Path(host.store.path), request, _word(request, 0))
    command_id = gm_store.enqueue(host.store, "kick", table_id, player, "held", OPERATOR, request)
    host.advance(10)  # ten seconds of play: the host looks at its queue every 0.2 s
    return host, command_id, request, fd, (table_id, player)


def test_a06_a_word_from_before_the_host_saw_the_command_never_carries_it_out(
    tmp_path: Path, gm, virtual_host
) -> None:
    """Outside probe a06, started at once: the killed console's last word is fresh but
    was written before the host first saw the command. The host neither claims it nor
    withdraws it however long it plays; once the lock is free, it withdraws it. Nobody
    is kicked."""
    import os

    host, command_id, _, fd, (table_id, player) = _held_lease_with_a_fresh_word(
        tmp_path, gm, virtual_host
    )
    try:
        assert gm_store.command(host.store, command_id)["status"] == "pending"
        assert _fates(Path(host.store.path), command_id) == []
    finally:
        os.close(fd)  # the lock is free: nobody waits
    _answered(host, command_id)
    status, (fate,) = (
        gm_store.command(host.store, command_id)["status"],
        _fates(Path(host.store.path), command_id),
    )
    assert status == "withdrawn" and "kicked" not in fate, fate
    assert not [e for e in _events(Path(host.store.path), "kick") if e.get("player") == player], (
        table_id
    )


def test_a06_a_word_written_after_the_host_saw_the_command_is_a_waiting_console(
    tmp_path: Path, gm, virtual_host
) -> None:
    """The control: the same held lock, and the GM's word written anew after the host
    saw the command (what a console that waits does every REFRESH_S): the kick is
    carried out, so the wait above is the old word's doing."""
    import os

    host, command_id, request, fd, _ = _held_lease_with_a_fresh_word(tmp_path, gm, virtual_host)
    try:
        assert command_id in host.host.seen  # when the host first saw it
        os.pwrite(fd, _word(request, 0).encode(), 0)
        _answered(host, command_id)
    finally:
        os.close(fd)
    (fate,) = _fates(Path(host.store.path), command_id)
    assert gm_store.command(host.store, command_id)["status"] == "done", fate
    assert fate["ok"] and "kicked" in fate, fate


def _events(db: Path, kind: str) -> list[dict]:
    return [
        json.loads(r[0]) for r in query(db, "SELECT payload FROM events WHERE type = ?", (kind,))
    ]


def test_a06_a_killed_console_whose_lock_another_process_holds_is_withdrawn(
    deployed_db: Path, gm
) -> None:
    """Outside probe a06 with real processes: a console waiting for a close is killed
    with `kill -9`, another process takes its lease's lock at once (the killed console's
    last word, seconds old, still in the file) and a host starts right after. The host
    sees the command after the console died, so no word written after that exists: it
    never closes the table, and withdraws the close once the word has gone stale
    (`FRESH_S`), the lock still held."""
    import fcntl
    import os
    import signal
    import subprocess

    from conftest import LiveHost
    from helpers import clean_env, gmtool_command

    db = deployed_db
    run = gm(
        "house", "run", "--db", db, "--system", "qq-showhand", "--tables", "1",
        "--speed", "200", "--hands", "1", "--seed", "a06",
    )  # fmt: skip
    assert "stopped:" in run.stdout, run.stdout
    (table,) = [r[0] for r in query(db, "SELECT id FROM tables WHERE status = 'stopped'")]
    console = subprocess.Popen(
        [*gmtool_command(), "tables", "close", table, "--wait", "--timeout", "600"]
        + ["--db", str(db), "--as", OPERATOR],
        env=clean_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    host = None
    fd = None
    try:
        (command,) = until(
            lambda: query(db, "SELECT id, request FROM gm_commands"),
            "the console's command in the store",
        )
        console.kill()
        console.communicate(timeout=120)
        assert console.returncode == -signal.SIGKILL
        fd = os.open(lease.lease_path(db, command["request"]), os.O_RDWR)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # the lock, held by another process
        host = LiveHost(db, "--system", "qq-showhand", "--tables", "1", "--speed", "20")
        fate_said = host.wait_for_line(rf"command {command['id']} \(close {table}\): ")
        assert fate_said.string.endswith("withdrawn: the console that sent it is gone")
        assert host.stop() == 0
    finally:
        if host is not None:
            host.kill()
        if fd is not None:
            os.close(fd)
        console.kill()
    status = query(db, "SELECT status FROM gm_commands WHERE id = ?", (command["id"],))[0][0]
    assert status == "withdrawn", host.output
    assert "closed" not in host.output, host.output
    # left pending at the start (its word was fresh), withdrawn once it went stale
    assert f"pending: GM command(s) {command['id']} carried out only once" in host.output
    assert query(db, "SELECT status FROM tables WHERE id = ?", (table,))[0][0] == "stopped"
    (fate,) = _fates(db, command["id"])
    assert fate["fate"] == "withdrawn" and "closed" not in fate, fate
