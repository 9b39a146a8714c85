"""Errors of the leasehold client: one exception class per server error code.

The server's error prefixes (docs/protocol.md) map one-to-one to these
classes, like the C++ client's ``leasehold::ErrorCode``. Every class derives
from :class:`LeaseholdError`, whose ``code`` is the wire prefix.
"""

from __future__ import annotations

from typing import Dict, Optional, Type

from redis.exceptions import AuthenticationError as RedisAuthenticationError
from redis.exceptions import NoPermissionError, RedisError


class LeaseholdError(Exception):
    """Base class. ``code`` is the server's error prefix (``"ERR"``, ...)."""

    code: str = "INTERNAL"

    def __init__(self, message: str = "") -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return f"{self.code} {self.message}".strip()


class Unreachable(LeaseholdError):
    """No endpoint answered within the call's deadline."""

    code = "UNREACHABLE"


class TimedOut(LeaseholdError):
    """The deadline passed; for an acquire: not granted within the wait."""

    code = "TIMEOUT"


class WouldBlock(LeaseholdError):
    """A try-once acquire (``wait=0``) found the lock held by others."""

    code = "WOULDBLOCK"


class NotHolder(LeaseholdError):
    code = "NOTHOLDER"


class StaleToken(LeaseholdError):
    """A fenced write with a token that is no longer the holder's."""

    code = "STALE"


class SessionExpired(LeaseholdError):
    code = "EXPIRED"


class NotFound(LeaseholdError):
    code = "NOTFOUND"


class Conflict(LeaseholdError):
    code = "CONFLICT"


class InvalidArgument(LeaseholdError):
    code = "ERR"


class LimitExceeded(LeaseholdError):
    code = "LIMIT"


class Unavailable(LeaseholdError):
    code = "UNAVAILABLE"


class Redirect(LeaseholdError):
    """``-REDIRECT host:port``; followed by the client, raised after too many hops."""

    code = "REDIRECT"


class AuthenticationFailed(LeaseholdError):
    """A wrong user name or password or a disabled user (``WRONGPASS``);
    its subclass :class:`AuthenticationRequired`: no credentials where the
    server requires them (``NOAUTH``). Never retried: trying again cannot
    help."""

    code = "WRONGPASS"


class AuthenticationRequired(AuthenticationFailed):
    """The server requires credentials and the client gave none
    (``NOAUTH``): pass ``username=`` and ``password=`` to the client. A
    subclass of :class:`AuthenticationFailed`, so code that catches that
    still does. Never retried."""

    code = "NOAUTH"


class PermissionDenied(LeaseholdError):
    """The user may not run this command or use this lock name or session
    (``NOPERM``)."""

    code = "NOPERM"


class Internal(LeaseholdError):
    code = "INTERNAL"


class LockLost(LeaseholdError):
    """Raised by ``Lock.check()``: the lock or its session is lost, or the
    session's safe deadline has passed."""

    code = "LOST"


_BY_CODE: Dict[str, Type[LeaseholdError]] = {
    c.code: c
    for c in (
        TimedOut,
        NotHolder,
        StaleToken,
        SessionExpired,
        NotFound,
        Conflict,
        InvalidArgument,
        LimitExceeded,
        Unavailable,
        Redirect,
        Internal,
        AuthenticationFailed,
        PermissionDenied,
    )
}
_BY_CODE["NOAUTH"] = AuthenticationRequired

# What the server says after ``NOAUTH`` (redis-py strips the prefix): to a
# command, and to HELLO (server/security/acl.h, server/commands).
_NOAUTH_TEXTS = ("Authentication required", "HELLO must be called with the client already authenticated")
_NOAUTH_ADVICE = "the server requires authentication: pass username= and password= to the client"


def authentication_required(server_text: str = "") -> AuthenticationRequired:
    """The ``AuthenticationRequired`` to raise, saying what to do."""
    return AuthenticationRequired(f"{_NOAUTH_ADVICE} ({server_text})" if server_text else _NOAUTH_ADVICE)


def from_reply_text(text: str) -> LeaseholdError:
    """The exception for an error reply's text (``"STALE token 3 ..."``).

    redis-py strips the ``ERR `` prefix of plain errors; a text whose first
    word is not a known code is an ``ERR`` (InvalidArgument).
    """
    code, _, rest = text.partition(" ")
    cls: Optional[Type[LeaseholdError]] = _BY_CODE.get(code)
    if cls is None:
        return InvalidArgument(text)
    if cls is AuthenticationRequired:
        return authentication_required(rest)
    return cls(rest)


def from_redis_error(e: RedisError) -> LeaseholdError:
    """The exception for an error redis-py raised on a reply or a handshake.

    redis-py strips the code of the errors it knows (``NOPERM``,
    ``WRONGPASS``, ``NOAUTH``) and raises its own classes for them; those
    map by class, every other error reply by its text.
    """
    if isinstance(e, RedisAuthenticationError):
        if str(e).startswith(_NOAUTH_TEXTS):
            return authentication_required(str(e))
        return AuthenticationFailed(str(e))
    if isinstance(e, NoPermissionError):
        return PermissionDenied(str(e))
    return from_reply_text(str(e))
