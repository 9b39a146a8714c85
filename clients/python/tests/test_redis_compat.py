"""Existing redis-py lock code against leasehold, unchanged (docs/redis-compat.md)."""

from __future__ import annotations

import hashlib
import time

import pytest
import redis
from redis.exceptions import LockNotOwnedError, NoScriptError, ResponseError
from redis.lock import Lock

from conftest import Proc, wait_until


@pytest.fixture
def r(server: Proc) -> "redis.Redis[bytes]":
    client = redis.Redis(host="127.0.0.1", port=server.port, socket_timeout=10)
    Lock.lua_release = Lock.lua_extend = Lock.lua_reacquire = None  # re-register per server
    return client


def test_redis_py_sends_the_catalogued_scripts() -> None:
    # The SHA1s leasehold knows (server/commands/script_catalog.cc) are the ones this redis-py computes.
    shas = {hashlib.sha1(s.encode()).hexdigest() for s in
            (Lock.LUA_RELEASE_SCRIPT, Lock.LUA_EXTEND_SCRIPT, Lock.LUA_REACQUIRE_SCRIPT)}
    assert shas == {"c3f8721cbb97f72bc19e972846bd7aaf91901658", "a4e8783852e6b949f9ef3a97212805108459a890",
                    "1cac51482acf5858da00f6d685d68f886cd6b6b2"}


def test_lock_acquire_extend_reacquire_release(r: "redis.Redis[bytes]") -> None:
    lock = r.lock("x", timeout=5)
    assert lock.acquire(blocking=False)
    assert lock.owned() and lock.locked()
    other = r.lock("x", timeout=5)
    assert not other.acquire(blocking=False), "held: a second holder is refused"
    assert 0 < r.pttl("x") <= 5000
    assert lock.extend(20)  # adds to the remaining TTL
    assert 20000 < r.pttl("x") <= 25000
    assert lock.extend(8, replace_ttl=True)
    assert 5000 < r.pttl("x") <= 8000
    assert lock.reacquire()  # back to timeout=5
    assert 0 < r.pttl("x") <= 5000
    lock.release()
    assert r.get("x") is None
    assert other.acquire(blocking=False), "released: the key is free again"
    other.release()


def test_context_manager_and_not_owned_release(r: "redis.Redis[bytes]") -> None:
    with r.lock("job", timeout=5, blocking_timeout=2) as lock:
        assert lock.owned()
    assert r.get("job") is None
    lock = r.lock("short", timeout=0.3)
    assert lock.acquire()
    wait_until(lambda: r.get("short") is None, 10, "the 300 ms key to expire")
    with pytest.raises(LockNotOwnedError):
        lock.release()
    late = r.lock("short", timeout=0.3)
    assert late.acquire()
    assert late.extend(5), "owned: extend works"
    with pytest.raises(LockNotOwnedError):
        late.do_release(b"someone-else")  # a wrong token never deletes
    assert r.get("short") is not None
    late.release()
    assert r.get("short") is None


def test_blocking_acquire_waits_for_release(r: "redis.Redis[bytes]") -> None:
    holder = r.lock("b", timeout=1)
    assert holder.acquire()
    start = time.monotonic()
    waiter = r.lock("b", timeout=5, sleep=0.02, blocking_timeout=20)
    assert waiter.acquire(), "granted once the holder's 1 s expired"
    assert time.monotonic() - start > 0.5  # checks elapsed time on purpose: not granted before the expiry
    waiter.release()


def test_unknown_script_is_refused_with_the_native_alternative(r: "redis.Redis[bytes]") -> None:
    with pytest.raises(ResponseError, match="DELIFEQ"):
        r.eval("return redis.call('flushall')", 0)
    script = r.register_script("return 42")
    with pytest.raises(ResponseError, match="leasehold runs no Lua"):
        script()
    with pytest.raises(NoScriptError):
        r.evalsha("f" * 40, 0)


def test_canonical_release_by_eval_and_evalsha(r: "redis.Redis[bytes]") -> None:
    canonical = 'if redis.call("get",KEYS[1]) == ARGV[1] then\n    return redis.call("del",KEYS[1])\nelse\n    return 0\nend'
    assert r.set("c", "me", nx=True, px=10000)
    assert r.eval(canonical, 1, "c", "you") == 0
    assert r.eval(canonical, 1, "c", "me") == 1
    sha = r.script_load(canonical)
    assert sha == hashlib.sha1(canonical.encode()).hexdigest()
    assert r.script_exists(sha) == [True]
    assert r.set("c", "me2", px=10000)
    assert r.evalsha(sha, 1, "c", "me2") == 1
    assert r.config_get("appendonly") == {"appendonly": "yes"} or r.config_get("appendonly") == {b"appendonly": b"yes"}


def test_set_without_expiry_is_refused_naming_px(r: "redis.Redis[bytes]") -> None:
    # A key is a lock here, and every lock must end: a plain SET is refused
    # and changes nothing; redis-py's Lock always sends PX and is unaffected.
    with pytest.raises(ResponseError, match="needs PX .* a lock without expiry would never be freed"):
        r.set("plain", "v")
    with pytest.raises(ResponseError, match="needs PX"):
        r.set("plain", "v", nx=True)
    assert r.get("plain") is None
    assert r.pttl("plain") == -2
    assert r.set("plain", "v", nx=True, px=30000)
    assert 0 < r.pttl("plain") <= 30000
