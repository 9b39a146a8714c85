"""``Redlock``: the Redis Redlock algorithm over N independent servers.

For EFFICIENCY locks only (two holders at once waste work but corrupt
nothing). Redlock hands out NO fencing token: the value it sets is random,
not ordered, so a resource cannot tell a stale holder from the current one.
Its safety rests on timing assumptions (bounded process pauses, bounded
clock drift on every server); a holder that pauses past the validity time,
or a server whose clock jumps, lets two clients hold the lock at once, and
nothing stops the stale one's writes. For correctness use a leasehold
``Session`` lock and pass its token to the resource (docs/python.md,
``leasehold demo redlock`` shows both failures).

The algorithm, as described by the Redis docs and the seeds:

1. take a random value and the start time (monotonic clock);
2. ``SET key value NX PX ttl`` on each server in turn (a short per-server
   timeout, so a dead server does not eat the validity);
3. the lock is held if a majority (N//2 + 1) answered OK and the validity
   ``ttl - elapsed - drift`` is still positive, drift = 0.01 * ttl + 2 ms;
4. otherwise release on every server and retry after a random delay.

Release deletes the key on every server only where it still holds our value
(the compare-and-delete script; leasehold servers run it natively).

The servers may be Redis or leasehold (its compat keys). Thread-safety: a
Redlock may be shared by threads (redis-py clients are thread-safe).
"""

from __future__ import annotations

import random
import secrets
import time
from dataclasses import dataclass
from typing import Callable, List, Optional, Sequence, Union

import redis

from ._endpoints import parse_endpoint

RELEASE_SCRIPT = 'if redis.call("get",KEYS[1]) == ARGV[1] then\n    return redis.call("del",KEYS[1])\nelse\n    return 0\nend'

ServerArg = Union[str, "redis.Redis[bytes]"]


@dataclass(frozen=True)
class RedlockLease:
    resource: str
    value: str
    validity: float  # seconds the lock is considered held, from `acquired_at`
    acquired_at: float  # monotonic start of the attempt that won
    granted_by: List[int]  # indexes of the servers that answered OK

    @property
    def valid_until(self) -> float:
        """``time.monotonic()`` value after which the lease must be assumed gone."""
        return self.acquired_at + self.validity

    def remaining(self) -> float:
        return self.valid_until - time.monotonic()


def drift(ttl_ms: int) -> float:
    """The clock-drift allowance in ms: 1% of the TTL plus 2 ms."""
    return 0.01 * ttl_ms + 2


def validity_ms(ttl_ms: int, elapsed_ms: float) -> float:
    """``ttl - elapsed - drift`` (may be negative: then the lock is not held)."""
    return ttl_ms - elapsed_ms - drift(ttl_ms)


class Redlock:
    def __init__(
        self,
        servers: Sequence[ServerArg],
        *,
        retry_count: int = 3,
        retry_delay: float = 0.2,
        server_timeout: float = 0.1,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``servers``: ``"host:port"`` strings or ``redis.Redis`` clients
        (independent servers: no replication between them).
        ``retry_count`` attempts at most; ``retry_delay`` the upper bound of
        the random pause between them (seconds); ``server_timeout`` bounds
        each server's connect and reply (seconds)."""
        if not servers:
            raise ValueError("Redlock needs at least one server")
        self.clients: List["redis.Redis[bytes]"] = []
        for s in servers:
            if isinstance(s, str):
                host, port = parse_endpoint(s)
                s = redis.Redis(host=host, port=port, socket_timeout=server_timeout,
                                socket_connect_timeout=server_timeout)
            self.clients.append(s)
        self.quorum = len(self.clients) // 2 + 1
        self.retry_count = max(1, retry_count)
        self.retry_delay = retry_delay
        self._clock = clock

    def _set_on(self, client: "redis.Redis[bytes]", resource: str, value: str, ttl_ms: int) -> bool:
        try:
            return bool(client.set(resource, value, nx=True, px=ttl_ms))
        except (redis.RedisError, OSError):
            return False

    def _release_on(self, client: "redis.Redis[bytes]", resource: str, value: str) -> bool:
        try:
            return bool(client.eval(RELEASE_SCRIPT, 1, resource, value))
        except (redis.RedisError, OSError):
            return False

    def try_once(self, resource: str, ttl_ms: int) -> Optional[RedlockLease]:
        """One attempt: the lease, or None (after releasing what it got)."""
        if ttl_ms <= 0:
            raise ValueError("ttl_ms must be positive")
        value = secrets.token_hex(20)
        start = self._clock()
        granted = [i for i, c in enumerate(self.clients) if self._set_on(c, resource, value, ttl_ms)]
        elapsed_ms = (self._clock() - start) * 1000
        validity = validity_ms(ttl_ms, elapsed_ms)
        if len(granted) >= self.quorum and validity > 0:
            return RedlockLease(resource, value, validity / 1000, start, granted)
        self._release_all(resource, value)
        return None

    def lock(self, resource: str, ttl_ms: int) -> Optional[RedlockLease]:
        """Up to ``retry_count`` attempts with a random pause in between."""
        for attempt in range(self.retry_count):
            lease = self.try_once(resource, ttl_ms)
            if lease is not None:
                return lease
            if attempt + 1 < self.retry_count:
                time.sleep(random.uniform(0, self.retry_delay))
        return None

    def _release_all(self, resource: str, value: str) -> int:
        return sum(1 for c in self.clients if self._release_on(c, resource, value))

    def unlock(self, lease: RedlockLease) -> int:
        """Releases on every server (checked delete); returns how many still
        held our value and deleted it."""
        return self._release_all(lease.resource, lease.value)
