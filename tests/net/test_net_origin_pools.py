"""The fetcher's pools, on aiohttp (the default) and on httpcore2 (a fetcher given a dialer):
one site's reads wait for that site's connections only, the process's total is held, a slot
comes back however its request ends, and idle connections do not outlive their keep-alive or,
on httpcore2, the few pools kept, so a burst leaves few idle sockets behind."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable

import httpx2
import pytest

from webreach.net import AllowList
from webreach.net import origin_pools as pools
from webreach.net.pinned_aio import PinnedAioTransport
from webreach.net.pinned_transport import PinnedTransport
from webreach.net.pinning import PinningBackend
from webreach.seam import WebError, WebErrorCode

TRANSPORTS = ("aiohttp", "httpcore2")


class Site:
    """An HTTP/1.1 server on 127.0.0.1 that keeps connections alive, holds each request until
    ``release`` is set, and counts requests in flight and connections open."""

    def __init__(self, *, hold: bool = False) -> None:
        self.release = asyncio.Event()
        if not hold:
            self.release.set()
        self.in_flight = 0
        self.most_in_flight = 0
        self.open = 0
        self.arrived = asyncio.Condition()
        self._server: asyncio.Server | None = None
        self.port = 0

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.open += 1
        try:
            while await _request_head(reader):
                async with self.arrived:
                    self.in_flight += 1
                    self.most_in_flight = max(self.most_in_flight, self.in_flight)
                    self.arrived.notify_all()
                await self.release.wait()
                self.in_flight -= 1
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self.open -= 1
            writer.close()

    async def reached(self, count: int) -> None:
        """Until ``count`` requests are in flight here at once."""
        async with self.arrived:
            await asyncio.wait_for(self.arrived.wait_for(lambda: self.in_flight >= count), 60)

    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    async def __aenter__(self) -> Site:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self.release.set()
        self._server.close()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(10):
                await self._server.wait_closed()


async def _request_head(reader: asyncio.StreamReader) -> bool:
    try:
        await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return False
    return True


@pytest.fixture(params=TRANSPORTS)
def on(request: pytest.FixtureRequest) -> str:
    """The pool under test."""
    return str(request.param)


@contextlib.asynccontextmanager
async def fetcher(
    on: str, per_origin: int = 4, total: int = 512, keepalive: float = 5.0
) -> AsyncIterator[httpx2.AsyncClient]:
    backend = PinningBackend(AllowList.parse("127.0.0.1"))
    transport: httpx2.AsyncBaseTransport = (
        PinnedAioTransport(backend, per_origin=per_origin, total=total, keepalive=keepalive)
        if on == "aiohttp"
        else PinnedTransport(backend, per_origin=per_origin, total=total)
    )
    async with httpx2.AsyncClient(transport=transport, timeout=60) as client:
        yield client


async def _get(client: httpx2.AsyncClient, url: str) -> str:
    return (await client.get(url)).text


async def test_one_sites_reads_wait_for_its_own_connections_only(on: str) -> None:
    async with Site(hold=True) as busy, Site() as other, fetcher(on, per_origin=4) as client:
        reads = [asyncio.create_task(_get(client, busy.url())) for _ in range(20)]
        await busy.reached(4)
        assert await _get(client, other.url()) == "ok"  # not behind the 16 waiting for busy
        assert busy.in_flight == 4
        busy.release.set()
        assert await asyncio.gather(*reads) == ["ok"] * 20
    assert busy.most_in_flight == 4


async def test_the_process_total_holds_across_sites(on: str) -> None:
    async with contextlib.AsyncExitStack() as stack:
        sites = [await stack.enter_async_context(Site(hold=True)) for _ in range(3)]
        client = await stack.enter_async_context(fetcher(on, per_origin=4, total=5))
        reads = [asyncio.create_task(_get(client, s.url())) for s in sites for _ in range(4)]
        await asyncio.wait_for(_until(lambda: sum(s.in_flight for s in sites) == 5), 60)
        await asyncio.sleep(0)  # nothing more may arrive while all five are held
        assert sum(s.in_flight for s in sites) == 5
        for site in sites:
            site.release.set()
        assert await asyncio.gather(*reads) == ["ok"] * 12
        assert max(s.most_in_flight for s in sites) <= 4


async def test_a_slot_comes_back_after_a_refusal_and_a_cancellation(on: str) -> None:
    async with Site() as gone:
        refused = gone.url()  # nothing listens there once the site has closed
    async with Site(hold=True) as held, fetcher(on, per_origin=2, total=2) as client:
        for _ in range(5):
            with pytest.raises(httpx2.ConnectError):
                await client.get(refused)
        waiting = [asyncio.create_task(_get(client, held.url())) for _ in range(6)]
        await held.reached(2)
        for task in waiting:
            task.cancel()
        await asyncio.gather(*waiting, return_exceptions=True)
        held.release.set()
        reads = asyncio.gather(*(_get(client, held.url()) for _ in range(2)))
        assert await asyncio.wait_for(reads, 60) == ["ok"] * 2


async def test_waiting_for_a_slot_counts_against_the_pool_timeout(on: str) -> None:
    async with Site(hold=True) as held, fetcher(on, per_origin=1) as client:
        first = asyncio.create_task(_get(client, held.url()))
        await held.reached(1)
        with pytest.raises(httpx2.TimeoutException):  # aiohttp times the wait and the dial as one
            await client.get(held.url(), timeout=httpx2.Timeout(60, pool=0.2))
        held.release.set()
        assert await first == "ok"


async def test_pools_nobody_reads_are_closed_past_the_few_kept() -> None:
    count = pools.ORIGINS_KEPT + 5
    async with contextlib.AsyncExitStack() as stack:
        sites = [await stack.enter_async_context(Site()) for _ in range(count)]
        async with fetcher("httpcore2") as client:
            for site in sites:
                assert await _get(client, site.url()) == "ok"
            kept = pools.ORIGINS_KEPT
            await asyncio.wait_for(_until(lambda: sum(s.open for s in sites) <= kept), 60)
            assert [s.open for s in sites[-kept:]] == [1] * kept
            assert await _get(client, sites[0].url()) == "ok"  # a closed pool opens again
        await asyncio.wait_for(_until(lambda: sum(s.open for s in sites) == 0), 60)


async def test_idle_connections_close_after_their_keep_alive() -> None:
    async with contextlib.AsyncExitStack() as stack:
        sites = [await stack.enter_async_context(Site()) for _ in range(pools.ORIGINS_KEPT + 5)]
        async with fetcher("aiohttp", keepalive=0.2) as client:
            for site in sites:
                assert await _get(client, site.url()) == "ok"
                assert await _get(client, site.url()) == "ok"  # the same connection, kept alive
            assert all(s.open <= 1 for s in sites)
            await asyncio.wait_for(_until(lambda: sum(s.open for s in sites) == 0), 60)
            assert await _get(client, sites[0].url()) == "ok"  # and a new one opens after


async def test_a_vetted_answer_expires_and_a_name_that_moved_is_refused() -> None:
    answers = iter([["127.0.0.1"], ["127.0.0.2"]])

    async def resolver(host: str, port: int) -> list[str]:
        return next(answers)

    backend = PinningBackend(AllowList.parse("127.0.0.1"), resolver=resolver)
    async with (
        Site() as site,
        httpx2.AsyncClient(
            transport=PinnedAioTransport(backend, keepalive=0.01, dns_ttl=1), timeout=60
        ) as client,
    ):
        url = f"http://moving.test:{site.port}/"
        assert (await client.get(url)).text == "ok"
        await asyncio.wait_for(_until(lambda: site.open == 0), 60)  # the next read dials anew
        with pytest.raises(WebError) as caught:
            await asyncio.wait_for(_until_refused(client, url), 60)
    assert caught.value.code == WebErrorCode.WEB_BLOCKED_URL
    assert "127.0.0.2" in caught.value.message


async def _until_refused(client: httpx2.AsyncClient, url: str) -> None:
    """Reads ``url`` until a read raises (its vetted answer expired), a second apart."""
    while (await client.get(url)).text == "ok":
        await asyncio.sleep(0.2)


async def _until(condition: Callable[[], bool]) -> None:
    while not condition():
        await asyncio.sleep(0.01)
