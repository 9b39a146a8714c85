"""A lock's maximum hold (``lease=``, ``Lock.extend``) and ``Lock.transfer``
against a real server."""

from __future__ import annotations

import time
from typing import Any, Dict, List

import pytest

import leasehold
from conftest import Proc, wait_until


def make_client(*endpoints: str, **kw: object) -> leasehold.Client:
    options: Dict[str, Any] = {"call_timeout": 10.0, **kw}
    return leasehold.Client(list(endpoints), **options)


def holders(client: leasehold.Client, name: str) -> List[leasehold.Holder]:
    info = client.lock_info(name)
    return [] if info is None else info.holders


def test_lease_bounds_the_safe_deadline_and_ends_the_hold(server: Proc) -> None:
    client = make_client(server.endpoint)
    with leasehold.Session(client, ttl=30.0) as s:
        before = time.monotonic()
        lock = s.lock("lease/a", wait=5.0, lease=0.5)
        lock.acquire()
        after = time.monotonic()
        drift = 0.01 * 0.5 + 0.002
        assert before + 0.5 - drift <= lock.safe_deadline() <= after + 0.5 - drift
        assert lock.safe_deadline() < s.safe_deadline()
        lock.check()
        # The client's deadline passes first; the server then ends the grant.
        wait_until(lambda: lock.lease_over, 10, "the lease's client-side deadline")
        with pytest.raises(leasehold.LockLost):
            lock.check()
        assert not lock.valid
        wait_until(lambda: not holders(client, "lease/a"), 10, "the server to end the grant at the lease")
        assert not s.lost, "a lease ends the lock, not the session"


def test_extend_moves_the_deadline_and_a_stale_extend_is_refused(server: Proc) -> None:
    client = make_client(server.endpoint)
    with leasehold.Session(client, ttl=30.0) as s:
        with s.lock("lease/b", wait=5.0, lease=2.0) as lock:
            first = lock.safe_deadline()
            lock.extend(20.0)
            assert lock.safe_deadline() > first + 10
            holder = client.lock_info("lease/b").holders[0]  # type: ignore[union-attr]
            with pytest.raises(leasehold.StaleToken):
                client.extend("lease/b", s.id, holder.token + 1, 1000)
        with s.lock("plain", wait=5.0) as plain:
            with pytest.raises(leasehold.Conflict):
                plain.extend(1.0)


def test_transfer_raises_the_token_and_refuses_a_dead_target(server: Proc) -> None:
    client = make_client(server.endpoint)
    with leasehold.Session(client, ttl=30.0) as a, leasehold.Session(client, ttl=30.0) as b:
        lock = a.lock("moved", wait=5.0)
        old = lock.acquire()
        with pytest.raises(leasehold.NotFound):
            lock.transfer(99_999_999)
        assert lock.held
        new = lock.transfer(b.id)
        assert new > old and not lock.held
        info = client.lock_info("moved")
        assert info is not None and info.holders[0].session == b.id and info.holders[0].token == new
        with pytest.raises(leasehold.StaleToken):
            client.fenced_put("moved/k", "v", "moved", old)
        assert client.fenced_put("moved/k", "v", "moved", new) == new
        client.call("LOCK.RELEASE", "moved", b.id, new)
