"""``Client``: connections to a leasehold server or cluster, and the typed commands.

Like the C++ ``leasehold::client::Client`` (docs/client.md): endpoints are
tried in order starting with the one that worked last; ``-REDIRECT host:port``
makes the client prefer that address (at most ``max_redirects`` hops per
call); a failed connection moves on to the next endpoint after a jittered
exponential backoff, within the call's deadline, when repeating the request
is harmless (reads, keepalives, the SEQ-tagged LOCK.ACQUIRE/LOCK.RELEASE).
``SESSION.OPEN`` is re-sent only when it was never sent, unless it carries
a ``REQID`` (``Session`` always sends one): then a retry returns the same
session, so it is re-sent like a keepalive.

The client speaks RESP2 through redis-py's ``redis.Connection`` (redis-py 4.3
has no RESP3), so it gets no server pushes; sessions poll instead (see
``Session``). ``username``/``password``/``ssl`` are passed to redis-py as
they are, for servers that ask for them.

Thread-safety: a Client may be shared by any number of threads; each call
takes a pooled connection of its own (at most ``max_connections`` at once;
further callers wait), so a blocking acquire does not stall other threads.
A ``Session`` opened with a close grace keeps one more connection of its
own, made here (same TLS, AUTH, endpoints, redirects) but outside the pool
and its limit (see ``Session``).
"""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Any, Callable, ContextManager, Dict, List, Optional, Protocol, Tuple

import redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import AuthenticationError as RedisAuthenticationError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from . import _replies
from ._options import ClientOptions
from ._endpoints import Endpoint, EndpointsArg, endpoint_text, parse_endpoint, parse_endpoints
from ._replies import FencedValue, LockInfo
from ._tls_probe import closed_at_once, speaks_tls, tls_port_error
from .errors import LeaseholdError, Redirect, TimedOut, Unreachable, from_redis_error

_TRANSPORT_ERRORS = (RedisConnectionError, RedisTimeoutError, OSError)


class _NotSent(Exception):
    """The request never left this process (safe to send anywhere)."""


class _Lane(Protocol):
    """Where one attempt of a call gets its connection and returns it: the
    client's pool (the Client itself) or a Session's bound connection
    (``_bound.BoundConnection``). ``_sent`` is told once the request left
    (``at``: the time just before it was sent), ``_checkin`` once it was
    answered (``refused``: by an error reply, which leaves the connection
    usable), ``_discard`` when the connection failed or timed out (it must
    be disconnected)."""

    def _checkout(self, ep: Endpoint) -> redis.Connection: ...

    def _sent(self, conn: redis.Connection, args: Tuple[Any, ...], at: float) -> None: ...

    def _checkin(self, ep: Endpoint, conn: redis.Connection, sent_at: float, refused: bool = False) -> None: ...

    def _discard(self, conn: redis.Connection) -> None: ...


