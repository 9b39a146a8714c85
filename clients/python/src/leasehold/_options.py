"""Options shared by ``leasehold.Client`` and ``leasehold.aio.Client``.

``ClientOptions.of(...)`` validates the timeouts, the backoff and the pool
limits (``InvalidArgument`` on a bad one) and gathers the keyword arguments
every new connection gets (client name, ACL user, password, TLS).
``backoff_pause`` is the jittered exponential pause between attempts.
Immutable; safe to share.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Dict, Optional

from .errors import InvalidArgument


@dataclass(frozen=True)
class ClientOptions:
    connect_timeout: float
    call_timeout: float
    backoff_initial: float
    backoff_max: float
    max_redirects: int
    max_connections: int
    ssl: bool
    connection_kwargs: Dict[str, Any] = field(default_factory=dict)

    @staticmethod
    def of(
        *,
        connect_timeout: float,
        call_timeout: float,
        backoff_initial: float,
        backoff_max: float,
        max_redirects: int,
        max_connections: int,
        name: Optional[str],
        username: Optional[str],
        password: Optional[str],
        ssl: bool,
        extra: Dict[str, Any],
    ) -> "ClientOptions":
        if connect_timeout <= 0 or call_timeout <= 0:
            raise InvalidArgument("timeouts must be positive")
        if backoff_initial <= 0 or backoff_max < backoff_initial:
            raise InvalidArgument("need 0 < backoff_initial <= backoff_max")
        if max_redirects < 0 or max_connections < 1:
            raise InvalidArgument("max_redirects >= 0 and max_connections >= 1")
        kwargs: Dict[str, Any] = dict(extra)
        if name:
            kwargs["client_name"] = name
        if username is not None:
            kwargs["username"] = username
        if password is not None:
            kwargs["password"] = password
        return ClientOptions(connect_timeout, call_timeout, backoff_initial, backoff_max, max_redirects,
                             max_connections, ssl, kwargs)

    def backoff_pause(self, attempt: int) -> float:
        """The pause before retry ``attempt`` (0-based): exponential, capped, jittered to [p/2, p]."""
        pause = min(self.backoff_max, self.backoff_initial * (2 ** min(attempt, 16)))
        return random.uniform(pause / 2, pause)
