"""``Lock``: a lock of a ``Session`` with its fencing token.

``with session.lock("name", wait=5.0) as lock:`` acquires (LOCK.ACQUIRE,
waiting on the server like BLPOP) and releases at the end of the block.
Each request carries a fresh SEQ of the session; when the connection drops
mid-call the request is re-sent with the SAME SEQ, so a lost reply can
never acquire or enqueue twice (the server answers the retry with the first
answer). A re-sent wait that finds the first one already ended (nil) asks
again with a new SEQ while time remains.

A lock knows when it is lost: its session was lost or closed, or the lock
was revoked (noticed by the session's keepalive thread). Then ``lost`` is
true, ``lost_event`` is set and ``check()`` raises ``LockLost``; ``check()``
also raises once ``safe_deadline()`` has passed: the session's safe
deadline, or with ``lease=`` (a maximum hold) the lease's, whichever is
first (send time of the request that started or extended the lease + lease
- drift bound, 1% of the lease plus 2 ms). Holding a lock
whose ``check()`` passes means the server granted ``token`` and, as far as
this client can know, no one else has been granted it since. Resources
should still check the token (fencing: ``fenced_put``).

Thread-safety: one thread uses a Lock at a time, except ``lost``,
``lost_event``, ``check()`` and ``valid``, which are safe from any thread.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any, Optional

from . import _replies
from .session import default_drift_bound
from .errors import (
    LeaseholdError,
    LockLost,
    NotHolder,
    SessionExpired,
    StaleToken,
    TimedOut,
    WouldBlock,
)

if TYPE_CHECKING:
    from .session import Session


class Lock:
    def __init__(
        self,
        session: "Session",
        name: str,
        wait: Optional[float],
        *,
        shared: bool = False,
        limit: Optional[int] = None,
        delay: float = 0.0,
        lease: Optional[float] = None,
    ) -> None:
        if lease is not None and not 0.001 <= lease <= 2147483.647:
            raise ValueError("lease must be None or 0.001 to 2147483.647 seconds")
        if shared and limit is not None:
            raise ValueError("a lock is shared or a semaphore, not both")
        if limit is not None and limit < 1:
            raise ValueError("limit must be >= 1")
        if wait is not None and wait < 0:
            raise ValueError("wait must be None (no deadline), 0 (try once) or positive")
        self.session = session
        self.name = name
        self.wait = wait
        self.shared = shared
        self.limit = limit
        self.delay = delay
        self.lease = lease
        self._lease_deadline = float("inf")  # time.monotonic() value; inf: no lease
        self.token: int = 0
        self.lost_event = threading.Event()
        self._mu = threading.Lock()
        self._held = False
        self._reason: Optional[LeaseholdError] = None

    # -- state ------------------------------------------------------------------

    @property
    def held(self) -> bool:
        with self._mu:
            return self._held

    @property
    def lost(self) -> bool:
        """True once the lock or its session is lost (or past its safe deadline)."""
        with self._mu:
            if self._reason is not None:
                return True
            held = self._held
        return held and self.session.lost

    @property
    def reason(self) -> Optional[LeaseholdError]:
        with self._mu:
            if self._reason is not None:
                return self._reason
        return self.session.reason

    @property
    def valid(self) -> bool:
        """Held, not lost, and ``safe_deadline()`` has not passed."""
        return self.held and not self.lost and time.monotonic() < self.safe_deadline()

    def safe_deadline(self) -> float:
        """min(session safe deadline, lease deadline), a ``time.monotonic()`` value."""
        with self._mu:
            lease_deadline = self._lease_deadline
        return min(self.session.safe_deadline(), lease_deadline)

    @property
    def lease_over(self) -> bool:
        """True once the lease's client-side deadline has passed."""
        with self._mu:
            return time.monotonic() >= self._lease_deadline

    def check(self) -> None:
        """Raises ``LockLost`` unless ``valid``: call it before each step of
        the work (and still fence the writes)."""
        if not self.held and self._reason is None:
            raise LockLost(f"lock '{self.name}' is not held")
        if self.lost:
            raise LockLost(f"lock '{self.name}' token {self.token}: {self.reason}")
        if self.lease_over:
            raise LockLost(f"lock '{self.name}' token {self.token}: the lease (max hold) has ended")
        if time.monotonic() >= self.session.safe_deadline():
            raise LockLost(f"lock '{self.name}' token {self.token}: the safe deadline has passed")

    def _mark_lost(self, error: LeaseholdError) -> bool:
        with self._mu:
            if not self._held or self._reason is not None:
                return False
            self._reason = error
        self.lost_event.set()
        return True

    # -- acquire / release ----------------------------------------------------

    def acquire(self) -> int:
        """Acquires; returns the fencing token. ``WouldBlock`` (wait=0) or
        ``TimedOut`` when not granted; ``SessionExpired`` when the session is
        not live; ``Conflict`` for a mode mismatch; others as raised by
        ``Client.call``."""
        if self.held:
            raise RuntimeError(f"lock '{self.name}' is already acquired")
        session = self.session
        client = session.client
        if self.wait is None:
            wait_ms: Optional[int] = 0  # the server's "no deadline"
            end = float("inf")
        elif self.wait == 0:
            wait_ms = None
            end = time.monotonic()
        else:
            wait_ms = max(1, int(round(self.wait * 1000)))
            end = time.monotonic() + self.wait
        while True:
            resent = False

            def on_reconnect() -> None:
                nonlocal resent
                resent = True
                if session.lost:
                    raise SessionExpired(f"session lost while acquiring '{self.name}': {session.reason}")

            if wait_ms:
                wait_ms = max(1, int((end - time.monotonic()) * 1000)) if end != float("inf") else 0
            sent = time.monotonic()
            args = _replies.acquire_args(
                self.name,
                session.id,
                shared=self.shared,
                limit=self.limit,
                wait_ms=wait_ms,
                delay_ms=int(round(self.delay * 1000)),
                seq=session.next_seq(),
                lease_ms=self._lease_ms(self.lease),
            )
            extra = 0.0 if wait_ms is None else (end - time.monotonic() if end != float("inf") else float("inf"))
            reply = client.call(*args, wait=max(0.0, extra), on_reconnect=on_reconnect, resend_if_sent=True)
            if reply is not None:
                break
            if resent and time.monotonic() < end:
                continue  # the first wait ended while we were away; ask again
            if wait_ms is None:
                raise WouldBlock(f"lock '{self.name}' is held by others")
            raise TimedOut(f"lock '{self.name}' not granted within {self.wait}s")
        token = _replies.as_int(reply)
        with self._mu:
            self.token = token
            self._held = True
            self._reason = None
            self._lease_deadline = float("inf") if self.lease is None else self._lease_end(sent, self.lease)
        self.lost_event.clear()
        try:
            session._track(self)
        except LeaseholdError as e:
            self._mark_lost(e)
        return token

    def release(self) -> bool:
        """Releases now (bounded, re-sent with the same SEQ after a lost
        reply). True when released; False when the lock had already been
        lost (nothing to release). Idempotent."""
        with self._mu:
            if not self._held:
                return False
            was_lost = self._reason is not None
        self.session._forget(self)
        ok = False
        if not was_lost and not self.session.lost:
            try:
                self.session.client.call(
                    "LOCK.RELEASE", self.name, self.session.id, self.token, "SEQ", self.session.next_seq(),
                    resend_if_sent=True,
                )
                ok = True
            except (NotHolder, StaleToken, SessionExpired) as e:
                self._mark_lost(e)
        with self._mu:
            self._held = False
        return ok

    @staticmethod
    def _lease_ms(lease: Optional[float]) -> int:
        return 0 if lease is None else max(1, int(round(lease * 1000)))

    @staticmethod
    def _lease_end(sent: float, lease: float) -> float:
        return sent + lease - default_drift_bound(lease)

    def extend(self, lease: float) -> None:
        """LOCK.EXTEND: the lease now ends ``lease`` seconds from now, and
        ``safe_deadline()`` moves to the send time + lease - drift bound.
        ``Conflict`` for a lock without a lease; ``NotHolder`` / ``StaleToken``
        once it ended (nothing changes then)."""
        self.check()
        sent = time.monotonic()
        self.session.client.extend(self.name, self.session.id, self.token, self._lease_ms(lease))
        with self._mu:
            self._lease_deadline = self._lease_end(sent, lease)

    def transfer(self, to_session: int) -> int:
        """LOCK.TRANSFER to ``to_session`` (live; this user's, unless an
        admin): returns the new holder's token. This lock then holds
        nothing; on an error it still holds."""
        if not self.held:
            raise LockLost(f"lock '{self.name}' is not held")
        token = self.session.client.transfer(self.name, self.session.id, self.token, to_session)
        self.session._forget(self)
        with self._mu:
            self._held = False
        return token

    def fenced_put(self, key: str, value: Any) -> int:
        """FENCE.PUT with this lock and token. ``StaleToken`` once the lock
        has passed to someone else."""
        return self.session.client.fenced_put(key, value, self.name, self.token)

    def __enter__(self) -> "Lock":
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def __repr__(self) -> str:
        return f"<leasehold.Lock {self.name!r} token={self.token} held={self.held} lost={self.lost}>"
