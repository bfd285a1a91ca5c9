"""Schemathesis over the web endpoints' published OpenAPI document, against the running server.

Every check runs: what the document allows must be accepted, what it refuses must be refused,
and every answer must have the status, type and shape the document gives. The server runs for
real with the real Exa provider in front of a replay and the real HTTP fetcher; its resolver
answers every name with one public address and its dialer reaches the local page servers (TLS
for ``https``), so a generated URL on any host is read from 127.0.0.1 and nothing leaves it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any
from urllib.parse import urlsplit

import httpcore2
import hypothesis
import pytest
import schemathesis
from schemathesis.specs.openapi.checks import positive_data_acceptance

from _servers import tls_contexts
from loopback_dialer import LoopbackDialer
from replay_server import Recorded, ReplayServer, Reply
from server_harness import LiveServer, exa_and_http_runtime
from webreach.cache import MemoryStore
from webreach.server.app import ServerSettings, create_app
from webreach.tools import ToolOptions

KEY = "fuzz-key"
"""The server has a key, so the document has security schemes and the auth checks run too."""
OPTIONS = ToolOptions(search_max_queries=3, search_max_results=5, fetch_max_chars=200)
PUBLIC_ADDRESS = "93.184.215.14"
"""What every host name resolves to: public, so the guard lets it through; never dialled."""
PAGE = (
    b"<html><head><title>A page</title></head><body><article><h1>Heading</h1>"
    + b"".join(b"<p>Paragraph %d of the page, in plain words.</p>" % n for n in range(12))
    + b"</article></body></html>"
)
EXAMPLES = 60
"""Per operation (four of them), on top of Schemathesis' coverage cases."""


def exa_answer(request: Recorded) -> Reply:
    results = [
        {"url": f"https://result.example/{n}", "title": f"Result {n}", "highlights": [f"On {n}."]}
        for n in range(1, 4)
    ]
    return Reply(json={"results": results})


class EveryPath(dict[tuple[str, str], Any]):
    """A replay's routes where every ``GET`` finds the page."""

    def get(self, key: tuple[str, str], default: Any = None) -> Any:
        if key[0] == "GET":
            return lambda _request: Reply(body=PAGE, headers={"content-type": "text/html"})
        return default


class Switching(httpcore2.AsyncNetworkStream):
    """A connection to the plain page server that moves to the TLS one when TLS starts."""

    def __init__(self, stream: httpcore2.AsyncNetworkStream, dial: LocalPages) -> None:
        self._stream = stream
        self._dial = dial

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:  # noqa: ASYNC109
        return await self._stream.read(max_bytes, timeout)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:  # noqa: ASYNC109
        await self._stream.write(buffer, timeout)

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def start_tls(
        self,
        ssl_context: Any,
        server_hostname: str | None = None,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore2's interface)
    ) -> httpcore2.AsyncNetworkStream:
        # The local certificate names no host, and the fetcher does not check it here; a
        # generated host name need not be one TLS can send, so none is.
        await self._stream.aclose()
        raw = await self._dial.real.connect_tcp("127.0.0.1", self._dial.tls_port, timeout=timeout)
        return await raw.start_tls(ssl_context, None, timeout)

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class LocalPages(LoopbackDialer):
    """Dials every address the guard let through to the local page servers."""

    def __init__(self, plain_port: int, tls_port: int) -> None:
        super().__init__(plain_port)
        self.tls_port = tls_port
        self.real = httpcore2.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore2's interface)
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        stream = await super().connect_tcp(host, port, timeout=timeout)
        return Switching(stream, self)


def port_of(url: str) -> int:
    port = urlsplit(url).port
    assert port is not None
    return port


async def public_resolver(host: str, port: int) -> Sequence[str]:
    return [PUBLIC_ADDRESS]


@pytest.fixture(scope="module")
def web_api() -> Iterator[str]:
    server_tls, _ = tls_contexts("pages.test")
    with ReplayServer() as exa, ReplayServer() as plain, ReplayServer(tls=server_tls) as secure:
        exa.route("POST", "/search", exa_answer)
        plain.routes = secure.routes = EveryPath()
        runtime = exa_and_http_runtime(
            exa.url,
            resolver=public_resolver,
            dialer=LocalPages(port_of(plain.url), port_of(secure.url)),
            verify=False,
        )
        config = ServerSettings(upstream_base_url="http://127.0.0.1:9", server_api_keys=KEY)
        with LiveServer(create_app(config, runtime, OPTIONS, store=MemoryStore())) as server:
            yield server.url


@pytest.fixture(scope="module")
def web_api_schema(web_api: str) -> Any:
    config = schemathesis.Config.from_dict(
        {"base-url": web_api, "seed": 8, "auth": {"openapi": {"bearer": {"bearer": KEY}}}}
    )
    return schemathesis.openapi.from_url(web_api + "/v1/openapi.json", config=config)


schema = schemathesis.pytest.from_fixture("web_api_schema")


@schema.parametrize()
@hypothesis.settings(
    max_examples=EXAMPLES,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=list(hypothesis.HealthCheck),
)
def test_the_server_does_what_its_openapi_document_says(case: Any) -> None:
    response = case.call()
    # A `start` past the end of the page is a 400 naming it: no document can know how long a
    # page is, so that one refusal of a schema-valid body is the documented 400, not a gap.
    past_the_end = response.status_code == 400 and response.json()["error"].get("param") == "start"
    case.validate_response(
        response, excluded_checks=[positive_data_acceptance] if past_the_end else []
    )
