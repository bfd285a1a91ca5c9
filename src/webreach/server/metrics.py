"""Prometheus metrics at ``GET /metrics`` (``WEBREACH_METRICS``): requests, web calls, upstream
calls and tokens, counted per app in a registry of its own.

Each app has its own :class:`CollectorRegistry`, so several apps in one process (tests, say)
never share counts. Label children are cached in plain dicts: a request costs a tuple, a dict
lookup and an ``inc``/``observe``, nothing that grows with traffic but the label sets seen.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar, cast

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
)
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..seam import (
    FetchRequest,
    FetchResult,
    ImageSearchRequest,
    ImageSearchResult,
    SearchRequest,
    SearchResult,
    WebError,
    WebRuntime,
)
from .core.turn.operator_log import request_log

__all__ = [
    "KEY_NAME_STATE",
    "METRICS_PATH",
    "MeteredRuntime",
    "Metrics",
    "MetricsMiddleware",
    "metrics_endpoint",
]

KEY_NAME_STATE = "webreach_key_name"
"""Where the inbound-key check leaves the name of the request's key, in ``scope["state"]``; the
request counter's ``key`` label reads it (``-`` when absent). Never the key itself."""
METRICS_PATH = "/metrics"
NO_KEY = "-"
OTHER_PATH = "other"
"""The ``path`` label of a path the server does not serve: a scanner cannot grow the label set."""
REQUEST_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, float("inf"))
"""A request ends in milliseconds (``/v1/models``) or after a model's many steps (minutes)."""
WEB_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, float("inf"))

R = TypeVar("R", SearchResult, FetchResult, ImageSearchResult)
Labels = tuple[str, ...]


class _Children:
    """A metric's label children, kept once made: ``labels()`` takes a lock and validates."""

    __slots__ = ("_made", "_metric")

    def __init__(self, metric: Counter | Histogram) -> None:
        self._metric = metric
        self._made: dict[Labels, Any] = {}

    def __call__(self, labels: Labels) -> Any:
        child = self._made.get(labels)
        if child is None:
            child = self._made[labels] = self._metric.labels(*labels)
        return child


class Metrics:
    """One app's metrics, in its own registry."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self._requests = _Children(
            Counter(
                "webreach_requests",
                "HTTP requests answered, by path, protocol, status, stream and key name.",
                ("path", "protocol", "status", "stream", "key"),
                registry=r,
            )
        )
        self._request_seconds = _Children(
            Histogram(
                "webreach_request_duration_seconds",
                "Seconds from a request's arrival to its last byte, by protocol and key name.",
                ("protocol", "key"),
                buckets=REQUEST_BUCKETS,
                registry=r,
            )
        )
        self._web_calls = _Children(
            Counter(
                "webreach_web_calls",
                "Searches, fetches and image searches the server ran, by provider, outcome "
                "(ok, or the error code) and key name.",
                ("tool", "provider", "outcome", "key"),
                registry=r,
            )
        )
        self._web_seconds = _Children(
            Histogram(
                "webreach_web_call_duration_seconds",
                "Seconds a web call took, by tool, provider and key name.",
                ("tool", "provider", "key"),
                buckets=WEB_BUCKETS,
                registry=r,
            )
        )
        self._upstream = _Children(
            Counter(
                "webreach_upstream_requests",
                "Calls to the upstream model, by call (chat or models) and the HTTP status it "
                "answered, or why there was none (timeout, refused, dns, tls, closed...).",
                ("call", "status"),
                registry=r,
            )
        )
        self._tokens = _Children(
            Counter(
                "webreach_upstream_tokens",
                "Upstream tokens used by requests, by kind (prompt or completion) and key name.",
                ("kind", "key"),
                registry=r,
            )
        )

    def request(
        self, path: str, status: int, stream: bool | None, key: str, seconds: float
    ) -> None:
        """One request at its end, with the upstream tokens its record counted."""
        record = request_log()
        protocol = record.protocol
        flag = NO_KEY if stream is None else ("true" if stream else "false")
        self._requests((path, protocol, str(status), flag, key)).inc()
        self._request_seconds((protocol, key)).observe(seconds)
        call = "models" if protocol == "models" else "chat"
        for cause in record.unanswered:
            self._upstream((call, cause)).inc()
        usage = record.usage
        if usage is not None:
            if usage.input_tokens:
                self._tokens(("prompt", key)).inc(usage.input_tokens)
            if usage.output_tokens:
                self._tokens(("completion", key)).inc(usage.output_tokens)

    def web_call(self, tool: str, provider: str | None, outcome: str, seconds: float) -> None:
        """One web call at its end, labelled with the key of the request that made it."""
        named = provider or NO_KEY
        key = request_log().key or NO_KEY
        self._web_calls((tool, named, outcome, key)).inc()
        self._web_seconds((tool, named, key)).observe(seconds)

    async def upstream_response(self, response: Any) -> None:
        """The upstream HTTP client's response hook: every status the upstream answered."""
        call = "models" if response.request.url.path.endswith("/models") else "chat"
        self._upstream((call, str(response.status_code))).inc()

    def exposition(self) -> bytes:
        return generate_latest(self.registry)


