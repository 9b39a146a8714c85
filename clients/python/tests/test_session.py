"""Sessions, locks and fencing of the ``leasehold`` package against a real server."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

import pytest

import leasehold
from conftest import HoldingProxy, Proc, free_port, poll_until, scaled, wait_until
from leasehold import _replies
from leasehold._bound import BoundConnection, BoundFloor, binds
from leasehold.session import grace_drift_bound

HERE = Path(__file__).resolve().parent


def make_client(*endpoints: str, **kw: object) -> leasehold.Client:
    options: Dict[str, Any] = {"call_timeout": 10.0, **kw}
    return leasehold.Client(list(endpoints), **options)


def session_ids(client: leasehold.Client) -> List[int]:
    """The ids of the server's live sessions (one SESSION.LIST page)."""
    return [_replies.as_int(_replies.as_map(m)["id"]) for m in client.call("SESSION.LIST", resend_if_sent=True)]


class CuttingProxy:
    """A loopback TCP proxy in front of ``server``. The first request that
    contains ``trigger`` is forwarded; once ``applied()`` holds (the server
    acted on it) that connection is cut on both sides, so its reply is lost.
    Every other connection and request passes untouched. ``cut`` is set once
    it happened."""

    def __init__(self, server: Proc, trigger: bytes, applied: Callable[[], bool]) -> None:
        self._server = server
        self._trigger = trigger
        self._applied = applied
        self.cut = threading.Event()
        self._listener = socket.socket()
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(8)
        self.endpoint = f"127.0.0.1:{self._listener.getsockname()[1]}"
        threading.Thread(target=self._accept_loop, daemon=True).start()

    def close(self) -> None:
        self._listener.close()

    def __enter__(self) -> "CuttingProxy":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _accept_loop(self) -> None:
        while True:
            try:
                c, _ = self._listener.accept()
            except OSError:
                return
            up = socket.create_connection(("127.0.0.1", self._server.port))
            state = {"cut": False}
            threading.Thread(target=self._pipe, args=(c, up, True, state), daemon=True).start()
            threading.Thread(target=self._pipe, args=(up, c, False, state), daemon=True).start()

    def _pipe(self, src: socket.socket, dst: socket.socket, watch: bool, state: Dict[str, bool]) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data or state["cut"]:
                    break  # after the cut the reply is dropped
                if watch and self._trigger in data and not self.cut.is_set():
                    self.cut.set()
                    state["cut"] = True
                    dst.sendall(data)
                    poll_until(self._applied, 10)  # the server applied it; its reply is dropped
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


def own_connection(session: leasehold.Session) -> BoundConnection:
    """The connection of a session opened with a close grace."""
    assert session._bound is not None
    return session._bound


def server_closes_session_connection(session: leasehold.Session) -> None:
    """Makes the server itself close the session's own connection, as
    ``CLIENT KILL`` would on Redis (this server has no CLIENT KILL): a
    framing error on that connection is answered with ``-ERR Protocol
    error`` and the server closes it. A close by the server is not the
    peer's: the server only unbinds the session (docs/protocol.md)."""
    bound = own_connection(session)
    sock: Any = wait_until(lambda: getattr(bound._conn, "_sock", None), 10, "the session's own connection")
    sock.sendall(b"*x\r\n")


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
    direct = make_client(server.endpoint)

    def granted() -> bool:
        info = direct.lock_info("seq")
        return info is not None and bool(info.holders)

    with CuttingProxy(server, b"LOCK.ACQUIRE", granted) as proxy:
        client = make_client(proxy.endpoint)
        with leasehold.Session(direct, ttl=5.0) as s:
            # The lock goes through the proxy; the session's keepalive does not.
            s.client = client
            lock = s.lock("seq", wait=5.0)
            token = lock.acquire()
            assert proxy.cut.is_set(), "the proxy did cut the first attempt"
            info = direct.lock_info("seq")
            assert info is not None and [h.token for h in info.holders] == [token]
            assert not info.waiters
            s.client = direct
            lock.release()


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


