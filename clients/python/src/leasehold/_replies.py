"""Decoding RESP2 replies (redis-py gives bytes, lists, ints) into Python types.

Shared by the sync and asyncio clients; pure functions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from .errors import Internal


def text(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)


def as_map(reply: Any) -> Dict[str, Any]:
    """A RESP2 flat ``[k1, v1, k2, v2, ...]`` array as a dict."""
    if isinstance(reply, dict):
        return {text(k): v for k, v in reply.items()}
    if not isinstance(reply, list) or len(reply) % 2 != 0:
        raise Internal(f"expected a map reply, got {reply!r:.200}")
    return {text(reply[i]): reply[i + 1] for i in range(0, len(reply), 2)}


def as_int(reply: Any) -> int:
    if isinstance(reply, bool) or not isinstance(reply, int):
        raise Internal(f"expected an integer reply, got {reply!r:.200}")
    return reply


@dataclass(frozen=True)
class Holder:
    session: int
    owner: str
    token: int
    held_ms: int


@dataclass(frozen=True)
class Waiter:
    session: int
    owner: str
    mode: str
    waited_ms: int


@dataclass(frozen=True)
class LockInfo:
    name: str
    mode: str
    limit: int
    holders: List[Holder] = field(default_factory=list)
    waiters: List[Waiter] = field(default_factory=list)
    last_token: int = 0
    delay_ms: int = 0


@dataclass(frozen=True)
class FencedValue:
    value: bytes
    token: int

    @property
    def text(self) -> str:
        return self.value.decode("utf-8", errors="replace")


def lock_info(reply: Any) -> Optional[LockInfo]:
    if reply is None:
        return None
    m = as_map(reply)
    holders = [
        Holder(int(h["session"]), text(h.get("owner", b"")), int(h["token"]), int(h.get("held_ms", 0)))
        for h in (as_map(x) for x in m.get("holders", []))
    ]
    waiters = [
        Waiter(int(w["session"]), text(w.get("owner", b"")), text(w.get("mode", b"")), int(w.get("waited_ms", 0)))
        for w in (as_map(x) for x in m.get("waiters", []))
    ]
    return LockInfo(
        name=text(m["name"]),
        mode=text(m["mode"]),
        limit=int(m.get("limit", 1)),
        holders=holders,
        waiters=waiters,
        last_token=int(m.get("last_token", 0)),
        delay_ms=int(m.get("delay_ms", 0)),
    )


def fenced_value(reply: Any) -> Optional[FencedValue]:
    if reply is None:
        return None
    if not isinstance(reply, list) or len(reply) != 2:
        raise Internal(f"expected [value, token], got {reply!r:.200}")
    value = reply[0] if isinstance(reply[0], bytes) else text(reply[0]).encode()
    return FencedValue(value, as_int(reply[1]))


def acquire_args(
    name: str,
    session: int,
    *,
    shared: bool,
    limit: Optional[int],
    wait_ms: Optional[int],
    delay_ms: int,
    seq: int,
    lease_ms: int = 0,
) -> List[Any]:
    """LOCK.ACQUIRE's words. ``wait_ms`` None: try once; 0: no deadline."""
    args: List[Any] = ["LOCK.ACQUIRE", name, session]
    if shared:
        args.append("SHARED")
    if limit is not None:
        args += ["LIMIT", limit]
    if wait_ms is not None:
        args += ["WAIT", wait_ms]
    if delay_ms:
        args += ["DELAY", delay_ms]
    if lease_ms:
        args += ["LEASE", lease_ms]
    args += ["SEQ", seq]
    return args
