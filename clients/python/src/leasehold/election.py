"""``Election``: leader election on a lock plus a fenced value.

Same contract as the C++ ``leasehold::client::Election`` (docs/client.md):
a candidate campaigns by acquiring the exclusive lock ``election/<name>``,
then publishes its value with ``FENCE.PUT election/<name> value
election/<name> token``. ``leader()`` reads the holder (LOCK.INFO) and the
value (FENCE.GET); the value counts only when its token is the holder's, so
a deposed leader's stale value is never reported as current.

Thread-safety: one thread per Election at a time; ``is_leader`` may be read
from any thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from .errors import NotHolder
from .lock import Lock
from .session import Session


@dataclass(frozen=True)
class Leader:
    session: int
    token: int
    value: Optional[bytes]  # None while the leader has not published yet


class Election:
    def __init__(self, session: Session, name: str) -> None:
        self.session = session
        self.lock_name = f"election/{name}"
        self._lock: Optional[Lock] = None

    @property
    def is_leader(self) -> bool:
        return self._lock is not None and self._lock.valid

    @property
    def token(self) -> int:
        return self._lock.token if self._lock is not None else 0

    def campaign(self, value: Any, timeout: Optional[float] = None) -> None:
        """Waits up to ``timeout`` seconds (None: no deadline) to lead, then
        publishes ``value``. ``TimedOut`` when another leads throughout;
        ``StaleToken`` when leadership was lost between grant and publish."""
        lock = self.session.lock(self.lock_name, wait=timeout)
        lock.acquire()
        self._lock = lock
        lock.fenced_put(self.lock_name, value)

    def proclaim(self, value: Any) -> None:
        """Publishes a new value while leading (``NotHolder`` otherwise)."""
        if not self.is_leader or self._lock is None:
            raise NotHolder(f"not leading {self.lock_name}")
        self._lock.fenced_put(self.lock_name, value)

    def leader(self) -> Optional[Leader]:
        """The current leader as the server sees it; None when nobody leads."""
        client = self.session.client
        info = client.lock_info(self.lock_name)
        if info is None or not info.holders:
            return None
        holder = info.holders[0]
        published = client.fenced_get(self.lock_name)
        value = published.value if published is not None and published.token == holder.token else None
        return Leader(holder.session, holder.token, value)

    def resign(self) -> None:
        """Steps down (releases the lock). A no-op when not leading."""
        lock, self._lock = self._lock, None
        if lock is not None:
            lock.release()

    def __enter__(self) -> "Election":
        return self

    def __exit__(self, *exc: object) -> None:
        self.resign()
