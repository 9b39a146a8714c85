"""The asyncio client against a real server."""

from __future__ import annotations

import asyncio
import time
from typing import List

import pytest

import leasehold
from conftest import HoldingProxy, Proc, scaled, wait_until_async
from leasehold import _replies, aio
from leasehold.aio._bound import BoundConnection


def test_aio_lock_fence_and_loss(server: Proc) -> None:
    async def main() -> None:
        client = aio.Client(server.endpoint, call_timeout=10.0)
        lost: List[leasehold.LeaseholdError] = []
        async with await aio.Session.open(client, ttl=1.5, on_lost=lost.append) as a:
            async with a.lock("aio", wait=5.0) as lock:
                lock.check()
                assert lock.token > 0
                assert await lock.fenced_put("aio/k", "v") == lock.token
                b = await aio.Session.open(client, ttl=5.0)
                with pytest.raises(leasehold.WouldBlock):
                    await b.lock("aio", wait=0).acquire()
                waiting = asyncio.ensure_future(b.lock("aio", wait=10.0).acquire())
                with leasehold.Client(server.endpoint, call_timeout=10.0) as probe:

                    def b_queued() -> bool:
                        info = probe.lock_info("aio")
                        return info is not None and bool(info.waiters)

                    await wait_until_async(b_queued, 10, "b's acquire to queue behind a")
            token_b = await asyncio.wait_for(waiting, 20)
            assert token_b > lock.token
            with pytest.raises(leasehold.StaleToken):
                await lock.fenced_put("aio/k", "late")  # released: its token is stale
            await b.close()
            server.pause()
            try:
                await asyncio.wait_for(a.lost_event.wait(), 20)
                assert len(lost) == 1 and isinstance(lost[0], leasehold.TimedOut)
            finally:
                server.resume()
        await client.close()

    asyncio.run(main())


def test_aio_close_grace_server_close_of_the_session_connection(server: Proc) -> None:
    """The asyncio Session with a close grace: the server closes the session's
    own connection by itself (a framing error on it, as CLIENT KILL would).
    Grace 0: lost on the client at once (the server keeps the session until
    its TTL). Grace 2 s: re-bound on a new connection, still live."""

    def own_connection(session: aio.Session) -> BoundConnection:
        assert session._bound is not None
        return session._bound

    async def close_session_connection(session: aio.Session) -> None:
        bound = own_connection(session)
        await wait_until_async(lambda: bound._conn is not None and bound._conn.is_connected, 10,
                               "the session's own connection")
        conn = bound._conn
        assert conn is not None
        conn._writer.write(b"*x\r\n")

    async def main() -> None:
        client = aio.Client(server.endpoint, call_timeout=10.0)
        probe = leasehold.Client(server.endpoint, call_timeout=10.0)

        def live_ids() -> List[int]:
            return [_replies.as_int(_replies.as_map(m)["id"]) for m in probe.call("SESSION.LIST")]

        lost: List[leasehold.LeaseholdError] = []
        zero = await aio.Session.open(client, ttl=10.0, close_grace=0, on_lost=lost.append)
        async with zero.lock("aio-k0", wait=5.0) as lock:
            await close_session_connection(zero)
            await asyncio.wait_for(zero.lost_event.wait(), scaled(5))
            assert len(lost) == 1 and isinstance(lost[0], leasehold.TimedOut), lost
            assert lock.lost
            assert zero.id in live_ids(), "a close by the server does not end the session"
        await zero.close()
        await wait_until_async(lambda: zero.id not in live_ids(), 10, "SESSION.CLOSE after the loss")

        lost.clear()
        async with await aio.Session.open(client, ttl=6.0, close_grace=2.0, on_lost=lost.append) as two:
            async with two.lock("aio-k2", wait=5.0) as lock:
                bound = own_connection(two)
                old = bound._conn
                closed_at = time.monotonic()
                await close_session_connection(two)

                def rebound() -> bool:
                    conn = bound._conn
                    return conn is not None and conn is not old and two.safe_deadline() > closed_at + 2.0

                await wait_until_async(rebound, 10, "a re-bind on a new connection")
                assert not two.lost and not lost
                lock.check()
        probe.close()
        await client.close()

    asyncio.run(main())


