"""asyncio ``Session`` and ``Lock``: the contract of ``leasehold.Session`` /
``leasehold.Lock`` (safe deadline from keepalive send times minus the drift
bound, loss signalled once by callback, ``lost_event`` (an ``asyncio.Event``)
and ``lost``; SEQ re-sends; ``check()``), with the keepalive as a task.

The open carries a random REQID (a lost reply is re-sent and answers the
same session). ``close_grace=`` seconds works as in ``leasehold.Session``
(see its CLOSE GRACE): the session is opened with ONCLOSE on a connection
of its own (``aio._bound``, outside the pool, named
``leasehold-py-session-<id>`` unless the client has a name) that carries
every keepalive as ``SESSION.KEEPALIVE id BIND``; when that connection is
dropped or found broken, the safe deadline drops to at most bound floor +
grace - the drift bound scaled to the grace, and the keepalive task re-binds
on a new connection at once.

    session = await Session.open(client, ttl=10.0)
    async with session.lock("name", wait=5.0) as lock:
        lock.check()
        await lock.fenced_put("key", "value")
    await session.close()

Use from one event loop.
"""

from __future__ import annotations

import asyncio
import itertools
import math
import secrets
import time
from typing import Any, Awaitable, Callable, Optional, Set, TypeVar

from .. import _replies
from ..errors import (
    InvalidArgument,
    LeaseholdError,
    LockLost,
    NotHolder,
    SessionExpired,
    StaleToken,
    TimedOut,
    WouldBlock,
)
from ..session import BOUND_DROPPED, NO_KEEPALIVE, default_drift_bound, grace_drift_bound
from ._bound import BoundConnection
from .client import Client

T = TypeVar("T")


