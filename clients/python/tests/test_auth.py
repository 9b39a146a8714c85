"""Users and passwords, from the sync and the asyncio client, against a real
server started with ``--users-file``."""

from __future__ import annotations

import asyncio
import hashlib
import time
from pathlib import Path
from typing import Iterator

import pytest

import leasehold
from conftest import Proc, leasehold_binary
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
    with leasehold.Client(auth_server.endpoint, call_timeout=5.0) as anonymous:
        with pytest.raises(leasehold.AuthenticationFailed):
            anonymous.open_session(30_000)


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
