"""``BoundConnection``: the one connection an ONCLOSE session is bound to.

A ``Session`` opened with ``close_grace`` sends its ``SESSION.OPEN ...
ONCLOSE ... REQID`` and every ``SESSION.KEEPALIVE id BIND`` on a connection
of its own: made by the ``Client`` (its TLS, AUTH and client name; its
endpoints, redirects and failover, as for any call: ``Client.call(...,
via=bound)``) but kept outside its pool and its connection limit. So no
pooled connection the client drops for reasons of its own (a call timing
out, a reset) is ever the one the server ends the session for.

BOUND FLOOR: the send time (``time.monotonic()``) of the latest request
answered on the connection, or of the binding request (an open or a BIND)
that bound it, whichever is later. The server saw the connection open at or
after that time, so when it sees it close it ends the session no earlier
than floor + close grace. Whenever the connection is dropped or found
broken (an error, a reset, EOF, a redirect elsewhere, a call given up at
its deadline) ``on_drop(floor)`` is called, once, if a binding request was
sent on it and not refused: an error reply (``-REDIRECT``, ``-TRYAGAIN``...)
changes nothing on the server, so the first binding request of a
connection answered with one bound nothing. The next request makes a new
connection (which the session binds again). A keepalive is never given up
at the call timeout, only at the safe deadline (``Session``), so a late
reply closes nothing: silence is not a close.

``watch(until, wake)`` waits for the next keepalive while watching the idle
connection: the server sends nothing unasked on RESP2, so a readable socket
means EOF, a reset or the error the server sends before it closes one: the
connection is dropped at once rather than found broken at the next
keepalive.

Thread-safety: one user at a time (the opening thread, then the session's
keepalive thread, then ``close()`` once that thread stopped).
"""

from __future__ import annotations

import selectors
import socket
import time
from typing import TYPE_CHECKING, Any, Callable, Optional, Tuple

import redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from ._endpoints import Endpoint

if TYPE_CHECKING:
    from .client import Client


def binds(args: Tuple[Any, ...]) -> bool:
    """True for the requests that bind an ONCLOSE session to the connection
    carrying them: ``SESSION.OPEN ... ONCLOSE`` and ``SESSION.KEEPALIVE id BIND``."""
    words = [a.upper() if isinstance(a, str) else a for a in args]
    if not words:
        return False
    return (words[0] == "SESSION.OPEN" and "ONCLOSE" in words) or (words[0] == "SESSION.KEEPALIVE" and "BIND" in words)


class BoundFloor:
    """The bound-floor bookkeeping of one connection (shared with the
    asyncio variant): None until a binding request was sent on it."""

    def __init__(self) -> None:
        self.floor: Optional[float] = None
        self.answered_at = 0.0  # send time of the latest answered request
        self._binding_at: Optional[float] = None  # send time of the request that set floor, until answered

    def sent(self, args: Tuple[Any, ...], at: float) -> None:
        if self.floor is None and binds(args):
            self.floor = at  # bound from here on, if the server reads it
            self._binding_at = at

    def answered(self, sent_at: float, refused: bool = False) -> None:
        """The request sent at ``sent_at`` was answered; ``refused``: by an
        error reply, which bound nothing if that request was the binding one."""
        self.answered_at = sent_at
        if refused and self._binding_at == sent_at:
            self.floor = None
        elif self.floor is not None:
            self.floor = max(self.floor, sent_at)
        if self._binding_at == sent_at:
            self._binding_at = None

    def take(self) -> Optional[float]:
        """The floor of a connection being dropped (None: never bound); resets."""
        floor, self.floor, self._binding_at = self.floor, None, None
        return floor


class BoundConnection:
    def __init__(self, client: "Client", on_drop: Callable[[float], None]) -> None:
        self._client = client
        self._on_drop = on_drop
        self._ep: Optional[Endpoint] = None
        self._conn: Optional[redis.Connection] = None
        self._floor = BoundFloor()
        self.name: Optional[str] = None  # client name of the next connections (None: the client's)

    @property
    def connected(self) -> bool:
        """False after a drop, until the next request."""
        return self._conn is not None

    @property
    def answered_at(self) -> float:
        """Send time of the latest request answered on this lane."""
        return self._floor.answered_at

    # -- the lane of Client._attempt ----------------------------------------------

    def _checkout(self, ep: Endpoint) -> redis.Connection:
        if self._conn is not None and self._ep != ep:
            self.drop()  # redirected or failed over: the session binds on the new one
        if self._conn is None:
            self._conn = self._client._new_connection(ep, client_name=self.name)
            self._ep = ep
        return self._conn

    def _sent(self, conn: redis.Connection, args: Tuple[Any, ...], at: float) -> None:
        if conn is self._conn:
            self._floor.sent(args, at)

    def _checkin(self, ep: Endpoint, conn: redis.Connection, sent_at: float, refused: bool = False) -> None:
        if conn is self._conn:
            self._floor.answered(sent_at, refused)

    def _discard(self, conn: redis.Connection) -> None:
        if conn is self._conn:
            self.drop()
        else:
            conn.disconnect()

    # -- the session's side ---------------------------------------------------------

    def drop(self) -> None:
        """Disconnects; ``on_drop(floor)`` first if the session may have been bound to it."""
        floor = self._floor.take()
        if floor is not None:
            self._on_drop(floor)
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.disconnect()

    def close(self) -> None:
        """Disconnects without ``on_drop`` (the session has ended)."""
        conn, self._conn = self._conn, None
        self._floor.take()
        if conn is not None:
            conn.disconnect()

    def watch(self, until: float, wake: socket.socket) -> bool:
        """Waits until ``until`` (``time.monotonic()``) or until ``wake`` is
        readable. True if the connection turned out broken meanwhile (it was
        dropped, ``on_drop`` ran)."""
        conn = self._conn
        sock = getattr(conn, "_sock", None) if conn is not None else None
        if conn is None or sock is None:
            _readable(None, wake, until)
            return False
        if not _readable(sock, wake, until):
            return False  # time for the keepalive, or close()
        try:
            broken = bool(conn.can_read(timeout=0))  # bytes nobody asked for: the close's error reply
        except (RedisConnectionError, RedisTimeoutError, OSError):
            broken = True  # EOF or a reset
        if broken:
            self.drop()
            return True
        # Readable without a byte for us (TLS bookkeeping): wait out the rest unwatched.
        _readable(None, wake, until)
        return False


def _readable(sock: Optional[socket.socket], wake: socket.socket, until: float) -> bool:
    """Waits until ``until``, until ``wake`` is readable (False) or until
    ``sock`` (if any) is (True). Any number of file descriptors (not select())."""
    with selectors.DefaultSelector() as sel:
        sel.register(wake, selectors.EVENT_READ)
        if sock is not None:
            sel.register(sock, selectors.EVENT_READ)
        ready = {key.fileobj for key, _ in sel.select(max(0.0, until - time.monotonic()))}
    return sock is not None and sock in ready and wake not in ready
