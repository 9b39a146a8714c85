"""leasehold.aio: the asyncio variant of the client, on ``redis.asyncio``."""

from .client import Client
from .session import Lock, Session

__all__ = ["Client", "Lock", "Session"]
