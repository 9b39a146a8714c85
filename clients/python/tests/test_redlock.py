"""Redlock over 5 real redis-server processes (and over leasehold compat keys)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator, List

import pytest
import redis

from conftest import Proc, leasehold_proc
from leasehold import Redlock
from leasehold.redlock import drift, validity_ms


def clients(procs: List[Proc]) -> List["redis.Redis[bytes]"]:
    return [redis.Redis(host="127.0.0.1", port=p.port, socket_timeout=5) for p in procs]


def redlock_on(procs: List[Proc], **kw: object) -> Redlock:
    return Redlock([p.endpoint for p in procs], server_timeout=2.0, **kw)  # type: ignore[arg-type]


def test_drift_and_validity_formula() -> None:
    assert drift(10000) == pytest.approx(102.0)
    assert validity_ms(10000, 500) == pytest.approx(9398.0)
    assert validity_ms(1000, 995) < 0


def test_majority_of_five_holds_and_others_are_refused(redis_servers: List[Proc]) -> None:
    rl = redlock_on(redis_servers)
    assert rl.quorum == 3
    lease = rl.lock("res", 10000)
    assert lease is not None and lease.granted_by == [0, 1, 2, 3, 4]
    assert 0 < lease.validity * 1000 <= 10000 - 102
    assert all(c.get("res") == lease.value.encode() for c in clients(redis_servers))
    other = redlock_on(redis_servers, retry_count=2, retry_delay=0.05)
    assert other.lock("res", 10000) is None
    assert all(c.get("res") == lease.value.encode() for c in clients(redis_servers)), \
        "the loser's attempts changed nothing"
    assert rl.unlock(lease) == 5
    assert all(c.get("res") is None for c in clients(redis_servers)), "released on all"


def test_majority_rule_counts_servers(redis_servers: List[Proc]) -> None:
    cs = clients(redis_servers)
    for c in cs[:2]:
        c.set("m", "someone-else", px=60000)
    lease = redlock_on(redis_servers).lock("m", 10000)
    assert lease is not None and lease.granted_by == [2, 3, 4], "3 of 5 is a majority"
    redlock_on(redis_servers).unlock(lease)
    assert [c.get("m") for c in cs] == [b"someone-else"] * 2 + [None] * 3, "only our value is deleted"
    cs[2].set("m", "someone-else", px=60000)
    assert redlock_on(redis_servers, retry_count=1).lock("m", 10000) is None, "2 of 5 is not"
    assert [c.get("m") for c in cs] == [b"someone-else"] * 3 + [None] * 2, "the partial grant was released"


def test_validity_subtracts_elapsed_time_and_drift(redis_servers: List[Proc]) -> None:
    ticks = iter([100.0, 100.5])
    rl = Redlock([p.endpoint for p in redis_servers], server_timeout=2.0, clock=lambda: next(ticks))
    lease = rl.try_once("v", 10000)
    assert lease is not None
    assert lease.validity == pytest.approx((10000 - 500 - 102) / 1000)
    assert lease.acquired_at == 100.0
    rl.unlock(lease)
    ticks = iter([0.0, 9.95])  # 9950 ms elapsed + 102 ms drift > 10000 ms: not held
    rl = Redlock([p.endpoint for p in redis_servers], server_timeout=2.0, clock=lambda: next(ticks))
    assert rl.try_once("v", 10000) is None
    assert all(c.get("v") is None for c in clients(redis_servers)), "released after a too-slow attempt"


def test_two_of_five_down_still_locks_three_down_does_not(redis_servers: List[Proc]) -> None:
    redis_servers[1].kill()
    redis_servers[3].kill()
    rl = redlock_on(redis_servers)
    lease = rl.lock("d", 10000)
    assert lease is not None and lease.granted_by == [0, 2, 4]
    assert rl.unlock(lease) == 3
    redis_servers[4].kill()
    assert redlock_on(redis_servers, retry_count=2, retry_delay=0.05).lock("d", 10000) is None
    live = clients([redis_servers[0], redis_servers[2]])
    assert all(c.get("d") is None for c in live), "no key left behind on the live servers"


@pytest.fixture
def leasehold_servers(tmp_path: Path) -> Iterator[List[Proc]]:
    procs = [leasehold_proc(tmp_path, f"lh{i}") for i in range(3)]
    for p in procs:
        p.start()
    yield procs
    for p in procs:
        p.stop()


def test_redlock_over_leasehold_compat_keys(leasehold_servers: List[Proc]) -> None:
    rl = redlock_on(leasehold_servers)
    lease = rl.lock("lh", 10000)
    assert lease is not None and lease.granted_by == [0, 1, 2]
    assert redlock_on(leasehold_servers, retry_count=1).lock("lh", 10000) is None
    assert rl.unlock(lease) == 3, "the compare-and-delete script runs natively"
    assert all(c.get("lh") is None for c in clients(leasehold_servers))
