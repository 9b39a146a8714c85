"""Three leasehold shards and Redis Cluster clients, unchanged (docs/scale-out.md).

Debian's redis-py ``RedisCluster`` (4.3) finds the shards through
``CLUSTER SLOTS`` and routes every name by its hash slot: SET NX PX, GET,
DELETE, ``r.lock()`` (acquire, extend, release through its Lua scripts,
which leasehold recognises), the Redis docs' compare-and-delete script via
EVAL, and a ``-MOVED`` followed after the map changed while the shards were
down. ``redis-cli -c`` follows redirects between the shards that
``scripts/shards.sh up 3`` starts.

The process fixtures are the Python client suite's (clients/python/tests/conftest.py).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Iterator, List

import pytest
import redis
from redis.cluster import RedisCluster

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "clients" / "python" / "tests"))
from conftest import Proc, free_port, leasehold_binary, port_open, scaled, wait_until  # noqa: E402

EVEN = ["0-5460", "5461-10922", "10923-16383"]
RELEASE = """if redis.call("get",KEYS[1]) == ARGV[1] then
    return redis.call("del",KEYS[1])
else
    return 0
end"""


class Shards:
    """Three shard processes on fixed ports, their map given at each start."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.slots = list(EVEN)
        self.procs = [Proc(self._argv(i), tmp_path / f"shard-{i + 1}.log") for i in range(3)]
        for p in self.procs:
            p.port = free_port()

    def _argv(self, index: int):
        def argv(port: int) -> List[str]:
            flags = [leasehold_binary(), "server", "--listen", f"127.0.0.1:{port}",
                     "--data-dir", str(self.tmp_path / f"shard-{index + 1}"), "--log-level", "warn",
                     "--shard-id", str(index + 1), "--shard-slots", self.slots[index]]
            for j, p in enumerate(self.procs):
                if j != index:
                    flags += ["--shard-peers", f"{j + 1}@127.0.0.1:{p.port}={self.slots[j]}"]
            return flags
        return argv

    def start(self) -> None:
        for p in self.procs:
            p.start(same_port=True)

    def stop(self) -> None:
        for p in self.procs:
            p.stop()

    def owner(self, slot: int) -> int:
        for i, text in enumerate(self.slots):
            first, last = (int(x) for x in text.split("-"))
            if first <= slot <= last:
                return i
        raise AssertionError(f"slot {slot} has no owner")


@pytest.fixture
def shards(tmp_path: Path) -> Iterator[Shards]:
    s = Shards(tmp_path)
    s.start()
    yield s
    s.stop()


def cluster_client(shards: Shards) -> RedisCluster:
    return RedisCluster(host="127.0.0.1", port=shards.procs[0].port, decode_responses=True,
                        socket_timeout=scaled(10))


def test_set_get_delete_route_to_the_owner(shards: Shards) -> None:
    rc = cluster_client(shards)
    names = [f"name-{i}" for i in range(40)]
    owners = {shards.owner(rc.keyslot(n)) for n in names}
    assert owners == {0, 1, 2}
    for n in names:
        assert rc.set(n, "v-" + n, nx=True, px=30000)
        assert not rc.set(n, "other", nx=True, px=30000)
        assert rc.get(n) == "v-" + n
        # It is stored on the shard that owns its slot, and only there.
        owner = shards.owner(rc.keyslot(n))
        direct = redis.Redis(port=shards.procs[owner].port, decode_responses=True)
        assert direct.get(n) == "v-" + n
        stranger = redis.Redis(port=shards.procs[(owner + 1) % 3].port, decode_responses=True)
        with pytest.raises(redis.exceptions.ResponseError, match=f"^MOVED {rc.keyslot(n)} "):
            stranger.get(n)
    for n in names:
        assert rc.delete(n) == 1
        assert rc.get(n) is None
    assert rc.cluster_keyslot("{user1000}.following") == rc.keyslot("user1000")
    rc.close()


