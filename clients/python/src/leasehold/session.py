"""``Session``: a leasehold session that keeps itself alive and announces its loss.

Opening sends ``SESSION.OPEN ttl REQID r`` (a random r per Session, reused
if the open is retried, so a lost reply never leaves a second session).
A daemon thread then sends
``SESSION.KEEPALIVE`` about every ``ttl/3`` (outside the client's
connection limit, so blocking acquires never starve it) and, after each
acknowledged keepalive, re-checks every lock the session holds with
``LOCK.INFO`` (the Python client gets no server pushes, so a revoked lock
is noticed within one keepalive interval).

SAFE DEADLINE (``safe_deadline()``, a ``time.monotonic()`` value): the send
time of the last acknowledged keepalive (before the first: of SESSION.OPEN)
plus the TTL the server granted, minus a DRIFT BOUND (default 1% of the TTL
plus 2 ms, ``drift_bound=`` to change it) that covers a client clock running
slower than the server's. Until then the server cannot have expired the
session. The session is LOST at the first of:

- a keepalive answered ``-EXPIRED`` (expired or killed on the server),
- the safe deadline passing without an acknowledged keepalive (server
  down or frozen, network cut, a failover slower than the TTL; with a
  close grace also: the session's connection dropped and no re-bind
  acknowledged within the grace, see CLOSE GRACE). Such a loss is a
  ``TimedOut``: the server may still keep the session.

Loss is signalled once, three ways: ``on_lost(error)`` (on the keepalive
thread; keep it quick), ``lost_event`` (a ``threading.Event``) and
``lost`` / ``reason``. Every lock of the session is marked lost with it.
``lost`` is also true as soon as the safe deadline has passed, before the
thread noticed.

CLOSE GRACE (``close_grace=`` seconds, off by default): the session is
opened with ``ONCLOSE`` and bound to a connection of its own (not a pooled
one, outside the client's connection limit, named
``leasehold-py-session-<id>`` unless the client has a ``name``) that carries
the open and every keepalive (``SESSION.KEEPALIVE id BIND``). When that
connection closes (the process crashed or was killed: its kernel closes
the socket) the server ends the session after the grace and its locks go
to the next waiter at once instead of after the TTL. Silence (a partition,
a paused process) is not a close: only the TTL ends the session then; nor
is a close made by the server itself (an idle timeout, an output limit, a
protocol error).

Nothing on that connection is given up at the call timeout: a keepalive
(and the ``CLIENT SETNAME`` that names the connection, sent by the
keepalive thread) waits for its reply until the safe deadline, so a
blackhole shorter than the TTL closes nothing and the session is kept, as
for any silence. A connection that a BIND did not bind (answered with an
error reply) closes at no cost.

The trade-off: whenever the session's connection is found broken (a
reset, EOF: the idle connection is watched between keepalives) or dropped
for another reason (a redirect elsewhere), the server may end the
session one grace after the last moment it is known to have seen that
connection open: the send time of the latest request answered on it (or
of the open/BIND that bound it), the BOUND FLOOR. The safe deadline then
drops to at most bound floor + grace - the drift bound scaled to the grace
(1% of it plus 2 ms by default; with ``drift_bound=d``, d x grace / TTL),
never below the floor; the keepalive thread reconnects at once and sends
``SESSION.KEEPALIVE id BIND`` on the new connection, and the acknowledged
re-bind raises the deadline again as any keepalive does. So a grace of a
second or two rides out a reset; with grace 0 a dropped session
connection loses the session on the client at once (the server, if it
closed the connection itself, keeps it until its TTL), which is the price
of freeing a crashed holder's lock at once. A lost reply to the open is
retried with the same REQID on a new connection until the call timeout:
the server answers the same session and binds it there.

``close()`` (also ``with Session(...)``) stops the keepalive and sends
``SESSION.CLOSE`` once, bounded by the client's call timeout (0.5 s past
the safe deadline; not at all after ``-EXPIRED``); the server releases the
session's locks. Then it closes the session's own connection (close
grace), so a clean exit is a clean close, not a "closed" expiry. A closed
session sets ``lost_event`` but does not call ``on_lost``.

Thread-safety: every method may be called from any thread.
"""

from __future__ import annotations

