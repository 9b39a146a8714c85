"""Users and passwords, from the sync and the asyncio client, against a real
server started with ``--users-file``."""

from __future__ import annotations

import asyncio
import hashlib
import subprocess
import time
from pathlib import Path
from typing import Iterator, Tuple

import pytest

import leasehold
from conftest import Proc, free_port, leasehold_binary, port_open, wait_until
from leasehold import aio


def _users_file(tmp_path: Path) -> Path:
    digest = hashlib.sha256(b"s3cret").hexdigest()
    path = tmp_path / "users.acl"
    path.write_text(f"user app on #{digest} ~app/* +@lock +@read +@fence\nuser default off\n")
    return path


@pytest.fixture
def auth_server(tmp_path: Path) -> Iterator[Proc]:
    users = _users_file(tmp_path)
    data = tmp_path / "data"
    p = Proc(lambda port: [leasehold_binary(), "server", "--listen", f"127.0.0.1:{port}", "--data-dir", str(data),
                           "--users-file", str(users), "--log-level", "warn"], tmp_path / "auth.log")
    p.start()
    yield p
    p.stop()


def test_sync_client_authenticates_and_is_refused_clearly(auth_server: Proc) -> None:
    with leasehold.Client(auth_server.endpoint, username="app", password="s3cret") as client:
        with leasehold.Session(client, ttl=30.0) as session:
            with session.lock("app/one", wait=5.0) as lock:
                assert lock.token > 0
            with pytest.raises(leasehold.PermissionDenied, match="(?i)permission"):
                session.lock("other/one", wait=0).acquire()
    started = time.monotonic()
    with leasehold.Client(auth_server.endpoint, username="app", password="wrong", call_timeout=5.0) as bad:
        with pytest.raises(leasehold.AuthenticationFailed, match="(?i)password"):
            bad.ping()
    # Checks elapsed time on purpose: refused at once, not retried.
    assert time.monotonic() - started < 4.0, "a wrong password must fail at once, not be retried to the deadline"
    started = time.monotonic()
    with leasehold.Client(auth_server.endpoint, call_timeout=5.0) as anonymous:
        with pytest.raises(leasehold.AuthenticationRequired, match="pass username= and password=") as caught:
            anonymous.open_session(30_000)
    assert isinstance(caught.value, leasehold.AuthenticationFailed)  # code catching the base still does
    assert caught.value.code == "NOAUTH"
    # Checks elapsed time on purpose: refused at once, not retried.
    assert time.monotonic() - started < 4.0, "missing credentials must fail at once, not be retried to the deadline"


def test_ping_returns_true_as_redis_py(auth_server: Proc) -> None:
    with leasehold.Client(auth_server.endpoint, username="app", password="s3cret") as client:
        assert client.ping() is True

    async def main() -> None:
        async with aio.Client(auth_server.endpoint, username="app", password="s3cret") as client:
            assert await client.ping() is True
            anonymous = aio.Client(auth_server.endpoint, call_timeout=5.0)
            with pytest.raises(leasehold.AuthenticationRequired):
                await anonymous.ping()
            await anonymous.close()

    asyncio.run(main())


@pytest.fixture
def tls_server(tmp_path: Path) -> Iterator[Tuple[Proc, int, Path]]:
    """A server with a TLS port (certificates made now by ``openssl``): the
    server, its TLS port and the CA certificate."""
    made = subprocess.run(
        ["sh", "-c",
         "printf 'subjectAltName=IP:127.0.0.1\\n' > san.ext"
         " && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout ca.key"
         " -out ca.crt -days 2 -subj /CN=ca"
         " && openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout srv.key -out srv.csr"
         " -subj /CN=127.0.0.1"
         " && openssl x509 -req -in srv.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out srv.crt -days 2"
         " -extfile san.ext"],
        cwd=tmp_path, capture_output=True, timeout=120)
    assert made.returncode == 0, made.stderr
    tls_port = free_port()
    data = tmp_path / "data"
    p = Proc(lambda port: [leasehold_binary(), "server", "--listen", f"127.0.0.1:{port}", "--data-dir", str(data),
                           "--tls-listen", f"127.0.0.1:{tls_port}", "--tls-cert-file", str(tmp_path / "srv.crt"),
                           "--tls-key-file", str(tmp_path / "srv.key"), "--tls-auth-clients", "no", "--log-level", "warn"], tmp_path / "tls.log")
    p.start()
    wait_until(lambda: port_open(tls_port), 10, "the TLS port")
    yield p, tls_port, tmp_path / "ca.crt"
    p.stop()


def test_plain_client_on_a_tls_port_is_told_to_use_ssl(tls_server: Tuple[Proc, int, Path]) -> None:
    _, tls_port, ca = tls_server
    endpoint = f"127.0.0.1:{tls_port}"
    started = time.monotonic()
    with leasehold.Client(endpoint, call_timeout=30.0) as plain:
        with pytest.raises(leasehold.InvalidArgument, match=f"{endpoint} speaks TLS: use ssl=True"):
            plain.ping()
    # Checks elapsed time on purpose: said at once, not retried to the 30 s deadline.
    assert time.monotonic() - started < 15.0

    async def main() -> None:
        async with aio.Client(endpoint, call_timeout=30.0) as aplain:
            with pytest.raises(leasehold.InvalidArgument, match="speaks TLS: use ssl=True"):
                await aplain.ping()

    asyncio.run(main())
    with leasehold.Client(endpoint, ssl=True, ssl_ca_certs=str(ca)) as tls:
        assert tls.ping() is True


def test_aio_client_authenticates_and_is_refused_clearly(auth_server: Proc) -> None:
    async def main() -> None:
        client = aio.Client(auth_server.endpoint, username="app", password="s3cret")
        session = await aio.Session.open(client, ttl=30.0)
        async with session.lock("app/two", wait=5.0) as lock:
            assert lock.token > 0
        await session.close()
        await client.close()
        bad = aio.Client(auth_server.endpoint, username="app", password="wrong", call_timeout=5.0)
        started = time.monotonic()
        with pytest.raises(leasehold.AuthenticationFailed):
            await bad.ping()
        assert time.monotonic() - started < 4.0  # checks elapsed time on purpose: refused at once
        await bad.close()

    asyncio.run(main())
