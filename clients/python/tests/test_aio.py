"""The asyncio client against a real server."""

from __future__ import annotations

import asyncio
from typing import List

import pytest

import leasehold
from conftest import Proc, wait_until_async
from leasehold import aio


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