class Session:
    def __init__(self, client: Client, ttl: float, drift_bound: float, interval: float,
                 on_lost: Optional[Callable[[LeaseholdError], None]], close_grace: Optional[float] = None,
                 grace_drift: float = 0.0) -> None:
        """Use ``await Session.open(...)``."""
        self.client = client
        self.ttl = ttl
        self.drift_bound = drift_bound
        self.keepalive_interval = interval
        self.close_grace = close_grace
        self._grace_drift = grace_drift
        self.id = 0
        self.lost_event = asyncio.Event()
        self._on_lost = on_lost
        self._deadline = math.inf  # set once opened
        self._deadline_cause = NO_KEEPALIVE
        self._bound = None if close_grace is None else BoundConnection(client, self._bound_dropped)
        self._reason: Optional[LeaseholdError] = None
        self._seq = itertools.count(1)
        self._locks: Set["Lock"] = set()
        self._task: Optional["asyncio.Task[None]"] = None
        self._closed = False
        # Set while no request of the keepalive task is in flight on the
        # session's own connection: close() cancels the task only then (a
        # cancelled request drops that connection, and with a close grace the
        # server would end the session as "closed", with lock-delay).
        self._bound_idle = asyncio.Event()
        self._bound_idle.set()
        self._stopping = False

    @classmethod
    async def open(cls, client: Client, ttl: float = 10.0, *, owner: str = "",
                   keepalive_interval: Optional[float] = None, drift_bound: Optional[float] = None,
                   on_lost: Optional[Callable[[LeaseholdError], None]] = None,
                   close_grace: Optional[float] = None) -> "Session":
        """Opens the session (``ttl`` seconds) and starts its keepalive task;
        the options are ``leasehold.Session``'s."""
        if ttl <= 0:
            raise InvalidArgument("ttl must be positive")
        drift = default_drift_bound(ttl) if drift_bound is None else drift_bound
        if not 0 <= drift < ttl:
            raise InvalidArgument("drift_bound must be in [0, ttl)")
        if close_grace is not None and not 0 <= close_grace <= ttl:
            raise InvalidArgument("close_grace must be in [0, ttl]")
        grace_drift = 0.0 if close_grace is None else grace_drift_bound(close_grace, ttl, drift_bound)
        s = cls(client, ttl, drift, keepalive_interval or ttl / 3, on_lost, close_grace, grace_drift)
        reqid = "py-" + secrets.token_hex(12)
        if s._bound is None:
            sent = time.monotonic()
            s.id = await client.open_session(int(round(ttl * 1000)), owner, reqid=reqid)
        else:
            try:
                s.id = await client.open_session(int(round(ttl * 1000)), owner, reqid=reqid, via=s._bound,
                                                 close_grace_ms=int(round((close_grace or 0) * 1000)))
            except BaseException:
                await s._bound.close()
                raise
            sent = s._bound.answered_at  # the answered attempt: it (re)bound the session and began its TTL
        s._deadline = sent + ttl - drift
        s._deadline_cause = NO_KEEPALIVE
        s._task = asyncio.get_running_loop().create_task(s._run())
        return s

    def safe_deadline(self) -> float:
        return self._deadline

    @property
    def lost(self) -> bool:
        return self._reason is not None or time.monotonic() >= self._deadline

    @property
    def reason(self) -> Optional[LeaseholdError]:
        if self._reason is None and time.monotonic() >= self._deadline:
            return TimedOut("the session's safe deadline has passed")
        return self._reason

    def next_seq(self) -> int:
        return next(self._seq)

    def lock(self, name: str, wait: Optional[float] = None, *, shared: bool = False,
             limit: Optional[int] = None) -> "Lock":
        return Lock(self, name, wait, shared=shared, limit=limit)

    def _lose(self, error: LeaseholdError, closing: bool = False) -> None:
        if self._reason is not None:
            return
        self._reason = error
        self.lost_event.set()
        for lock in list(self._locks):
            lock._mark_lost(error)
        self._locks.clear()
        if not closing and self._on_lost is not None:
            self._on_lost(error)

    async def _on_bound(self, request: Awaitable[T]) -> T:
        """Awaits a request sent on the session's own connection; close()
        waits for it rather than cancel it (see ``_bound_idle``)."""
        self._bound_idle.clear()
        try:
            return await request
        finally:
            self._bound_idle.set()

    async def _run(self) -> None:
        if self._bound is not None:
            await self._on_bound(self._name_bound_connection())
        next_at = time.monotonic() + self.keepalive_interval
        if self._bound is not None and not self._bound.connected:
            next_at = time.monotonic()  # naming it found the session's connection broken: re-bind now
        while not self._stopping:
            now = time.monotonic()
            if now >= self._deadline:
                self._lose(TimedOut(self._deadline_cause))
                return
            if self._bound is None:
                await asyncio.sleep(max(0.0, min(next_at, self._deadline) - now))
            elif await self._bound.watch(min(next_at, self._deadline)):
                next_at = time.monotonic()  # the session's connection broke: re-bind on a new one now
            sent = time.monotonic()
            if sent >= self._deadline or sent < next_at:
                continue
            try:
                granted = await self._on_bound(self.client.keepalive(
                    self.id, timeout=self._deadline - sent, bind=self._bound is not None, via=self._bound,
                    on_reconnect=self._check_deadline))
            except SessionExpired as e:
                self._lose(e)
                return
            except LeaseholdError:
                next_at = time.monotonic() + min(0.05, self.keepalive_interval)
                continue
            self._deadline = max(self._deadline, sent + granted / 1000.0 - self.drift_bound)
            self._deadline_cause = NO_KEEPALIVE
            next_at = sent + self.keepalive_interval
            if self._stopping:
                return
            for lock in list(self._locks):
                try:
                    info = await self.client.lock_info(lock.name, timeout=self.keepalive_interval)
                except LeaseholdError:
                    break
                if info is None or not any(h.session == self.id and h.token == lock.token for h in info.holders):
                    self._locks.discard(lock)
                    lock._mark_lost(NotHolder(f"lock '{lock.name}' is no longer held"))

    async def _check_deadline(self) -> None:
        """Before a keepalive is re-sent: give up once the safe deadline passed."""
        if time.monotonic() >= self._deadline:
            raise TimedOut("the session's safe deadline has passed")

    def _bound_dropped(self, floor: float) -> None:
        """The session's connection (close grace) is gone: see ``leasehold.Session``."""
        assert self.close_grace is not None
        limit = floor + max(0.0, self.close_grace - self._grace_drift)
        if limit < self._deadline:
            self._deadline = limit
            self._deadline_cause = BOUND_DROPPED

    async def _name_bound_connection(self) -> None:
        assert self._bound is not None
        if self.client.options.connection_kwargs.get("client_name"):
            return
        self._bound.name = f"leasehold-py-session-{self.id}"
        try:  # awaited until the safe deadline, as a keepalive is: see leasehold.Session
            await self.client.call("CLIENT", "SETNAME", self._bound.name, retry=False, via=self._bound,
                                   timeout=max(0.0, self._deadline - time.monotonic()))
        except LeaseholdError:
            pass  # a broken connection was dropped (on_drop ran); the next one carries the name

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._task is not None:
            self._stopping = True
            if self._bound is not None and not self._bound_idle.is_set():
                # Let the request in flight on the session's own connection
                # end (bounded), so that connection is not dropped before
                # SESSION.CLOSE below: the task then returns by itself.
                wait = min(self.client.call_timeout, max(0.0, self._deadline - time.monotonic()))
                try:
                    await asyncio.wait_for(self._bound_idle.wait(), timeout=wait)
                except asyncio.TimeoutError:
                    pass
            self._task.cancel()
            try:
                await self._task
            except (asyncio.CancelledError, Exception):
                pass
        may_live = self._reason is None or isinstance(self._reason, TimedOut)  # the server may still keep it
        past = time.monotonic() >= self._deadline
        self._lose(SessionExpired("closed"), closing=True)
        if may_live:
            try:
                await self.client.close_session(self.id, timeout=0.5 if past else self.client.call_timeout)
            except LeaseholdError:
                pass
        if self._bound is not None:
            await self._bound.close()  # after SESSION.CLOSE, so a clean exit is no "closed" expiry

    async def __aenter__(self) -> "Session":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


