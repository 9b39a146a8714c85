"""Endpoint parsing shared by the sync and asyncio clients."""

from __future__ import annotations

from typing import List, Sequence, Tuple, Union

from .errors import InvalidArgument

Endpoint = Tuple[str, int]
EndpointsArg = Union[str, Sequence[Union[str, Endpoint]]]

MAX_ENDPOINTS = 64


def parse_endpoint(text: str) -> Endpoint:
    """``"host:port"`` or ``"[::1]:port"`` -> ``(host, port)``."""
    text = text.strip()
    if text.startswith("["):
        host, sep, rest = text[1:].partition("]")
        if not sep or not rest.startswith(":"):
            raise InvalidArgument(f"endpoint '{text}' is not [ipv6]:port")
        port_text = rest[1:]
    else:
        host, sep, port_text = text.rpartition(":")
        if not sep:
            raise InvalidArgument(f"endpoint '{text}' has no :port")
    if not host:
        raise InvalidArgument(f"endpoint '{text}' has no host")
    if not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
        raise InvalidArgument(f"endpoint '{text}' has a bad port")
    return host, int(port_text)


def parse_endpoints(value: EndpointsArg) -> List[Endpoint]:
    """A comma-separated string or a sequence of ``"host:port"`` / ``(host, port)``."""
    items: List[Union[str, Endpoint]]
    if isinstance(value, str):
        items = [part for part in value.split(",") if part.strip()]
    else:
        items = list(value)
    out: List[Endpoint] = []
    for item in items:
        if isinstance(item, str):
            out.append(parse_endpoint(item))
        else:
            host, port = item
            out.append((str(host), int(port)))
    if not out:
        raise InvalidArgument("no endpoints given")
    if len(out) > MAX_ENDPOINTS:
        raise InvalidArgument(f"{len(out)} endpoints, at most {MAX_ENDPOINTS}")
    return out


def endpoint_text(ep: Endpoint) -> str:
    host, port = ep
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
