"""Telling a TLS port from a lost connection, for a client without ``ssl=True``.

A TLS port closes a connection that starts with a plaintext command,
without a word, which redis-py reports as "connection closed by the
server", a transport error the client would retry until its deadline.
After such an error on a connection's first command, ``speaks_tls`` sends the endpoint the start of a TLS
handshake on a socket of its own: a TLS server answers it with a TLS record
(an alert, 0x15 0x03 ...), a RESP server with an error or nothing.
"""

from __future__ import annotations

import socket

from ._endpoints import Endpoint, endpoint_text
from .errors import InvalidArgument

# A TLS handshake record holding a ClientHello with an empty body.
_CLIENT_HELLO_STUB = bytes([0x16, 0x03, 0x01, 0x00, 0x04, 0x01, 0x00, 0x00, 0x00])


def looks_like_tls_record(data: bytes) -> bool:
    """True for the start of a TLS alert (0x15) or handshake (0x16) record,
    major version 3. No RESP reply starts with either byte."""
    return len(data) >= 2 and data[0] in (0x15, 0x16) and data[1] == 0x03


def closed_at_once(error: BaseException) -> bool:
    """True for the transport error a TLS port causes: the server closed the
    connection (not a refused connect, not a timeout). With "on a fresh
    connection", the only case that pays for the probe (which waits up to
    its timeout on a plain server)."""
    return "closed by server" in str(error).lower() or "closed by the server" in str(error).lower()


def speaks_tls(ep: Endpoint, timeout: float) -> bool:
    """Sends the start of a TLS handshake to ``ep`` and says whether a TLS
    record came back. Any failure counts as "no" (the caller reports its own error).
    Blocks for at most about ``timeout`` seconds."""
    try:
        with socket.create_connection(ep, timeout=timeout) as s:
            s.settimeout(timeout)
            s.sendall(_CLIENT_HELLO_STUB)
            return looks_like_tls_record(s.recv(8))
    except OSError:
        return False


def tls_port_error(ep: Endpoint) -> InvalidArgument:
    return InvalidArgument(f"{endpoint_text(ep)} speaks TLS: use ssl=True (with ssl_ca_certs=...)")
