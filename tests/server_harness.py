"""Fixtures that run the API server for real on 127.0.0.1, in front of a scripted upstream.

Loaded as a pytest plugin by ``conftest.py``: tests ask for ``upstream`` (a
:class:`ScriptedUpstream`), ``search`` (the web search provider the server uses) and
``webreach_url`` (the running server's base URL, ending in ``/v1``).
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import uvicorn

from providers_for_tests import ScriptedFetch, ScriptedSearch, register_owned, sources
from scripted_upstream import ScriptedUpstream
from webreach.cache import MemoryStore
from webreach.seam import SearchRequest, SearchResult, WebRuntime
from webreach.server.app import ServerSettings, create_app
from webreach.tools import ToolOptions

__all__ = ["LiveServer", "gated_search", "search", "upstream", "webreach_url"]


SMALLEST_REQUESTS: list[tuple[str, dict[str, Any]]] = [
    ("/chat/completions", {"messages": [{"role": "user", "content": "hi"}]}),
    ("/responses", {"input": "hi"}),
    ("/messages", {"max_tokens": 16, "messages": [{"role": "user", "content": "hi"}]}),
]
"""Each protocol's smallest valid request (path below ``/v1``, body without ``model``)."""
PROTOCOL_IDS = ["chat", "responses", "messages"]


class LiveServer:
    """An ASGI app served by uvicorn in a background thread."""

    def __init__(self, app: Any) -> None:
        self._socket = socket.socket()
        self._socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._socket.bind(("127.0.0.1", 0))
        self._server = uvicorn.Server(
            uvicorn.Config(app, log_level="error", access_log=False, lifespan="on")
        )
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._socket]}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._socket.getsockname()[1]}"

    def __enter__(self) -> LiveServer:
        self._thread.start()
        deadline = time.monotonic() + 60
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the server did not start")
            time.sleep(0.005)
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)


def default_search() -> ScriptedSearch:
    """Every query finds three sources on its own host."""

    async def answer(request: SearchRequest) -> SearchResult:
        slug = "-".join(request.query.lower().split())
        return SearchResult(
            sources=tuple(
                type(s)(s.url, f"{request.query} — result {n}", f"About {request.query}.", None)
                for n, s in enumerate(
                    sources(*(f"https://{slug}.example/{n}" for n in (1, 2, 3))), 1
                )
            )
        )

    return ScriptedSearch("replay", behaviour=answer)


def gated_search(gate: threading.Event) -> ScriptedSearch:
    """Like the default, but every search waits until ``gate`` opens (from any thread)."""
    inner = default_search()
    assert inner.behaviour is not None
    behaviour = inner.behaviour

    async def held(request: SearchRequest) -> SearchResult:
        await asyncio.to_thread(gate.wait, 30)
        return await behaviour(request)

    return ScriptedSearch("replay", behaviour=held)


@pytest.fixture
def upstream() -> Iterator[ScriptedUpstream]:
    with ScriptedUpstream() as server:
        yield server


@pytest.fixture
def search() -> ScriptedSearch:
    return default_search()


@pytest.fixture
def fetcher() -> ScriptedFetch:
    """The fetch provider the server reads links with; tests add pages to it."""
    return ScriptedFetch()


@pytest.fixture
def server_options() -> ToolOptions:
    return ToolOptions()


@pytest.fixture
def server_config(upstream: ScriptedUpstream) -> ServerSettings:
    return ServerSettings(
        upstream_base_url=upstream.url,
        upstream_api_key="upstream-key",
        signing_key="test-signing-key-of-32-bytes-or-more",
    )


@pytest.fixture
def server_keepalive() -> float:
    """Seconds between keep-alives: short, so tests of them run fast."""
    return 0.2


@pytest.fixture
def server_codecs() -> dict[str, Any] | None:
    """None serves every protocol; a test module may narrow it."""
    return None


@pytest.fixture
def webreach_url(
    server_config: ServerSettings,
    search: ScriptedSearch,
    fetcher: ScriptedFetch,
    server_options: ToolOptions,
    server_codecs: dict[str, Any] | None,
    server_keepalive: float,
) -> Iterator[str]:
    runtime = WebRuntime()
    runtime.register_search_provider(search)
    runtime.register_fetch_provider(fetcher)
    app = create_app(
        server_config,
        runtime,
        server_options,
        codecs=server_codecs,
        store=MemoryStore(),
        keepalive_seconds=server_keepalive,
    )
    with LiveServer(app) as server:
        yield server.url + "/v1"


def exa_and_http_runtime(exa_url: str, **fetch_options: Any) -> WebRuntime:
    """A runtime with the real Exa provider (pointed at a replay of its API) and the real HTTP
    fetcher, opened to 127.0.0.1 for local page servers: the web endpoints' tests use both.
    The runtime owns the client and the fetcher, so the app's lifespan closes them.
    ``fetch_options`` go to the fetcher (a test resolver and dialer keep every name local)."""
    from webreach.net import create_client
    from webreach.providers.fetch.http import HttpFetchProvider
    from webreach.providers.search.exa import ExaSearchProvider

    client = create_client(timeout=30)
    runtime = WebRuntime(cache=MemoryStore())
    runtime.own(client)
    runtime.register_search_provider(
        ExaSearchProvider(api_key="exa-key", client=client, base_url=exa_url)
    )
    register_owned(runtime, HttpFetchProvider(allow=["127.0.0.1"], **fetch_options))
    return runtime