class MetricsMiddleware:
    """Counts every HTTP request when it ends; sits inside the access log, whose record names
    the protocol and stream, and outside the key check, so refusals are counted too."""

    def __init__(self, app: ASGIApp, *, metrics: Metrics, paths: frozenset[str]) -> None:
        self.app = app
        self._metrics = metrics
        self._paths = paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 0

        async def observed(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, observed)
        finally:
            path = scope["path"]
            record = request_log()
            state = scope.get("state")
            named = state.get(KEY_NAME_STATE) if isinstance(state, dict) else None
            self._metrics.request(
                path if path in self._paths else OTHER_PATH,
                status or 500,
                record.stream,
                record.key or named or NO_KEY,
                time.perf_counter() - started,
            )


def metrics_endpoint(metrics: Metrics) -> Callable[[Request], Awaitable[Response]]:
    async def scrape(request: Request) -> Response:
        return Response(metrics.exposition(), media_type=CONTENT_TYPE_LATEST)

    return scrape


class MeteredRuntime:
    """A runtime whose searches, fetches and image searches are counted and timed; anything
    else is the real runtime's. Used where a ``WebRuntime`` is expected (``runtime``)."""

    def __init__(self, runtime: WebRuntime, metrics: Metrics) -> None:
        self._runtime = runtime
        self._metrics = metrics

    @property
    def runtime(self) -> WebRuntime:
        return cast(WebRuntime, self)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._runtime, name)

    async def search(self, request: SearchRequest, *, live: bool = True) -> SearchResult:
        return await self._timed("search", self._runtime.search(request, live=live))

    async def fetch(self, request: FetchRequest, *, live: bool = True) -> FetchResult:
        return await self._timed("fetch", self._runtime.fetch(request, live=live))

    async def image_search(self, request: ImageSearchRequest) -> ImageSearchResult:
        return await self._timed("image_search", self._runtime.image_search(request))

    def note_web_call(self, tool: str, provider: str | None, outcome: str, seconds: float) -> None:
        self._metrics.web_call(tool, provider, outcome, seconds)

    async def _timed(self, tool: str, call: Awaitable[R]) -> R:
        started = time.perf_counter()
        try:
            result = await call
        except WebError as error:
            outcome = error.code.value.lower()
            self._metrics.web_call(tool, error.provider, outcome, time.perf_counter() - started)
            raise
        self._metrics.web_call(tool, result.provider, "ok", time.perf_counter() - started)
        return result


def known_paths(protocols: Mapping[str, str]) -> frozenset[str]:
    """The paths the ``path`` label names as they are; any other is ``other``."""
    return frozenset(protocols) | {METRICS_PATH}
