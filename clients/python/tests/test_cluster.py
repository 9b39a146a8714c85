"""Redirects and failover against a real cluster: one etcd member and two
``leasehold server --etcd`` nodes (docs/cluster.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator, List

import pytest
import redis

import leasehold
from conftest import Proc, free_port, leasehold_binary, poll_until, wait_until


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[List[Proc]]:
    client_port, peer_port = free_port(), free_port()
    etcd = Proc(
        lambda _port: ["/usr/bin/etcd", "--name", "e0", "--data-dir", str(tmp_path / "etcd"),
                       "--listen-client-urls", f"http://127.0.0.1:{client_port}",
                       "--advertise-client-urls", f"http://127.0.0.1:{client_port}",
                       "--listen-peer-urls", f"http://127.0.0.1:{peer_port}",
                       "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer_port}",
                       "--initial-cluster", f"e0=http://127.0.0.1:{peer_port}",
                       "--initial-cluster-state", "new"],
        tmp_path / "etcd.log")
    etcd.port = client_port
    etcd.start(same_port=True)
    binary = leasehold_binary()
    nodes = []
    for i in range(2):
        data = tmp_path / f"node{i}"
        def argv(port: int, data: Path = data) -> List[str]:
            return [binary, "server", "--listen", f"127.0.0.1:{port}", "--data-dir", str(data), "--log-level", "warn",
                    "--etcd", f"127.0.0.1:{client_port}", "--cluster", "pytest", "--etcd-lease-ttl", "2",
                    "--etcd-timeout-ms", "1000"]

        nodes.append(Proc(argv, tmp_path / f"node{i}.log"))
        nodes[-1].start()
    yield nodes
    for n in nodes:
        n.stop()
    etcd.stop()


def role_reply(node: Proc) -> List[str]:
    """ROLE: [primary/standby, the primary's address as this node knows it]."""
    try:
        r = redis.Redis(host="127.0.0.1", port=node.port, socket_timeout=1)
        reply = r.execute_command("ROLE")
        return [x.decode() if isinstance(x, bytes) else str(x) for x in reply]
    except (redis.RedisError, OSError):
        return ["", ""]


def role(node: Proc) -> str:
    return role_reply(node)[0]


def primary_index(nodes: List[Proc], timeout: float = 30.0) -> int:
    found: List[int] = []

    def one_primary() -> bool:
        found[:] = [i for i, n in enumerate(nodes) if n.proc is not None and n.proc.poll() is None
                    and role(n) == "primary"]
        return len(found) == 1

    wait_until(one_primary, timeout, "one primary")
    return found[0]


def test_follows_redirect_from_a_standby_and_fails_over(cluster: List[Proc]) -> None:
    p = primary_index(cluster)
    standby = cluster[1 - p]
    # A standby, and one that has learnt the primary's address (its leader
    # watch; until then it answers UNAVAILABLE instead of REDIRECT).
    wait_until(lambda: role_reply(standby) == ["standby", cluster[p].endpoint], 30,
               "the other node to be a standby that knows the primary")
    # Given only the standby's address, the client is redirected to the primary.
    client = leasehold.Client(standby.endpoint, call_timeout=10.0)
    with leasehold.Session(client, ttl=10.0) as s, s.lock("redirected", wait=5.0) as lock:
        assert lock.valid
        assert client.current_endpoint() == cluster[p].endpoint
    # Given both, it fails over when the primary dies.
    both = leasehold.Client([n.endpoint for n in cluster], call_timeout=10.0)
    both.ping()
    cluster[p].kill()
    new_p = primary_index(cluster, timeout=60)
    assert new_p == 1 - p
    last_error: List[leasehold.LeaseholdError] = []

    def lock_on_the_new_primary() -> bool:  # the new primary may still be taking over
        try:
            with leasehold.Session(both, ttl=10.0) as s, s.lock("after-failover", wait=5.0) as lock:
                assert lock.token > 0
            return True
        except leasehold.LeaseholdError as e:
            last_error[:] = [e]
            return False

    if not poll_until(lock_on_the_new_primary, 60, interval=0.1):
        raise last_error[0]
    assert both.current_endpoint() == cluster[new_p].endpoint
