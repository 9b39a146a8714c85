"""Sessions, locks and fencing of the ``leasehold`` package against a real server."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Dict, List

import pytest

import leasehold
from conftest import Proc, free_port, poll_until, wait_until

HERE = Path(__file__).resolve().parent


def make_client(*endpoints: str, **kw: object) -> leasehold.Client:
    options: Dict[str, Any] = {"call_timeout": 10.0, **kw}
    return leasehold.Client(list(endpoints), **options)


def test_lock_token_check_release(server: Proc) -> None:
    client = make_client(server.endpoint)
    with leasehold.Session(client, ttl=5.0, owner="t") as session:
        with session.lock("reports/daily", wait=5.0) as lock:
            assert lock.token > 0 and lock.valid
            lock.check()
            info = client.lock_info("reports/daily")
            assert info is not None and info.holders[0].token == lock.token
            assert info.holders[0].session == session.id
            assert lock.fenced_put("reports/daily/cursor", "1") == lock.token
        assert not lock.held
        with pytest.raises(leasehold.LockLost):
            lock.check()
        assert client.lock_info("reports/daily") is None or not client.lock_info("reports/daily").holders  # type: ignore[union-attr]
        got = client.fenced_get("reports/daily/cursor")
        assert got is not None and got.text == "1" and got.token == lock.token


def test_safe_deadline_uses_send_times_minus_drift(server: Proc) -> None:
    client = make_client(server.endpoint)
    before = time.monotonic()
    with leasehold.Session(client, ttl=3.0) as s:
        after = time.monotonic()
        assert s.drift_bound == pytest.approx(0.032)
        assert before + 3.0 - 0.032 <= s.safe_deadline() <= after + 3.0 - 0.032
        first = s.safe_deadline()
        wait_until(lambda: s.safe_deadline() > first, 10, "a keepalive to move the deadline")
        assert s.safe_deadline() <= time.monotonic() + 3.0 - 0.032
    with leasehold.Session(client, ttl=3.0, drift_bound=0.5) as s:
        assert s.safe_deadline() <= time.monotonic() + 2.5


def test_try_wait_shared_and_semaphore(server: Proc) -> None:
    client = make_client(server.endpoint)
    with leasehold.Session(client, ttl=5.0) as a, leasehold.Session(client, ttl=5.0) as b:
        with a.lock("x", wait=0):
            with pytest.raises(leasehold.WouldBlock):
                b.lock("x", wait=0).acquire()
            start = time.monotonic()
            with pytest.raises(leasehold.TimedOut):
                b.lock("x", wait=0.3).acquire()
            assert time.monotonic() - start >= 0.25  # checks elapsed time on purpose: it did wait
        with a.lock("r", shared=True), b.lock("r", shared=True, wait=0):
            info = client.lock_info("r")
            assert info is not None and info.mode == "shared" and len(info.holders) == 2
        with a.lock("sem", limit=2), b.lock("sem", limit=2, wait=0):
            with leasehold.Session(client, ttl=5.0) as c:
                with pytest.raises(leasehold.WouldBlock):
                    c.lock("sem", limit=2, wait=0).acquire()
        with a.lock("x"), pytest.raises(leasehold.Conflict):
            b.lock("x", limit=3, wait=0).acquire()


def test_fails_over_to_the_next_endpoint(server: Proc) -> None:
    dead = f"127.0.0.1:{free_port()}"
    client = make_client(dead, server.endpoint)
    with leasehold.Session(client, ttl=5.0) as s, s.lock("f", wait=5.0) as lock:
        assert lock.valid
    assert client.current_endpoint() == server.endpoint


def test_keepalive_across_server_restart(server: Proc) -> None:
    client = make_client(server.endpoint)
    lost: List[leasehold.LeaseholdError] = []
    session = leasehold.Session(client, ttl=6.0, on_lost=lost.append)
    lock = session.lock("survives", wait=5.0)
    lock.acquire()
    start = time.monotonic()
    server.restart()
    restart_took = time.monotonic() - start
    restarted_at = time.monotonic()
    wait_until(lambda: session.lost or session.safe_deadline() > restarted_at + 6.0 - 0.062 - 0.5, 30,
               "an acknowledged keepalive after the restart, or a loss notice")
    if restart_took < 2.0:  # well inside the TTL: the session must have continued
        assert not session.lost, f"lost after a {restart_took:.2f}s restart: {lost}"
        lock.check()
        info = client.lock_info("survives")
        assert info is not None and [h.token for h in info.holders] == [lock.token]
    else:  # a slow restart may lose it, but then it says so
        assert session.lost == bool(lost) or session.lost
    session.close()
    assert not lost or len(lost) == 1


def test_loss_notice_when_the_server_is_paused(server: Proc) -> None:
    client = make_client(server.endpoint, call_timeout=1.0)
    lost: List[leasehold.LeaseholdError] = []
    lock_lost: List[str] = []
    session = leasehold.Session(client, ttl=1.5, on_lost=lost.append,
                                on_lock_lost=lambda lk, e: lock_lost.append(lk.name))
    lock = session.lock("p", wait=5.0)
    lock.acquire()
    server.pause()
    try:
        paused_deadline = session.safe_deadline()
        assert session.lost_event.wait(timeout=20), "no loss notice while the server was frozen"
        noticed = time.monotonic()
        assert noticed >= paused_deadline, "never before the safe deadline"
        assert len(lost) == 1 and isinstance(lost[0], leasehold.TimedOut)
        assert lock.lost and lock.lost_event.is_set() and lock_lost == ["p"]
        with pytest.raises(leasehold.LockLost):
            lock.check()
    finally:
        server.resume()
    session.close()
    assert len(lost) == 1, "signalled exactly once"


def test_revoke_is_noticed_by_the_keepalive(server: Proc) -> None:
    client = make_client(server.endpoint)
    with leasehold.Session(client, ttl=1.5) as s:
        lock = s.lock("rv", wait=5.0)
        lock.acquire()
        client.revoke("rv")
        assert lock.lost_event.wait(timeout=15)
        assert isinstance(lock.reason, leasehold.NotHolder)
        assert not s.lost, "a revoke loses the lock, not the session"
        assert lock.release() is False


def test_seq_retry_after_a_lost_reply(server: Proc) -> None:
    """A proxy cuts the connection right after the first LOCK.ACQUIRE reached
    the server; the client re-sends with the same SEQ and gets the same grant."""
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    proxy_port = listener.getsockname()[1]
    cut = threading.Event()

    def pipe(src: socket.socket, dst: socket.socket, watch: bool, state: Dict[str, bool]) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data or state["cut"]:
                    break  # after the cut the reply is dropped
                if watch and b"LOCK.ACQUIRE" in data and not cut.is_set():
                    cut.set()
                    state["cut"] = True
                    dst.sendall(data)
                    # The server applies it (a holder shows); its reply is dropped.
                    probe = make_client(server.endpoint)
                    poll_until(lambda: (info := probe.lock_info("seq")) is not None and bool(info.holders), 10)
                    probe.close()
                    break
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (src, dst):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                sock.close()

    def accept_loop() -> None:
        while True:
            try:
                c, _ = listener.accept()
            except OSError:
                return
            up = socket.create_connection(("127.0.0.1", server.port))
            state = {"cut": False}
            threading.Thread(target=pipe, args=(c, up, True, state), daemon=True).start()
            threading.Thread(target=pipe, args=(up, c, False, state), daemon=True).start()

    threading.Thread(target=accept_loop, daemon=True).start()
    try:
        client = make_client(f"127.0.0.1:{proxy_port}")
        direct = make_client(server.endpoint)
        with leasehold.Session(direct, ttl=5.0) as s:
            # The lock goes through the proxy; the session's keepalive does not.
            s.client = client
            lock = s.lock("seq", wait=5.0)
            token = lock.acquire()
            assert cut.is_set(), "the proxy did cut the first attempt"
            info = direct.lock_info("seq")
            assert info is not None and [h.token for h in info.holders] == [token]
            assert not info.waiters
            s.client = direct
            lock.release()
    finally:
        listener.close()


def test_fenced_write_rejected_after_a_pause(server: Proc, tmp_path: Path) -> None:
    """Worker A is SIGSTOPped past its TTL; B takes over and writes; A wakes
    and its write with the old token is refused (the seeds' scenario)."""
    worker = subprocess.Popen(
        [sys.executable, str(HERE / "worker.py"), server.endpoint, "billing", "hold-then-write"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    try:
        assert worker.stdout is not None and worker.stdin is not None
        line = worker.stdout.readline().split()
        assert line[0] == "token", line
        token_a = int(line[1])
        worker.send_signal(subprocess.signal.SIGSTOP)  # type: ignore[attr-defined]
        client = make_client(server.endpoint)
        with leasehold.Session(client, ttl=5.0) as b:
            with b.lock("billing", wait=30.0) as lock_b:  # granted once A's 1 s session expires
                assert lock_b.token > token_a
                assert lock_b.fenced_put("ledger/job_42", "written by B") == lock_b.token
            worker.send_signal(subprocess.signal.SIGCONT)  # type: ignore[attr-defined]
            worker.stdin.write("go\n")
            worker.stdin.flush()
            out = worker.stdout.readline().split()
            assert out[0] == "refused", out
            got = client.fenced_get("ledger/job_42")
            assert got is not None and got.text == "written by B"
        assert worker.wait(timeout=30) == 0
    finally:
        worker.kill()


def test_fifo_hand_off_across_processes(server: Proc, tmp_path: Path) -> None:
    client = make_client(server.endpoint)
    order_file = tmp_path / "order"
    with leasehold.Session(client, ttl=5.0) as s:
        holder = s.lock("queue", wait=5.0)
        holder.acquire()
        children = []
        for i in range(3):
            children.append(subprocess.Popen(
                [sys.executable, str(HERE / "worker.py"), server.endpoint, "queue", "append", str(order_file), str(i)]))

            def queued(n: int = i + 1) -> bool:
                info = client.lock_info("queue")
                return info is not None and len(info.waiters) == n

            wait_until(queued, 30, f"child {i} to be queued")
        holder.release()
        for c in children:
            assert c.wait(timeout=60) == 0
    lines = order_file.read_text().split()
    assert [ln.split(":")[0] for ln in lines] == ["0", "1", "2"], lines
    tokens = [int(ln.split(":")[1]) for ln in lines]
    assert tokens == sorted(tokens) and tokens[0] > holder.token


def test_election(server: Proc) -> None:
    client = make_client(server.endpoint)
    with leasehold.Session(client, ttl=5.0) as a, leasehold.Session(client, ttl=5.0) as b:
        ea, eb = leasehold.Election(a, "svc"), leasehold.Election(b, "svc")
        assert ea.leader() is None
        ea.campaign("10.0.0.1:80", timeout=5)
        leader = eb.leader()
        assert leader is not None and leader.value == b"10.0.0.1:80" and leader.session == a.id
        with pytest.raises(leasehold.TimedOut):
            eb.campaign("10.0.0.2:80", timeout=0.2)
        ea.resign()
        eb.campaign("10.0.0.2:80", timeout=5)
        leader = ea.leader()
        assert leader is not None and leader.value == b"10.0.0.2:80" and eb.is_leader and not ea.is_leader
        eb.resign()


def _holder(server: Proc, lock: str, grace: str) -> "subprocess.Popen[str]":
    worker = subprocess.Popen(
        [sys.executable, str(HERE / "worker.py"), server.endpoint, lock, "hold", grace],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    assert worker.stdout is not None
    line = worker.stdout.readline().split()
    assert line and line[0] == "token", line
    return worker


def test_close_grace_zero_frees_the_lock_of_a_killed_holder(server: Proc) -> None:
    """kill -9 of a holder with close_grace=0: its kernel closes the socket,
    the server ends the session, and a waiter gets the lock well before the
    holder's 30 s TTL."""
    worker = _holder(server, "crash", "0")
    try:
        worker.kill()  # SIGKILL
        worker.wait(timeout=10)
        client = make_client(server.endpoint)
        with leasehold.Session(client, ttl=5.0) as b:
            started = time.monotonic()
            with b.lock("crash", wait=15.0) as lock:  # bounded well under the 30 s TTL
                assert lock.token > 0
            assert time.monotonic() - started < 15.0
    finally:
        worker.kill()


def test_a_paused_holder_with_close_grace_keeps_its_lock(server: Proc) -> None:
    """SIGSTOP is silence, not a close: the session lives on until its TTL."""
    worker = _holder(server, "paused", "0")
    try:
        worker.send_signal(subprocess.signal.SIGSTOP)  # type: ignore[attr-defined]
        client = make_client(server.endpoint)
        with leasehold.Session(client, ttl=5.0) as b:
            with pytest.raises(leasehold.TimedOut):
                b.lock("paused", wait=2.0).acquire()  # deliberate: 2 s of a 30 s TTL
        worker.send_signal(subprocess.signal.SIGCONT)  # type: ignore[attr-defined]
    finally:
        worker.kill()


def test_open_retry_with_the_same_reqid_returns_the_same_session(server: Proc) -> None:
    client = make_client(server.endpoint)
    first = client.open_session(10_000, reqid="py-retry-1")
    assert client.open_session(10_000, reqid="py-retry-1") == first
    assert client.open_session(10_000, reqid="py-retry-2") != first