def _holder(server: Proc, lock: str, grace: str, ttl: str = "30") -> "subprocess.Popen[str]":
    worker = subprocess.Popen(
        [sys.executable, str(HERE / "worker.py"), server.endpoint, lock, "hold", grace, ttl],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    assert worker.stdout is not None
    line = worker.stdout.readline().split()
    assert line and line[0] == "token", line
    return worker


def test_close_grace_zero_frees_the_lock_of_a_killed_holder(server: Proc) -> None:
    """kill -9 of a holder with close_grace=0: its kernel closes the session's
    connection, the server ends the session, and a queued waiter gets the
    lock well before the holder's 10 s TTL."""
    worker = _holder(server, "crash", "0", ttl="10")
    try:
        client = make_client(server.endpoint)
        with leasehold.Session(client, ttl=5.0) as b:
            waiter = b.lock("crash", wait=15.0)
            got: List[float] = []

            def acquire() -> None:
                waiter.acquire()
                got.append(time.monotonic())

            t = threading.Thread(target=acquire, daemon=True)
            t.start()

            def queued() -> bool:
                info = client.lock_info("crash")
                return info is not None and bool(info.waiters)

            wait_until(queued, 10, "the waiter to queue")
            killed = time.monotonic()
            worker.kill()  # SIGKILL
            # deliberate: the bound is the point (freed by the close, not by the
            # 10 s TTL); it grows with the time scale but stays under the TTL.
            t.join(timeout=min(scaled(2.0), 9.0))
            assert got, "the lock was not freed within 2 s of the kill"
            print(f"kill -9 to grant: {got[0] - killed:.3f}s")
            assert waiter.token > 0 and waiter.valid
            waiter.release()
        worker.wait(timeout=10)
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
    """A retry of the open after a lost reply comes on another connection:
    with the same REQID it answers the session the first one made."""
    first_conn, second_conn = make_client(server.endpoint), make_client(server.endpoint)
    first = first_conn.open_session(10_000, close_grace_ms=2_000, reqid="py-retry-1")
    assert second_conn.open_session(10_000, close_grace_ms=2_000, reqid="py-retry-1") == first
    assert session_ids(first_conn) == [first]
    other = first_conn.open_session(10_000, reqid="py-retry-2")
    assert other != first and sorted(session_ids(second_conn)) == sorted([first, other])


def test_a_lost_open_reply_is_retried_on_a_new_session_connection(server: Proc) -> None:
    """The reply to a Session's SESSION.OPEN ... ONCLOSE ... REQID is lost (the
    proxy cuts that connection once the server made the session): the open is
    re-sent with the same REQID on a new connection of the session's own and
    answers the same session, bound to the new connection and kept alive."""
    probe = make_client(server.endpoint)
    made: List[int] = []

    def opened() -> bool:
        made[:] = session_ids(probe)
        return bool(made)

    with CuttingProxy(server, b"SESSION.OPEN", opened) as proxy:
        client = make_client(proxy.endpoint)
        with leasehold.Session(client, ttl=6.0, close_grace=2.0) as session:
            assert proxy.cut.is_set(), "the proxy did cut the first open"
            assert made == [session.id], "the retry answered the session the first attempt made"
            assert session_ids(probe) == [session.id]
            # Two acknowledged keepalives later the cut connection's grace (2 s)
            # has long passed: the retry had moved the binding.
            opened_at = time.monotonic()
            wait_until(lambda: session.safe_deadline() > opened_at + 8.0, 15, "two acknowledged keepalives")
            assert not session.lost
            assert session_ids(probe) == [session.id]


def test_a_server_close_of_the_session_connection_loses_a_grace_0_session(server: Proc) -> None:
    """With close_grace=0 a dropped session connection means the session is
    lost on the client at once. Here the server closed it by itself (as on
    CLIENT KILL): by design it keeps the session, until its TTL."""
    client = make_client(server.endpoint)
    lost: List[leasehold.LeaseholdError] = []
    session = leasehold.Session(client, ttl=10.0, close_grace=0, on_lost=lost.append)
    try:
        lock = session.lock("k0", wait=5.0)
        lock.acquire()
        server_closes_session_connection(session)
        assert session.lost_event.wait(timeout=scaled(5)), "no loss after the session's connection closed"
        assert len(lost) == 1 and isinstance(lost[0], leasehold.TimedOut), lost
        assert "connection was dropped" in str(lost[0])
        assert lock.lost
        with pytest.raises(leasehold.LockLost):
            lock.check()
        assert session.id in session_ids(client), "a close by the server does not end the session"
    finally:
        session.close()  # a deadline loss: close() still ends it on the server
    wait_until(lambda: session.id not in session_ids(client), 10, "SESSION.CLOSE after the loss")


def test_a_server_close_of_the_session_connection_is_ridden_out_with_a_grace(server: Proc) -> None:
    """With a 2 s grace the keepalive thread notices the closed connection,
    re-binds on a new one and the session stays live, locks included."""
    client = make_client(server.endpoint)
    lost: List[leasehold.LeaseholdError] = []
    with leasehold.Session(client, ttl=6.0, close_grace=2.0, on_lost=lost.append) as session:
        lock = session.lock("k2", wait=5.0)
        lock.acquire()
        bound = own_connection(session)
        old = wait_until(lambda: bound._conn, 10, "the session's own connection")
        closed_at = time.monotonic()
        server_closes_session_connection(session)

        def rebound() -> bool:
            # A new connection, and a deadline above what the drop left (at
            # most closed_at + grace): only a re-bind sent after the close does that.
            conn = bound._conn
            return conn is not None and conn is not old and session.safe_deadline() > closed_at + 2.0

        wait_until(rebound, 10, "a re-bind on a new connection")
        assert not session.lost and not lost
        lock.check()
        info = client.lock_info("k2")
        assert info is not None and [(h.session, h.token) for h in info.holders] == [(session.id, lock.token)]


@pytest.mark.parametrize("held", ["keepalive", "naming"])
def test_a_blackhole_longer_than_the_call_timeout_keeps_the_session(server: Proc, held: str) -> None:
    """Silence is not a close, also past the call timeout: a 10 s blackhole
    (past the 5 s call timeout and the 2 s grace, under the 30 s TTL) of the
    session's own connection, with a keepalive in it, or the CLIENT SETNAME
    that names the connection right after the open. That request is not
    given up at the call timeout and its connection is not closed (the
    server would count that close): after the heal the session, its lock
    and its token are kept, on_lost never ran, and no other session can
    take the lock."""
    direct = make_client(server.endpoint)
    lost: List[leasehold.LeaseholdError] = []
    with HoldingProxy(server.port, hold_on=b"SETNAME" if held == "naming" else None) as proxy:
        client = make_client(proxy.endpoint, call_timeout=5.0)
        with leasehold.Session(client, ttl=30.0, close_grace=2.0, keepalive_interval=1.0,
                               on_lost=lost.append) as session:
            if held == "keepalive":
                lock = session.lock("bh-long", wait=5.0)
                token = lock.acquire()
                proxy.hold()
            assert proxy.held.wait(scaled(10)), "nothing held"
            # deliberate: the blackhole lasts 10 s, past the call timeout and the grace.
            time.sleep(10.0)
            assert not session.lost, session.reason
            proxy.heal()
            healed = time.monotonic()
            wait_until(lambda: session.lost or session.safe_deadline() > healed + 25.0, 15,
                       "a keepalive sent after the heal acknowledged")
            assert not session.lost and not lost, (session.reason, lost)
            if held == "naming":
                lock = session.lock("bh-long", wait=5.0)
                token = lock.acquire()
            info = direct.lock_info("bh-long")
            assert info is not None and [(h.session, h.token) for h in info.holders] == [(session.id, token)]
            other = direct.open_session(60_000)
            assert direct.call("LOCK.ACQUIRE", "bh-long", other) is None, "a second session got the lock"
            # deliberate: past the grace after the heal, the server kept the session.
            time.sleep(3.0)
            assert not session.lost and not lost, (session.reason, lost)
            assert session.id in session_ids(direct)
            lock.check()


# -- unit tests (no process) ---------------------------------------------------


def test_binds_names_the_binding_requests() -> None:
    assert binds(("SESSION.OPEN", 1000, "ONCLOSE", 0, "REQID", "r"))
    assert binds(("SESSION.KEEPALIVE", 7, "BIND"))
    assert binds(("session.keepalive", 7, "bind"))
    assert not binds(("SESSION.OPEN", 1000, "REQID", "r"))
    assert not binds(("SESSION.KEEPALIVE", 7))
    assert not binds(("CLIENT", "SETNAME", "BIND"))
    assert not binds(())


def test_bound_floor_follows_the_binding_and_the_answers() -> None:
    f = BoundFloor()
    f.sent(("CLIENT", "SETNAME", "x"), 1.0)
    assert f.floor is None, "not bound by a request that does not bind"
    f.sent(("SESSION.KEEPALIVE", 7, "BIND"), 2.0)
    assert f.floor == 2.0, "bound from the send of the BIND, answered or not"
    f.answered(2.0)
    f.answered(5.0)
    assert f.floor == 5.0 and f.answered_at == 5.0
    f.answered(4.0)  # an older request answered late does not lower it
    assert f.floor == 5.0
    assert f.take() == 5.0 and f.floor is None and f.take() is None


def test_a_refused_binding_request_bound_nothing() -> None:
    """An error reply changes nothing on the server: a connection's first
    BIND answered with one (a standby's -REDIRECT, -TRYAGAIN) left it
    unbound. Once bound, a later refusal changes nothing either."""
    f = BoundFloor()
    f.sent(("SESSION.KEEPALIVE", 7, "BIND"), 2.0)
    f.answered(2.0, refused=True)
    assert f.floor is None
    f.sent(("SESSION.KEEPALIVE", 7, "BIND"), 3.0)
    f.answered(3.0)
    f.sent(("SESSION.KEEPALIVE", 7, "BIND"), 4.0)
    f.answered(4.0, refused=True)
    assert f.floor == 4.0
    drops: List[float] = []
    bound = BoundConnection(_FakeClient(), drops.append)  # type: ignore[arg-type]
    conn = bound._checkout(("127.0.0.1", 1))
    bound._sent(conn, ("SESSION.KEEPALIVE", 7, "BIND"), 5.0)
    bound._checkin(("127.0.0.1", 1), conn, 5.0, refused=True)  # -REDIRECT 127.0.0.1:2
    bound._checkout(("127.0.0.1", 2))
    assert conn.disconnected and drops == [], "a refused BIND's connection closes at no cost"


def test_grace_drift_bound_applies_the_ttl_rule_to_the_grace() -> None:
    assert grace_drift_bound(2.0, 10.0, None) == pytest.approx(0.022)
    assert grace_drift_bound(0.0, 10.0, None) == pytest.approx(0.002)
    assert grace_drift_bound(2.0, 10.0, 0.5) == pytest.approx(0.1)
    assert grace_drift_bound(0.0, 10.0, 0.5) == 0.0


class _FakeConnection:
    def __init__(self, ep: Tuple[str, int]) -> None:
        self.ep = ep
        self.disconnected = False

    def disconnect(self) -> None:
        self.disconnected = True


class _FakeClient:
    def _new_connection(self, ep: Tuple[str, int], client_name: Optional[str] = None) -> _FakeConnection:
        return _FakeConnection(ep)


def test_bound_connection_reports_each_drop_of_a_bound_connection_once() -> None:
    drops: List[float] = []
    bound = BoundConnection(_FakeClient(), drops.append)  # type: ignore[arg-type]
    a = ("127.0.0.1", 1)
    conn = bound._checkout(a)
    assert bound._checkout(a) is conn, "one connection, reused"
    bound._sent(conn, ("CLIENT", "SETNAME", "n"), 1.0)
    bound._discard(conn)
    assert conn.disconnected and drops == [], "never bound: no drop to report"
    conn = bound._checkout(a)
    bound._sent(conn, ("SESSION.OPEN", 1000, "ONCLOSE", 0, "REQID", "r"), 2.0)
    bound._checkin(a, conn, 2.0)
    bound._sent(conn, ("SESSION.KEEPALIVE", 7, "BIND"), 3.0)
    bound._discard(conn)  # e.g. the keepalive's reply timed out: only the open's answer counts
    assert drops == [2.0] and not bound.connected
    conn = bound._checkout(a)
    bound._sent(conn, ("SESSION.KEEPALIVE", 7, "BIND"), 4.0)
    bound._discard(conn)  # its reply lost too: bound from its send, if the server read it
    assert drops == [2.0, 4.0]
    conn = bound._checkout(a)
    bound._sent(conn, ("SESSION.KEEPALIVE", 7, "BIND"), 5.0)
    bound._checkin(a, conn, 5.0)
    bound._sent(conn, ("SESSION.KEEPALIVE", 7, "BIND"), 6.0)
    bound._checkin(a, conn, 6.0)
    other = bound._checkout(("127.0.0.1", 2))  # redirected: the old connection goes
    assert conn.disconnected and drops == [2.0, 4.0, 6.0] and other is not conn
    bound.close()
    assert other.disconnected and drops == [2.0, 4.0, 6.0], "close() is no drop"