import itertools
import math
import secrets
import socket
import threading
import time
from typing import TYPE_CHECKING, Callable, List, Optional, Set

from ._bound import BoundConnection
from .client import Client
from .errors import InvalidArgument, LeaseholdError, NotHolder, SessionExpired, TimedOut

if TYPE_CHECKING:
    from .lock import Lock

LostCallback = Callable[[LeaseholdError], None]
LockLostCallback = Callable[["Lock", LeaseholdError], None]


def default_drift_bound(ttl: float) -> float:
    """1% of the TTL plus 2 ms, in seconds."""
    return 0.01 * ttl + 0.002


def grace_drift_bound(close_grace: float, ttl: float, drift_bound: Optional[float]) -> float:
    """The drift bound of a close grace: the TTL's rule applied to the grace
    (the default 1% + 2 ms, or the same fraction as ``drift_bound`` of the TTL)."""
    if drift_bound is None:
        return default_drift_bound(close_grace)
    return drift_bound * close_grace / ttl


NO_KEEPALIVE = "no keepalive acknowledged before the safe deadline"
BOUND_DROPPED = ("the session's connection was dropped and no re-bind was acknowledged "
                 "within the close grace: the server may have ended the session")


class Session:
    def __init__(
        self,
        client: Client,
        ttl: float = 10.0,
        *,
        owner: str = "",
        keepalive_interval: Optional[float] = None,
        drift_bound: Optional[float] = None,
        on_lost: Optional[LostCallback] = None,
        on_lock_lost: Optional[LockLostCallback] = None,
        close_grace: Optional[float] = None,
    ) -> None:
        """Opens the session (``ttl`` in seconds) and starts its keepalive.

        Raises what ``Client.open_session`` raises (``Unreachable``,
        ``InvalidArgument`` for a TTL the server refuses, ...).
        """
        if ttl <= 0:
            raise InvalidArgument("ttl must be positive")
        self.client = client
        self.ttl = ttl
        self.drift_bound = default_drift_bound(ttl) if drift_bound is None else drift_bound
        if not 0 <= self.drift_bound < ttl:
            raise InvalidArgument("drift_bound must be in [0, ttl)")
        if close_grace is not None and not 0 <= close_grace <= ttl:
            raise InvalidArgument("close_grace must be in [0, ttl]")
        self.close_grace = close_grace
        self.keepalive_interval = keepalive_interval if keepalive_interval else ttl / 3
        self._on_lost = on_lost
        self._on_lock_lost = on_lock_lost
        self._mu = threading.Lock()
        self._seq = itertools.count(1)
        self._locks: Set["Lock"] = set()
        self._reason: Optional[LeaseholdError] = None
        self._closed = False
        self._thread_done = False  # the keepalive thread has ended
        self._release_on_exit = False  # close() left the session's connection to that thread
        self._stop = threading.Event()
        self.lost_event = threading.Event()
        self._deadline = math.inf  # set once opened
        self._deadline_cause = NO_KEEPALIVE
        reqid = "py-" + secrets.token_hex(12)
        self._bound: Optional[BoundConnection] = None
        if close_grace is None:
            sent = time.monotonic()
            self.id: int = client.open_session(int(round(ttl * 1000)), owner, reqid=reqid)
        else:
            self._grace_drift = grace_drift_bound(close_grace, ttl, drift_bound)
            self._bound = BoundConnection(client, self._bound_dropped)
            self._wake_r, self._wake_w = socket.socketpair()
            try:
                self.id = client.open_session(int(round(ttl * 1000)), owner,
                                              close_grace_ms=int(round(close_grace * 1000)), reqid=reqid,
                                              via=self._bound)
            except BaseException:
                self._release_connection()
                raise
            sent = self._bound.answered_at  # the answered attempt: it (re)bound the session and began its TTL
        with self._mu:
            self._deadline = sent + ttl - self.drift_bound
            self._deadline_cause = NO_KEEPALIVE
        self._thread = threading.Thread(target=self._run, name=f"leasehold-keepalive-{self.id}", daemon=True)
        self._thread.start()

    # -- state ----------------------------------------------------------------

    def safe_deadline(self) -> float:
        """``time.monotonic()`` value until which the server cannot have
        expired this session (see the module doc)."""
        with self._mu:
            return self._deadline

    @property
    def lost(self) -> bool:
        """True once lost or closed, or once the safe deadline has passed."""
        with self._mu:
            return self._reason is not None or time.monotonic() >= self._deadline

    @property
    def reason(self) -> Optional[LeaseholdError]:
        """None while live; why it ended otherwise (``SessionExpired``, ``TimedOut``)."""
        with self._mu:
            if self._reason is None and time.monotonic() >= self._deadline:
                return TimedOut("the session's safe deadline has passed")
            return self._reason

    def next_seq(self) -> int:
        """A fresh SEQ (idempotence key) for a request of this session."""
        with self._mu:
            return next(self._seq)

    def lock(
        self,
        name: str,
        wait: Optional[float] = None,
        *,
        shared: bool = False,
        limit: Optional[int] = None,
        delay: float = 0.0,
        lease: Optional[float] = None,
    ) -> "Lock":
        """A lock of this session, acquired by ``with`` or ``acquire()``.

        ``wait``: None waits without a deadline, 0 tries once
        (``WouldBlock``), > 0 waits up to that many seconds (``TimedOut``).
        ``shared``: reader mode; ``limit=n``: a semaphore of n permits;
        ``delay``: lock-delay (seconds) if this session expires while holding.
        ``lease``: a maximum hold (seconds): the server ends the grant that
        long after it even while the session lives; the lock's
        ``safe_deadline()`` is then at most the request's send time + lease
        - drift bound (``Lock.extend()`` moves it).
        """
        from .lock import Lock

        return Lock(self, name, wait, shared=shared, limit=limit, delay=delay, lease=lease)

    # -- lock bookkeeping (for Lock) -------------------------------------------

    def _track(self, lock: "Lock") -> None:
        with self._mu:
            if self._reason is not None:
                raise self._reason
            self._locks.add(lock)

    def _forget(self, lock: "Lock") -> None:
        with self._mu:
            self._locks.discard(lock)

    def _lock_lost(self, lock: "Lock", error: LeaseholdError) -> None:
        self._forget(lock)
        if lock._mark_lost(error) and self._on_lock_lost is not None:
            self._on_lock_lost(lock, error)

    # -- keepalive --------------------------------------------------------------

    def _lose(self, error: LeaseholdError, *, closing: bool = False) -> None:
        with self._mu:
            if self._reason is not None:
                return
            self._reason = error
            locks: List["Lock"] = list(self._locks)
            self._locks.clear()
        self.lost_event.set()
        for lock in locks:
            if lock._mark_lost(error) and not closing and self._on_lock_lost is not None:
                self._on_lock_lost(lock, error)
        if not closing and self._on_lost is not None:
            self._on_lost(error)

    def _run(self) -> None:
        try:
            if self._bound is not None:
                self._name_bound_connection()
            self._keepalive_loop()
        finally:
            with self._mu:
                self._thread_done = True
                release = self._release_on_exit
            if release:
                self._release_connection()

    def _keepalive_loop(self) -> None:
        next_at = time.monotonic() + self.keepalive_interval
        if self._bound is not None and not self._bound.connected:
            next_at = time.monotonic()  # naming it found the session's connection broken: re-bind now
        while not self._stop.is_set():
            with self._mu:
                deadline, cause = self._deadline, self._deadline_cause
            now = time.monotonic()
            if now >= deadline:
                self._lose(TimedOut(cause))
                return
            if self._wait(min(next_at, deadline)):
                next_at = time.monotonic()  # the session's connection broke: re-bind on a new one now
            if self._stop.is_set():
                return
            sent = time.monotonic()
            if sent >= self.safe_deadline():
                continue  # reported at the top
            if sent < next_at:
                continue  # woken early
            try:
                granted_ms = self.client.keepalive(
                    self.id, timeout=self.safe_deadline() - sent, reserve=False, bind=self._bound is not None,
                    via=self._bound, on_reconnect=self._check_deadline,
                )
            except SessionExpired as e:
                self._lose(e)
                return
            except LeaseholdError:
                next_at = time.monotonic() + min(0.05, self.keepalive_interval)  # retry soon
                continue
            with self._mu:
                self._deadline = max(self._deadline, sent + granted_ms / 1000.0 - self.drift_bound)
                self._deadline_cause = NO_KEEPALIVE
            next_at = sent + self.keepalive_interval
            self._recheck_locks()

    def _wait(self, until: float) -> bool:
        """Waits until ``until``, or until close(); True if the session's
        connection (close grace) was found broken meanwhile."""
        if self._bound is None:
            self._stop.wait(max(0.0, until - time.monotonic()))
            return False
        return self._bound.watch(until, self._wake_r)

    def _check_deadline(self) -> None:
        """Before a keepalive is re-sent: give up once the safe deadline passed."""
        if time.monotonic() >= self.safe_deadline():
            raise TimedOut("the session's safe deadline has passed")

    def _bound_dropped(self, floor: float) -> None:
        """The session's connection (close grace) is gone: the server may end
        the session one grace after ``floor`` (see the module doc)."""
        assert self.close_grace is not None
        limit = floor + max(0.0, self.close_grace - self._grace_drift)
        with self._mu:
            if limit < self._deadline:
                self._deadline = limit
                self._deadline_cause = BOUND_DROPPED

    def _name_bound_connection(self) -> None:
        """Names the session's connection for CLIENT LIST-style tools and logs
        (this one and the ones after a reconnect), unless the client has a
        name. On the keepalive thread, awaited until the safe deadline as a
        keepalive is: given up at the call timeout, the connection would be
        closed, a close the server counts (silence is not a close)."""
        assert self._bound is not None
        if self.client.options.connection_kwargs.get("client_name"):
            return
        self._bound.name = f"leasehold-py-session-{self.id}"
        try:
            self.client.call("CLIENT", "SETNAME", self._bound.name, retry=False, via=self._bound,
                             timeout=max(0.0, self.safe_deadline() - time.monotonic()))
        except LeaseholdError:
            pass  # a broken connection was dropped (on_drop ran); the next one carries the name

    def _close_wake(self) -> None:
        for sock in (self._wake_r, self._wake_w):
            try:
                sock.close()
            except OSError:
                pass

    def _release_connection(self) -> None:
        """Closes the session's own connection (close grace) and the wake-up pair."""
        if self._bound is not None:
            self._bound.close()
            self._close_wake()

    def _recheck_locks(self) -> None:
        with self._mu:
            locks = list(self._locks)
        for lock in locks:
            if self._stop.is_set():
                return
            try:
                info = self.client.lock_info(lock.name, timeout=self.keepalive_interval, reserve=False)
            except LeaseholdError:
                return  # try again after the next keepalive
            held = info is not None and any(
                h.session == self.id and h.token == lock.token for h in info.holders
            )
            if not held and lock.held:
                self._lock_lost(lock, NotHolder(f"lock '{lock.name}' token {lock.token} is no longer held"))

    # -- closing ------------------------------------------------------------------

    def close(self) -> None:
        """Stops the keepalive and closes the session on the server (bounded).
        Idempotent; errors of SESSION.CLOSE are not raised."""
        with self._mu:
            if self._closed:
                return
            self._closed = True
        self._stop.set()
        if self._bound is not None:
            try:
                self._wake_w.send(b"x")
            except OSError:
                pass
        on_keepalive_thread = self._thread is threading.current_thread()  # from a callback
        if not on_keepalive_thread:
            self._thread.join(timeout=self.client.call_timeout + 1.0)
        with self._mu:
            # Not ended, or only past its safe deadline: the server may still keep it.
            may_live = self._reason is None or isinstance(self._reason, TimedOut)
            past_deadline = time.monotonic() >= self._deadline
        self._lose(SessionExpired("closed"), closing=True)
        if may_live:  # after a deadline loss: try briefly
            try:
                self.client.close_session(self.id, timeout=0.5 if past_deadline else self.client.call_timeout)
            except LeaseholdError:
                pass
        # Only now: closing the session's connection first could end the
        # session as "closed" (an expiry, lock-delay included) before
        # SESSION.CLOSE. A keepalive thread still running (a callback called
        # close(), or it is stuck past the join) does not touch it after _stop,
        # or closes it itself as it ends.
        with self._mu:
            release = on_keepalive_thread or self._thread_done
            self._release_on_exit = not release
        if release:
            self._release_connection()

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self._stop.set()
        except Exception:
            pass
