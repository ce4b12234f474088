"""Table leases (issue 26, store/table_leases.py): one live host a table, taken over only
after its expiry, a fencing token that never repeats, on both backends."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from backends import BACKENDS, SetClock, location, pg_server_fixture  # noqa: F401
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gmtool.store import table_leases
from gmtool.store.db import open_location
from gmtool.store.table_leases import Lease

TTL = 10.0


@pytest.fixture(params=BACKENDS)
def leased(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple]:
    """(store, clock, where): a fresh store of each backend on a clock the test sets."""
    where = location(request.param, tmp_path, request)
    clock = SetClock()
    with open_location(where, create=True, clock=clock, postgres=True) as store:
        yield store, clock, where


def test_a_free_table_is_taken_and_another_host_waits_for_its_expiry(leased) -> None:
    store, clock, _ = leased
    first = table_leases.take(store, "t1", "host-a", TTL)
    assert first == Lease("t1", "host-a", 1, clock.at + TTL)
    clock.at += TTL - 0.5
    assert table_leases.take(store, "t1", "host-b", TTL) is None
    assert table_leases.holder(store, "t1") == first
    clock.at += 0.5  # the expiry itself: the lease is over
    second = table_leases.take(store, "t1", "host-b", TTL)
    assert second == Lease("t1", "host-b", 2, clock.at + TTL, taken_from="host-a")


def test_a_holder_renews_with_its_token_and_a_taken_over_lease_is_lost(leased) -> None:
    store, clock, _ = leased
    a1 = table_leases.take(store, "t1", "host-a", TTL)
    a2 = table_leases.take(store, "t2", "host-a", TTL)
    assert a1 and a2
    clock.at += 5
    renewed, lost = table_leases.renew(store, [a1, a2], TTL)
    assert [lease.expires for lease in renewed] == [clock.at + TTL] * 2
    assert [lease.token for lease in renewed] == [1, 1] and lost == []
    clock.at += TTL + 1  # host-a held up past its expiry: host-b takes t2 over
    b2 = table_leases.take(store, "t2", "host-b", TTL)
    assert b2 is not None and b2.taken_from == "host-a"
    renewed, lost = table_leases.renew(store, renewed, TTL)
    assert [lease.table_id for lease in renewed] == ["t1"]  # expired, but nobody took it
    assert [lease.table_id for lease in lost] == ["t2"]
    assert table_leases.holder(store, "t2") == Lease("t2", "host-b", 2, b2.expires)


def test_a_write_checks_its_lease_in_its_transaction(leased) -> None:
    store, clock, _ = leased
    old = table_leases.take(store, "t1", "host-a", TTL)
    assert old is not None
    with store.write():
        assert table_leases.still_held(store, old)
    clock.at += TTL
    new = table_leases.take(store, "t1", "host-b", TTL)
    assert new is not None
    with store.write():
        assert not table_leases.still_held(store, old)  # the old holder's write must stop
        assert table_leases.still_held(store, new)


def test_a_released_table_is_free_and_its_next_token_is_higher(leased) -> None:
    store, _, _ = leased
    a = table_leases.take(store, "t1", "host-a", TTL)
    assert a is not None and table_leases.release(store, a)
    assert table_leases.holder(store, "t1") is None and table_leases.leases(store) == []
    assert not table_leases.release(store, a)  # twice: nothing more to give up
    b = table_leases.take(store, "t1", "host-b", TTL)  # at once: no expiry to wait for
    assert b is not None and b.token == 2 and b.taken_from is None
    assert table_leases.renew(store, [a], TTL) == ([], [a])  # a released lease stays lost
    assert table_leases.leases(store) == [b]


@pytest.mark.parametrize("host, ttl", [("", TTL), ("  ", TTL), ("h", 0.5), ("h", float("nan"))])
def test_a_lease_needs_a_host_and_a_time_it_can_be_renewed_in(leased, host, ttl) -> None:
    store, _, _ = leased
    with pytest.raises(ValueError):
        table_leases.take(store, "t1", host, ttl)
    assert table_leases.leases(store) == []


RACER = textwrap.dedent(
    """
    import json, sys
    from gmtool.store import table_leases
    from gmtool.store.db import open_location
    where, host, ready, go = sys.argv[1:5]
    with open_location(where, postgres=True, write=True) as store:
        open(ready, "w").close()
        while not __import__("os").path.exists(go):
            pass
        won = [t for t in ("t%d" % i for i in range(20))
               if table_leases.take(store, t, host, 60.0) is not None]
    print(json.dumps(won))
    """
)


def test_hosts_racing_for_the_same_tables_get_each_table_once(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Four real processes take the same twenty tables at the same moment, on each
    backend: every table goes to exactly one of them, the one the store names."""
    for backend in BACKENDS:
        where = location(backend, tmp_path / backend, request)
        (tmp_path / backend).mkdir()
        with open_location(where, create=True, postgres=True):
            pass
        go = tmp_path / backend / "go"
        racers = []
        for n in range(4):
            ready = tmp_path / backend / f"ready-{n}"
            racers.append(
                (
                    ready,
                    subprocess.Popen(
                        [sys.executable, "-c", RACER, where, f"host-{n}", str(ready), str(go)],
                        stdout=subprocess.PIPE,
                        text=True,
                    ),
                )
            )
        while not all(ready.exists() or racer.poll() is not None for ready, racer in racers):
            pass
        go.touch()
        won = {}
        for n, (_, racer) in enumerate(racers):
            out, _ = racer.communicate(timeout=120)
            assert racer.returncode == 0
            for table in json.loads(out):
                assert table not in won, f"{table} taken by host-{n} and {won[table]}"
                won[table] = f"host-{n}"
        with open_location(where, postgres=True) as store:
            held = {lease.table_id: lease.host for lease in table_leases.leases(store)}
        assert held == won and len(won) == 20, backend


OPS = st.lists(
    st.tuples(
        st.sampled_from(["take", "renew", "release"]),
        st.sampled_from(["host-a", "host-b", "host-c"]),
        st.floats(min_value=0, max_value=2 * TTL),
    ),
    max_size=30,
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ops=OPS)
def test_a_token_is_never_given_to_two_holders(tmp_path_factory, ops) -> None:
    """Whatever hosts do, in any order and at any times, a table's token rises with every
    change of holder and is never handed to two hosts; at most one unexpired lease."""
    clock = SetClock()
    where = tmp_path_factory.mktemp("leases") / "store.db"
    with open_location(str(where), create=True, clock=clock) as store:
        held: dict[str, Lease] = {}
        owner_of_token: dict[int, str] = {}
        for op, host, wait in ops:
            clock.at += wait
            if op == "take":
                lease = table_leases.take(store, "t", host, TTL)
                if lease is not None:
                    held[host] = lease
            elif op == "renew" and host in held:
                renewed, _ = table_leases.renew(store, [held[host]], TTL)
                held.update({host: renewed[0]} if renewed else {})
            elif op == "release" and host in held:
                table_leases.release(store, held.pop(host))
            now = table_leases.holder(store, "t")
            if now is not None:
                assert owner_of_token.setdefault(now.token, now.host) == now.host
                assert now.token == max(owner_of_token)
            with store.write():
                writers = [h for h, lease in held.items() if table_leases.still_held(store, lease)]
            assert len(writers) <= 1  # one host at most may write for the table
