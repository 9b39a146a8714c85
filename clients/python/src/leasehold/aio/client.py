"""asyncio ``Client`` on ``redis.asyncio``: the same contract as ``leasehold.Client``.

Redirects, failover to the next endpoint, jittered backoff and SEQ-safe
retries work as in the sync client (see its module doc); every wait is
bounded with ``asyncio.wait_for`` (a connection whose reply timed out is
dropped, never reused). Safe to share between tasks of one event loop.
A ``Session`` opened with a close grace keeps one more connection of its
own, outside the pool and its limit (see ``leasehold.aio.Session``).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Awaitable, Callable, Dict, List, Optional, Protocol, Tuple

import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import AuthenticationError as RedisAuthenticationError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from .. import _replies
from .._options import ClientOptions
from .._endpoints import Endpoint, EndpointsArg, endpoint_text, parse_endpoint, parse_endpoints
from .._replies import FencedValue, LockInfo
from .._tls_probe import closed_at_once, speaks_tls, tls_port_error
from ..errors import Redirect, Unreachable, from_redis_error

_TRANSPORT_ERRORS = (RedisConnectionError, RedisTimeoutError, OSError, asyncio.TimeoutError)


class _NotSent(Exception):
    pass


class _Lane(Protocol):
    """As ``leasehold.client._Lane`` (``_discard`` is a coroutine here)."""

    def _checkout(self, ep: Endpoint) -> aioredis.Connection: ...

    def _sent(self, conn: aioredis.Connection, args: Tuple[Any, ...], at: float) -> None: ...

    def _checkin(self, ep: Endpoint, conn: aioredis.Connection, sent_at: float, refused: bool = False) -> None: ...

    async def _discard(self, conn: aioredis.Connection) -> None: ...


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
        """Validates the options (as ``leasehold.Client``); does no I/O."""
        self._endpoints: List[Endpoint] = parse_endpoints(endpoints)
        self.options = ClientOptions.of(
            connect_timeout=connect_timeout, call_timeout=call_timeout, backoff_initial=backoff_initial,
            backoff_max=backoff_max, max_redirects=max_redirects, max_connections=max_connections,
            name=name, username=username, password=password, ssl=ssl, extra=connection_kwargs)
        self.connect_timeout = connect_timeout
        self.call_timeout = call_timeout
        self.max_redirects = max_redirects
        self._conn_class: Any = aioredis.SSLConnection if ssl else aioredis.Connection
        self._preferred: Endpoint = self._endpoints[0]
        self._current = ""
        self._idle: Dict[Endpoint, List[aioredis.Connection]] = {}
        self._slots = asyncio.Semaphore(max_connections)

    def current_endpoint(self) -> str:
        return self._current

    async def close(self) -> None:
        idle, self._idle = self._idle, {}
        for conns in idle.values():
            for c in conns:
                await c.disconnect()

    async def __aenter__(self) -> "Client":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def _new_connection(self, ep: Endpoint, client_name: Optional[str] = None) -> aioredis.Connection:
        """As ``leasehold.Client._new_connection``: not connected yet."""
        kwargs = self.options.connection_kwargs
        if client_name:
            kwargs = {**kwargs, "client_name": client_name}
        return self._conn_class(host=ep[0], port=ep[1], socket_connect_timeout=self.connect_timeout,
                                socket_timeout=None, **kwargs)

    # The pool, as the default lane of _attempt (see _Lane).

    def _checkout(self, ep: Endpoint) -> aioredis.Connection:
        conns = self._idle.get(ep)
        if conns:
            return conns.pop()
        return self._new_connection(ep)

    def _sent(self, conn: aioredis.Connection, args: Tuple[Any, ...], at: float) -> None:
        pass

    def _checkin(self, ep: Endpoint, conn: aioredis.Connection, sent_at: float, refused: bool = False) -> None:
        self._idle.setdefault(ep, []).append(conn)

    async def _discard(self, conn: aioredis.Connection) -> None:
        await conn.disconnect()

    async def _attempt(self, ep: Endpoint, args: Tuple[Any, ...], deadline: float, lane: "_Lane") -> Any:
        conn = lane._checkout(ep)
        fresh = not conn.is_connected
        sent_at = time.monotonic()
        try:
            try:
                await asyncio.wait_for(conn.send_command(*args), max(0.001, deadline - time.monotonic()))
            except RedisAuthenticationError:
                raise  # the handshake was refused: not a lost connection
            except _TRANSPORT_ERRORS as e:
                raise _NotSent(str(e)) from e
            lane._sent(conn, args, sent_at)
            reply = await asyncio.wait_for(conn.read_response(), max(0.001, deadline - time.monotonic()))
        except ResponseError:
            lane._checkin(ep, conn, sent_at, refused=True)
            raise
        except BaseException as e:
            await lane._discard(conn)
            if fresh and not self.options.ssl and closed_at_once(e) and \
                    await asyncio.to_thread(speaks_tls, ep, self.connect_timeout):
                raise tls_port_error(ep) from None  # retrying in plain text cannot help
            raise
        lane._checkin(ep, conn, sent_at)
        self._current = endpoint_text(ep)
        return reply

    async def call(
        self,
        *args: Any,
        retry: bool = True,
        wait: float = 0.0,
        timeout: Optional[float] = None,
        resend_if_sent: bool = False,
        on_reconnect: Optional[Callable[[], Awaitable[None]]] = None,
        via: Optional["_Lane"] = None,
    ) -> Any:
        """As ``leasehold.Client.call`` (``via``: a Session's bound
        connection, ``aio._bound.BoundConnection``, which takes no pool slot)."""
        deadline = time.monotonic() + (timeout if timeout is not None else self.call_timeout) + wait
        if via is not None:
            return await self._attempts(args, deadline, via, retry, resend_if_sent, on_reconnect)
        async with self._slots:
            return await self._attempts(args, deadline, self, retry, resend_if_sent, on_reconnect)

    async def _attempts(self, args: Tuple[Any, ...], deadline: float, lane: "_Lane", retry: bool,
                        resend_if_sent: bool, on_reconnect: Optional[Callable[[], Awaitable[None]]]) -> Any:
        redirects = attempt = 0
        while True:
            ep = self._preferred
            try:
                return await self._attempt(ep, args, deadline, lane)
            except ResponseError as e:
                err = from_redis_error(e)
                if isinstance(err, Redirect) and redirects < self.max_redirects:
                    redirects += 1
                    target = parse_endpoint(err.message)
                    if target not in self._endpoints:
                        self._endpoints.append(target)
                    self._preferred = target
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
            if self._preferred == ep:
                i = self._endpoints.index(ep) if ep in self._endpoints else -1
                self._preferred = self._endpoints[(i + 1) % len(self._endpoints)]
            if not retry or (sent and not resend_if_sent) or time.monotonic() >= deadline:
                raise Unreachable(f"{endpoint_text(ep)}: {last!r}")
            await asyncio.sleep(max(0.0, min(self.options.backoff_pause(attempt), deadline - time.monotonic())))
            attempt += 1
            if on_reconnect is not None:
                await on_reconnect()

    async def ping(self) -> bool:
        """As ``leasehold.Client.ping``: True when the server answered."""
        await self.call("PING", resend_if_sent=True)
        return True

    async def open_session(self, ttl_ms: int, owner: str = "", *, close_grace_ms: Optional[int] = None,
                           reqid: str = "", via: Optional["_Lane"] = None) -> int:
        """As ``leasehold.Client.open_session``."""
        args: List[Any] = ["SESSION.OPEN", ttl_ms] + (["OWNER", owner] if owner else [])
        if close_grace_ms is not None:
            args += ["ONCLOSE", close_grace_ms]
        if reqid:
            args += ["REQID", reqid]
        return _replies.as_int(await self.call(*args, resend_if_sent=bool(reqid), via=via))

    async def keepalive(self, session: int, timeout: Optional[float] = None, *, bind: bool = False,
                        via: Optional["_Lane"] = None,
                        on_reconnect: Optional[Callable[[], Awaitable[None]]] = None) -> int:
        """As ``leasehold.Client.keepalive``."""
        args: List[Any] = ["SESSION.KEEPALIVE", session] + (["BIND"] if bind else [])
        return _replies.as_int(await self.call(*args, timeout=timeout, resend_if_sent=True, via=via,
                                               on_reconnect=on_reconnect))

    async def close_session(self, session: int, timeout: Optional[float] = None) -> None:
        await self.call("SESSION.CLOSE", session, timeout=timeout, resend_if_sent=True)

    async def lock_info(self, name: str, timeout: Optional[float] = None) -> Optional[LockInfo]:
        return _replies.lock_info(await self.call("LOCK.INFO", name, timeout=timeout, resend_if_sent=True))

    async def revoke(self, name: str) -> None:
        await self.call("LOCK.REVOKE", name)

    async def fenced_put(self, key: str, value: Any, lock: str, token: int) -> int:
        return _replies.as_int(await self.call("FENCE.PUT", key, value, lock, token))

    async def fenced_get(self, key: str) -> Optional[FencedValue]:
        return _replies.fenced_value(await self.call("FENCE.GET", key, resend_if_sent=True))