class Lock:
    def __init__(self, session: Session, name: str, wait: Optional[float], *, shared: bool = False,
                 limit: Optional[int] = None) -> None:
        self.session = session
        self.name = name
        self.wait = wait
        self.shared = shared
        self.limit = limit
        self.token = 0
        self.held = False
        self.lost_event = asyncio.Event()
        self._reason: Optional[LeaseholdError] = None

    @property
    def lost(self) -> bool:
        return self._reason is not None or (self.held and self.session.lost)

    @property
    def valid(self) -> bool:
        return self.held and not self.lost

    def check(self) -> None:
        """Raises ``LockLost`` unless held, not lost and before the safe deadline."""
        if not self.valid:
            raise LockLost(f"lock '{self.name}' token {self.token}: {self._reason or self.session.reason or 'not held'}")

    def _mark_lost(self, error: LeaseholdError) -> None:
        if self.held and self._reason is None:
            self._reason = error
            self.lost_event.set()

    async def acquire(self) -> int:
        s = self.session
        if self.wait is None:
            wait_ms: Optional[int] = 0
            end = float("inf")
        elif self.wait == 0:
            wait_ms, end = None, time.monotonic()
        else:
            end = time.monotonic() + self.wait
            wait_ms = max(1, int(self.wait * 1000))
        while True:
            resent = False

            async def on_reconnect() -> None:
                nonlocal resent
                resent = True
                if s.lost:
                    raise SessionExpired(f"session lost while acquiring '{self.name}'")

            if wait_ms and end != float("inf"):
                wait_ms = max(1, int((end - time.monotonic()) * 1000))
            args = _replies.acquire_args(self.name, s.id, shared=self.shared, limit=self.limit, wait_ms=wait_ms,
                                         delay_ms=0, seq=s.next_seq())
            extra = 0.0 if wait_ms is None else max(0.0, end - time.monotonic())
            reply = await s.client.call(*args, wait=extra, on_reconnect=on_reconnect, resend_if_sent=True)
            if reply is not None:
                break
            if resent and time.monotonic() < end:
                continue
            if wait_ms is None:
                raise WouldBlock(f"lock '{self.name}' is held by others")
            raise TimedOut(f"lock '{self.name}' not granted within {self.wait}s")
        self.token = _replies.as_int(reply)
        self.held = True
        self._reason = None
        s._locks.add(self)
        if s._reason is not None:
            self._mark_lost(s._reason)
        return self.token

    async def release(self) -> bool:
        if not self.held:
            return False
        self.session._locks.discard(self)
        ok = False
        if self._reason is None and not self.session.lost:
            try:
                await self.session.client.call("LOCK.RELEASE", self.name, self.session.id, self.token, "SEQ",
                                               self.session.next_seq(), resend_if_sent=True)
                ok = True
            except (NotHolder, StaleToken, SessionExpired) as e:
                self._mark_lost(e)
        self.held = False
        return ok

    async def fenced_put(self, key: str, value: Any) -> int:
        return await self.session.client.fenced_put(key, value, self.name, self.token)

    async def __aenter__(self) -> "Lock":
        await self.acquire()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.release()