def test_lock_and_the_release_script(shards: Shards) -> None:
    rc = cluster_client(shards)
    for name in ("lock-a", "lock-b", "lock-c", "{lock-a}.other"):
        lock = rc.lock(name, timeout=10)
        assert lock.acquire(blocking=False)
        assert not rc.lock(name, timeout=10).acquire(blocking=False)
        assert lock.extend(5)
        assert 10_000 < rc.pttl(name) <= 15_000
        assert lock.reacquire()
        lock.release()
        assert rc.get(name) is None
        again = rc.lock(name, timeout=10)
        assert again.acquire(blocking=False)
        again.release()

    assert rc.set("plain", "token-1", nx=True, px=30000)
    assert rc.eval(RELEASE, 1, "plain", "not-mine") == 0
    assert rc.eval(RELEASE, 1, "plain", "token-1") == 1
    assert rc.get("plain") is None
    rc.close()


def test_a_moved_is_followed_after_the_map_changed(shards: Shards) -> None:
    rc = cluster_client(shards)
    name = next(f"mover-{i}" for i in range(10_000) if 5461 <= rc.keyslot(f"mover-{i}") <= 8191)
    assert shards.owner(rc.keyslot(name)) == 1
    assert rc.set(name, "before", px=60000)

    # While the shards are down, shard 1 takes 0-8191 (and the key's slot).
    shards.stop()
    shards.slots = ["0-8191", "8192-10922", "10923-16383"]
    shards.start()
    # The client's map is stale; its connections were to the old processes.
    for node in rc.get_nodes():
        node.redis_connection.connection_pool.disconnect()
    assert rc.nodes_manager.get_node_from_slot(rc.keyslot(name)).port == shards.procs[1].port
    # Shard 2 answers -MOVED to shard 1, which redis-py follows; the key
    # stayed with shard 2's data, so shard 1 does not have it.
    assert rc.get(name) is None
    assert rc.nodes_manager.get_node_from_slot(rc.keyslot(name)).port == shards.procs[0].port
    assert rc.set(name, "after", nx=True, px=60000)
    assert rc.get(name) == "after"
    rc.close()


def _three_free_ports() -> int:
    for _ in range(50):
        base = free_port()
        if base + 2 < 65536 and all(_bindable(base + k) for k in range(3)):
            return base
    pytest.fail("no three consecutive free ports")


def _bindable(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def test_shards_script_and_redis_cli(tmp_path: Path) -> None:
    base = _three_free_ports()
    env = dict(os.environ, LEASEHOLD=leasehold_binary(), SHARDS_BASE_PORT=str(base), SHARDS_DIR=str(tmp_path / "data"))
    script = str(ROOT / "scripts" / "shards.sh")

    def run(*args: str) -> str:
        done = subprocess.run([script, *args], env=env, cwd=tmp_path, capture_output=True, text=True,
                              timeout=scaled(60))
        assert done.returncode == 0, done.stderr
        return done.stdout

    up = run("up", "3")
    try:
        assert f"shard 1 127.0.0.1:{base} slots 0-5460" in up
        assert f"shard 3 127.0.0.1:{base + 2} slots 10922-16383" in up
        assert "up" in run("status")
        for k in range(3):
            wait_until(lambda: port_open(base + k), 10, f"shard {k + 1} listening")

        def cli(port: int, *args: str) -> str:
            done = subprocess.run(["redis-cli", "-c", "-p", str(port), *args], capture_output=True, text=True,
                                  timeout=scaled(30))
            assert done.returncode == 0, done.stderr
            return done.stdout.strip()

        for i in range(12):
            key = f"cli-{i}"
            assert cli(base + i % 3, "set", key, f"v{i}", "px", "30000") == "OK"
        for i in range(12):
            assert cli(base + (i + 1) % 3, "get", f"cli-{i}") == f"v{i}"
        assert "cluster_state:ok" in cli(base, "cluster", "info")
    finally:
        run("down")
    assert "down" in run("status") or "no shards" in run("status")