class Client:
    def __init__(
        self,
        endpoints: EndpointsArg = "127.0.0.1:7379",
        *,
        connect_timeout: float = 1.0,
        call_timeout: float = 5.0,
        backoff_initial: float = 0.025,
        backoff_max: float = 1.0,
        max_redirects: int = 4,
        max_connections: int = 8,
        name: Optional[str] = None,
        username: Optional[str] = None,
        password: Optional[str] = None,
        ssl: bool = False,
        **connection_kwargs: Any,
    ) -> None:
        """Validates the options; does no I/O. ``InvalidArgument`` on bad ones."""
        self._endpoints: List[Endpoint] = parse_endpoints(endpoints)
        self.options = ClientOptions.of(
            connect_timeout=connect_timeout, call_timeout=call_timeout, backoff_initial=backoff_initial,
            backoff_max=backoff_max, max_redirects=max_redirects, max_connections=max_connections,
            name=name, username=username, password=password, ssl=ssl, extra=connection_kwargs)
        self.connect_timeout = connect_timeout
        self.call_timeout = call_timeout
        self.max_redirects = max_redirects
        self.max_connections = max_connections
        self._conn_class: Any = redis.SSLConnection if ssl else redis.Connection
        self._mu = threading.Lock()
        self._preferred: Endpoint = self._endpoints[0]
        self._current: str = ""
        self._idle: Dict[Endpoint, List[redis.Connection]] = {}
        self._slots = threading.BoundedSemaphore(max_connections)
        self._closed = False

    # -- connection plumbing -------------------------------------------------

    @property
    def endpoints(self) -> List[Endpoint]:
        with self._mu:
            return list(self._endpoints)

    def current_endpoint(self) -> str:
        """``host:port`` of the last successful call ("" before any)."""
        with self._mu:
            return self._current

    def close(self) -> None:
        """Closes the pooled connections. Calls after close() reconnect."""
        with self._mu:
            idle, self._idle = self._idle, {}
        for conns in idle.values():
            for c in conns:
                c.disconnect()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _new_connection(self, ep: Endpoint, client_name: Optional[str] = None) -> redis.Connection:
        """A new, not yet connected connection to ``ep`` with this client's
        options (TLS, AUTH, client name: ``client_name`` replaces the
        client's). It connects on its first request."""
        host, port = ep
        kwargs = self.options.connection_kwargs
        if client_name:
            kwargs = {**kwargs, "client_name": client_name}
        return self._conn_class(
            host=host,
            port=port,
            socket_timeout=self.call_timeout,
            socket_connect_timeout=self.connect_timeout,
            **kwargs,
        )

    # The pool, as the default lane of _attempt (see _Lane).

    def _checkout(self, ep: Endpoint) -> redis.Connection:
        with self._mu:
            conns = self._idle.get(ep)
            if conns:
                return conns.pop()
        return self._new_connection(ep)

    def _sent(self, conn: redis.Connection, args: Tuple[Any, ...], at: float) -> None:
        pass

    def _checkin(self, ep: Endpoint, conn: redis.Connection, sent_at: float, refused: bool = False) -> None:
        with self._mu:
            self._idle.setdefault(ep, []).append(conn)

    def _discard(self, conn: redis.Connection) -> None:
        conn.disconnect()

    def _prefer(self, ep: Endpoint) -> None:
        with self._mu:
            if ep not in self._endpoints:
                self._endpoints.append(ep)
            self._preferred = ep

    def _next_endpoint(self, failed: Endpoint) -> None:
        with self._mu:
            if self._preferred != failed:
                return
            i = self._endpoints.index(failed) if failed in self._endpoints else -1
            self._preferred = self._endpoints[(i + 1) % len(self._endpoints)]

    def _backoff(self, attempt: int, deadline: float) -> None:
        time.sleep(max(0.0, min(self.options.backoff_pause(attempt), deadline - time.monotonic())))

    def _attempt(self, ep: Endpoint, args: Tuple[Any, ...], read_deadline: float, lane: "_Lane") -> Any:
        conn = lane._checkout(ep)
        fresh = getattr(conn, "_sock", None) is None  # not connected yet
        sent_at = time.monotonic()
        try:
            try:
                conn.send_command(*args)
            except RedisAuthenticationError:
                raise  # the handshake was refused: not a lost connection
            except _TRANSPORT_ERRORS as e:
                raise _NotSent(str(e)) from e
            lane._sent(conn, args, sent_at)
            # Wait for the reply no longer than the call's deadline (which may
            # be far beyond the socket timeout for a blocking acquire).
            while True:
                remaining = read_deadline - time.monotonic()
                if remaining <= 0:
                    raise RedisTimeoutError("no reply before the call's deadline")
                if conn.can_read(timeout=min(1.0, remaining)):
                    break
            reply = conn.read_response()
        except ResponseError:
            lane._checkin(ep, conn, sent_at, refused=True)  # an error reply: the connection is fine
            raise
        except BaseException as e:
            lane._discard(conn)
            if fresh and not self.options.ssl and closed_at_once(e) and speaks_tls(ep, self.connect_timeout):
                raise tls_port_error(ep) from None  # retrying in plain text cannot help
            raise
        lane._checkin(ep, conn, sent_at)
        with self._mu:
            self._current = endpoint_text(ep)
        return reply

    def call(
        self,
        *args: Any,
        retry: bool = True,
        wait: float = 0.0,
        timeout: Optional[float] = None,
        resend_if_sent: bool = False,
        on_reconnect: Optional[Callable[[], None]] = None,
        reserve: bool = True,
        via: Optional["_Lane"] = None,
    ) -> Any:
        """Sends one command and returns its (RESP2, undecoded) reply.

        ``wait``: extra seconds the server may take (a blocking acquire).
        ``retry``: try again after a connection failure within the deadline.
        ``resend_if_sent``: True only for requests that are harmless to run
        twice (reads, keepalives, SEQ-tagged LOCK.ACQUIRE / LOCK.RELEASE);
        otherwise (the default) only a request that was never sent is
        retried, and a lost reply raises ``Unreachable``.
        ``on_reconnect`` is called before each re-send. ``reserve=False``
        skips the ``max_connections`` limit (the keepalive thread uses it
        so that blocking acquires can never starve it). ``via``: send on
        that lane's connection instead of a pooled one (a Session's bound
        connection, ``_bound.BoundConnection``; it takes no pool slot).
        Raises the mapped ``LeaseholdError`` for an error reply,
        ``Unreachable`` when no endpoint answered in time.
        """
        if self._closed:
            raise Unreachable("client closed")
        deadline = time.monotonic() + (timeout if timeout is not None else self.call_timeout) + wait
        redirects = 0
        attempt = 0
        slot: ContextManager[Any] = contextlib.nullcontext()
        if reserve and via is None:
            slot = self._slots
        lane: _Lane = self if via is None else via
        with slot:
            while True:
                with self._mu:
                    ep = self._preferred
                try:
                    return self._attempt(ep, args, deadline, lane)
                except ResponseError as e:
                    err = from_redis_error(e)
                    if isinstance(err, Redirect) and redirects < self.max_redirects:
                        redirects += 1
                        self._prefer(parse_endpoint(err.message))
                        continue
                    raise err from None
                except RedisAuthenticationError as e:
                    raise from_redis_error(e) from None
                except _NotSent as e:
                    last: Exception = e
                    sent = False
                except _TRANSPORT_ERRORS as e:
                    last = e
                    sent = True
                self._next_endpoint(ep)
                if not retry or (sent and not resend_if_sent):
                    raise Unreachable(f"{endpoint_text(ep)}: {last}")
                if time.monotonic() >= deadline:
                    raise Unreachable(f"no endpoint answered in time (last {endpoint_text(ep)}: {last})")
                self._backoff(attempt, deadline)
                attempt += 1
                if on_reconnect is not None:
                    on_reconnect()

    # -- typed commands (docs/protocol.md) ---------------------------------

    def ping(self) -> bool:
        """True when the server answered (as redis-py's ``ping()``); raises
        the mapped error otherwise."""
        self.call("PING", resend_if_sent=True)
        return True

    def info(self, section: str = "") -> Dict[str, str]:
        """INFO as a dict of field -> value (section headers dropped)."""
        raw = _replies.text(self.call("INFO", section, resend_if_sent=True) if section else self.call("INFO", resend_if_sent=True))
        out: Dict[str, str] = {}
        for line in raw.splitlines():
            if line and not line.startswith("#") and ":" in line:
                k, _, v = line.partition(":")
                out[k] = v
        return out

    def open_session(
        self,
        ttl_ms: int,
        owner: str = "",
        *,
        close_grace_ms: Optional[int] = None,
        reqid: str = "",
        via: Optional["_Lane"] = None,
    ) -> int:
        """``SESSION.OPEN``. ``close_grace_ms``: ONCLOSE (the session ends that
        long after the connection bound to it closes). ``reqid``: the retry
        key; with one, a lost reply is retried and returns the same session.
        ``via``: as in ``call`` (``Session`` opens an ONCLOSE session on its
        own connection)."""
        args: List[Any] = ["SESSION.OPEN", ttl_ms]
        if owner:
            args += ["OWNER", owner]
        if close_grace_ms is not None:
            args += ["ONCLOSE", close_grace_ms]
        if reqid:
            args += ["REQID", reqid]
        return _replies.as_int(self.call(*args, resend_if_sent=bool(reqid), via=via))

    def keepalive(
        self,
        session: int,
        timeout: Optional[float] = None,
        reserve: bool = True,
        bind: bool = False,
        via: Optional["_Lane"] = None,
        on_reconnect: Optional[Callable[[], None]] = None,
    ) -> int:
        """The TTL now granted, in ms. ``SessionExpired`` when gone.
        ``bind``: also bind an ONCLOSE session to the connection that carried
        it. ``via``, ``on_reconnect``: as in ``call``."""
        args: List[Any] = ["SESSION.KEEPALIVE", session] + (["BIND"] if bind else [])
        return _replies.as_int(self.call(*args, timeout=timeout, reserve=reserve, resend_if_sent=True, via=via,
                                         on_reconnect=on_reconnect))

    def close_session(self, session: int, timeout: Optional[float] = None) -> None:
        self.call("SESSION.CLOSE", session, timeout=timeout, resend_if_sent=True)

    def kill_session(self, session: int) -> None:
        self.call("SESSION.KILL", session)

    def lock_info(self, name: str, timeout: Optional[float] = None, reserve: bool = True) -> Optional[LockInfo]:
        return _replies.lock_info(self.call("LOCK.INFO", name, timeout=timeout, reserve=reserve, resend_if_sent=True))

    def list_locks(self, prefix: str = "", count: int = 1000) -> List[LockInfo]:
        args: List[Any] = ["LOCK.LIST"] + ([prefix] if prefix else []) + ["COUNT", count]
        reply = self.call(*args, resend_if_sent=True)
        return [info for info in (_replies.lock_info(x) for x in reply) if info is not None]

    def revoke(self, name: str) -> None:
        self.call("LOCK.REVOKE", name)

    def cancel_wait(self, name: str, session: int) -> None:
        self.call("LOCK.CANCEL", name, session)

    def fenced_put(self, key: str, value: Any, lock: str, token: int) -> int:
        """FENCE.PUT: writes ``value`` if ``token`` is a current holder's token
        of ``lock``; returns the token. ``StaleToken`` otherwise."""
        return _replies.as_int(self.call("FENCE.PUT", key, value, lock, token))

    def extend(self, name: str, session: int, token: int, lease_ms: int) -> None:
        """LOCK.EXTEND: the grant's lease now ends ``lease_ms`` from now.
        ``StaleToken``, ``NotHolder``, ``Conflict`` (no lease), ``LimitExceeded``
        (over the server's --max-hold)."""
        self.call("LOCK.EXTEND", name, session, token, lease_ms)

    def transfer(self, name: str, from_session: int, token: int, to_session: int) -> int:
        """LOCK.TRANSFER: moves the grant to ``to_session``; returns its new,
        higher token. ``StaleToken``, ``NotHolder``, ``NotFound`` (target not
        live), ``Conflict`` (target holds or waits for the lock)."""
        return _replies.as_int(self.call("LOCK.TRANSFER", name, from_session, token, to_session))

    def fenced_get(self, key: str) -> Optional[FencedValue]:
        return _replies.fenced_value(self.call("FENCE.GET", key, resend_if_sent=True))


__all__ = ["Client", "LeaseholdError", "TimedOut"]