@pytest.mark.parametrize("held", ["keepalive", "naming"])
def test_aio_a_blackhole_longer_than_the_call_timeout_keeps_the_session(server: Proc, held: str) -> None:
    """The asyncio Session with a close grace: a 10 s blackhole (past the 5 s
    call timeout and the 2 s grace, under the 30 s TTL) of its own
    connection, with a keepalive in it or the CLIENT SETNAME right after the
    open. Nothing is given up at the call timeout and nothing closed: after
    the heal the session, its lock and its token are kept, on_lost never
    ran, and no other session can take the lock."""

    async def main() -> None:
        direct = leasehold.Client(server.endpoint, call_timeout=10.0)
        lost: List[leasehold.LeaseholdError] = []
        with HoldingProxy(server.port, hold_on=b"SETNAME" if held == "naming" else None) as proxy:
            client = aio.Client(proxy.endpoint, call_timeout=5.0)
            async with await aio.Session.open(client, ttl=30.0, close_grace=2.0, keepalive_interval=1.0,
                                              on_lost=lost.append) as session:
                lock = session.lock("aio-bh-long", wait=5.0)
                if held == "keepalive":
                    await lock.acquire()
                    proxy.hold()
                await wait_until_async(proxy.held.is_set, 10, "the blackhole")
                # deliberate: the blackhole lasts 10 s, past the call timeout and the grace.
                await asyncio.sleep(10.0)
                assert not session.lost, session.reason
                proxy.heal()
                healed = time.monotonic()
                await wait_until_async(lambda: session.lost or session.safe_deadline() > healed + 25.0, 15,
                                       "a keepalive sent after the heal acknowledged")
                assert not session.lost and not lost, (session.reason, lost)
                if held == "naming":
                    await lock.acquire()
                info = direct.lock_info("aio-bh-long")
                assert info is not None and [(h.session, h.token) for h in info.holders] == [(session.id, lock.token)]
                other = direct.open_session(60_000)
                assert direct.call("LOCK.ACQUIRE", "aio-bh-long", other) is None, "a second session got the lock"
                # deliberate: past the grace after the heal, the server kept the session.
                await asyncio.sleep(3.0)
                assert not session.lost and not lost, (session.reason, lost)
                lock.check()
            await client.close()
        direct.close()

    asyncio.run(main())


def test_aio_close_while_a_keepalive_waits_for_its_reply_is_a_clean_close(server: Proc) -> None:
    """close() while the keepalive task's request is in flight on the
    session's own connection (close grace 0): close waits for that request
    instead of cancelling it, so the connection is not dropped before
    SESSION.CLOSE. The session ends as closed by its owner: its lock (taken
    with a 60 s lock-delay, which only an expiry or a connection close
    applies) is free at once."""

    async def main() -> None:
        direct = leasehold.Client(server.endpoint, call_timeout=10.0)
        with HoldingProxy(server.port, hold_on=b"KEEPALIVE") as proxy:
            client = aio.Client(proxy.endpoint, call_timeout=5.0)
            session = await aio.Session.open(client, ttl=30.0, close_grace=0.0, keepalive_interval=0.5)
            token = await client.call("LOCK.ACQUIRE", "aio-close-inflight", session.id, "DELAY", 60_000)
            assert isinstance(token, int) and token > 0, token
            await wait_until_async(proxy.held.is_set, 10, "the keepalive held in the proxy")
            closing = asyncio.create_task(session.close())
            # deliberate: close() must be waiting on the held keepalive when the network heals.
            await asyncio.sleep(0.3)
            assert not closing.done()
            proxy.heal()
            await asyncio.wait_for(closing, timeout=scaled(10))
            other = direct.open_session(60_000)
            granted = direct.call("LOCK.ACQUIRE", "aio-close-inflight", other)
            assert granted is not None, "the lock is under lock-delay: the session ended by its connection's close"
            await client.close()
        direct.close()

    asyncio.run(main())
