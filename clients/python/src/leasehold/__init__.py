"""leasehold: Python client for the leasehold lock service.

Sessions that keep themselves alive and announce their loss, locks with
fencing tokens, fenced writes, leader election, and Redlock (for
efficiency locks over independent Redis servers). ``leasehold.aio`` is the
asyncio variant. See docs/python.md.
"""

from ._endpoints import parse_endpoint, parse_endpoints
from ._replies import FencedValue, Holder, LockInfo, Waiter
from .client import Client
from .election import Election, Leader
from .errors import (
    AuthenticationFailed,
    AuthenticationRequired,
    Conflict,
    Internal,
    InvalidArgument,
    LeaseholdError,
    LimitExceeded,
    LockLost,
    NotFound,
    NotHolder,
    Redirect,
    SessionExpired,
    PermissionDenied,
    StaleToken,
    TimedOut,
    Unavailable,
    Unreachable,
    WouldBlock,
)
from .lock import Lock
from .redlock import Redlock, RedlockLease
from .session import Session, default_drift_bound

__version__ = "0.1.0"

__all__ = [
    "AuthenticationFailed",
    "AuthenticationRequired",
    "Client",
    "Conflict",
    "Election",
    "FencedValue",
    "Holder",
    "Internal",
    "InvalidArgument",
    "Leader",
    "LeaseholdError",
    "LimitExceeded",
    "Lock",
    "LockInfo",
    "LockLost",
    "NotFound",
    "NotHolder",
    "PermissionDenied",
    "Redirect",
    "Redlock",
    "RedlockLease",
    "Session",
    "SessionExpired",
    "StaleToken",
    "TimedOut",
    "Unavailable",
    "Unreachable",
    "Waiter",
    "WouldBlock",
    "default_drift_bound",
    "parse_endpoint",
    "parse_endpoints",
]
