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
  down or frozen, network cut, a failover slower than the TTL).

Loss is signalled once, three ways: ``on_lost(error)`` (on the keepalive
thread; keep it quick), ``lost_event`` (a ``threading.Event``) and
``lost`` / ``reason``. Every lock of the session is marked lost with it.
``lost`` is also true as soon as the safe deadline has passed, before the
thread noticed.

CLOSE GRACE (``close_grace=`` seconds, off by default): the session is
opened with ``ONCLOSE`` and bound to the client's connection; when that
connection closes (the process crashed or was killed: its kernel closes
the socket) the server ends the session after the grace and its locks go
to the next waiter at once instead of after the TTL. Each keepalive
re-binds (``SESSION.KEEPALIVE id BIND``), also after a reconnect or a
failover. The trade-off: a connection the client itself drops (a call
timing out, a pooled connection reset) also ends the session after the
grace, so use a grace of a second or two unless a crash must free the
lock at once. Silence (a partition, a paused process) is not a close:
only the TTL ends the session then.

``close()`` (also ``with Session(...)``) stops the keepalive and sends
``SESSION.CLOSE`` once, bounded by the client's call timeout; the server
releases the session's locks. A closed session sets ``lost_event`` but
does not call ``on_lost``.

Thread-safety: every method may be called from any thread.
"""

from __future__ import annotations

import itertools
import secrets
import threading
import time
from typing import TYPE_CHECKING, Callable, List, Optional, Set

from .client import Client
from .errors import InvalidArgument, LeaseholdError, NotHolder, SessionExpired, TimedOut

if TYPE_CHECKING:
    from .lock import Lock

LostCallback = Callable[[LeaseholdError], None]
LockLostCallback = Callable[["Lock", LeaseholdError], None]


def default_drift_bound(ttl: float) -> float:
    """1% of the TTL plus 2 ms, in seconds."""
    return 0.01 * ttl + 0.002


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
        self._stop = threading.Event()
        self.lost_event = threading.Event()
        sent = time.monotonic()
        grace_ms = None if close_grace is None else int(round(close_grace * 1000))
        self.id: int = client.open_session(
            int(round(ttl * 1000)), owner, close_grace_ms=grace_ms, reqid="py-" + secrets.token_hex(12)
        )
        self._deadline = sent + ttl - self.drift_bound
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
        next_at = time.monotonic() + self.keepalive_interval
        while True:
            deadline = self.safe_deadline()
            now = time.monotonic()
            if now >= deadline:
                self._lose(TimedOut("no keepalive acknowledged before the safe deadline"))
                return
            if self._stop.wait(max(0.0, min(next_at, deadline) - now)):
                return
            sent = time.monotonic()
            if sent >= self.safe_deadline():
                continue  # reported at the top
            try:
                granted_ms = self.client.keepalive(
                    self.id, timeout=self.safe_deadline() - sent, reserve=False, bind=self.close_grace is not None
                )
            except SessionExpired as e:
                self._lose(e)
                return
            except LeaseholdError:
                next_at = time.monotonic() + min(0.05, self.keepalive_interval)  # retry soon
                continue
            with self._mu:
                self._deadline = max(self._deadline, sent + granted_ms / 1000.0 - self.drift_bound)
            next_at = sent + self.keepalive_interval
            self._recheck_locks()

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
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=self.client.call_timeout + 1.0)
        with self._mu:
            never_ended = self._reason is None
            past_deadline = time.monotonic() >= self._deadline
        self._lose(SessionExpired("closed"), closing=True)
        if never_ended:  # after a deadline loss the server may still keep it: try briefly
            try:
                self.client.close_session(self.id, timeout=0.5 if past_deadline else self.client.call_timeout)
            except LeaseholdError:
                pass

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self._stop.set()
        except Exception:
            pass
