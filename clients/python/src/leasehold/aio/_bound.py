"""asyncio ``BoundConnection``: the contract of ``leasehold._bound`` (the one
connection an ONCLOSE session is bound to, its bound floor, ``on_drop``)
on ``redis.asyncio``.

``watch(until)`` waits for the next keepalive while watching the idle
connection (a readable connection means EOF, a reset or the server's
closing error: it is dropped at once). Use from one event loop, one task
at a time (the opener, then the session's keepalive task, then ``close()``
once that task is done).
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any, Callable, Optional, Set, Tuple

import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from .._bound import BoundFloor
from .._endpoints import Endpoint

if TYPE_CHECKING:
    from .client import Client


class BoundConnection:
    def __init__(self, client: "Client", on_drop: Callable[[float], None]) -> None:
        self._client = client
        self._on_drop = on_drop
        self._ep: Optional[Endpoint] = None
        self._conn: Optional[aioredis.Connection] = None
        self._floor = BoundFloor()
        self._closing: Set["asyncio.Future[None]"] = set()
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

    def _checkout(self, ep: Endpoint) -> aioredis.Connection:
        if self._conn is not None and self._ep != ep:
            self._forget(self._conn)  # redirected or failed over: the session binds on the new one
        if self._conn is None:
            self._conn = self._client._new_connection(ep, client_name=self.name)
            self._ep = ep
        return self._conn

    def _sent(self, conn: aioredis.Connection, args: Tuple[Any, ...], at: float) -> None:
        if conn is self._conn:
            self._floor.sent(args, at)

    def _checkin(self, ep: Endpoint, conn: aioredis.Connection, sent_at: float, refused: bool = False) -> None:
        if conn is self._conn:
            self._floor.answered(sent_at, refused)

    async def _discard(self, conn: aioredis.Connection) -> None:
        if conn is self._conn:
            await self.drop()
        else:
            await _disconnect(conn)

    # -- the session's side ---------------------------------------------------------

    def _forget(self, conn: aioredis.Connection) -> None:
        """Lets go of the connection at once (``on_drop`` first); it is
        disconnected in the background."""
        floor = self._floor.take()
        if floor is not None:
            self._on_drop(floor)
        self._conn = None
        task = asyncio.ensure_future(_disconnect(conn))
        self._closing.add(task)  # held until done
        task.add_done_callback(self._closing.discard)

    async def drop(self) -> None:
        """Disconnects; ``on_drop(floor)`` first if the session may have been bound to it."""
        floor = self._floor.take()
        if floor is not None:
            self._on_drop(floor)
        conn, self._conn = self._conn, None
        if conn is not None:
            await _disconnect(conn)

    async def close(self) -> None:
        """Disconnects without ``on_drop`` (the session has ended)."""
        conn, self._conn = self._conn, None
        self._floor.take()
        if conn is not None:
            await _disconnect(conn)

    async def watch(self, until: float) -> bool:
        """Waits until ``until`` (``time.monotonic()``). True if the
        connection turned out broken meanwhile (it was dropped, ``on_drop`` ran)."""
        conn = self._conn
        remaining = max(0.0, until - time.monotonic())
        if conn is None or not conn.is_connected:
            await asyncio.sleep(remaining)
            return False
        try:
            broken = bool(await conn.can_read(timeout=remaining))  # bytes nobody asked for
        except (RedisConnectionError, RedisTimeoutError, OSError):
            broken = True  # EOF or a reset
        if broken and conn is self._conn:
            await self.drop()
            return True
        return False


async def _disconnect(conn: aioredis.Connection) -> None:
    try:
        await conn.disconnect()
    except (RedisConnectionError, RedisTimeoutError, OSError):
        pass
