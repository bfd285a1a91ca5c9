"""The application: routes, middleware and the resources its lifespan owns.

A plain Starlette app: the endpoints read raw bodies and answer with bytes they build
themselves, so a framework's models and dependency injection would only add per-request cost.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager

from pydantic import SecretStr
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import BaseRoute, Route, WebSocketRoute

from ..seam import CacheStore, WebRuntime, cancel_and_wait
from ..settings.server import ServerSettings
from ..tools import ToolOptions
from .admin import ADMIN_USAGE_PATH, admin_only, usage_endpoint
from .chat import ChatCodec
from .core.loop.context import ServerContext
from .core.review.reviewers import ModerationReviewer
from .core.state.page_cipher import PageCipher
from .core.state.store import ResponseStore
from .core.turn.limits import Stopping
from .core.upstream.client import Upstream
from .core.upstream.readiness import Readiness
from .core.upstream.secrets import Redactor
from .core.web_tools.base import ToolFactory
from .core.web_tools.registry import BUILT_IN_TOOLS
from .core.wire.codec import Codec
from .cross_site import CrossOrigin, JsonBodies, LoopbackOnly
from .endpoints import ProtocolEndpoint, healthz, models_endpoint, readyz
from .error_shapes import ErrorShapes
from .messages import MessagesCodec
from .metrics import (
    METRICS_PATH,
    MeteredRuntime,
    Metrics,
    MetricsMiddleware,
    known_paths,
    metrics_endpoint,
)
from .middleware import LOOP_DETECTED, AccessLog, HopLimit, InboundKeys, ServerTiming
from .playground import PATHS as PLAYGROUND_PATHS
from .playground import routes as playground_routes
from .redaction import RedactedResponses
from .responses import ResponsesCodec
from .responses.compact import compact_endpoint
from .responses.websocket import responses_socket
from .tenants import Tenants
from .web_api import OPEN_PATHS as WEB_OPEN_PATHS
from .web_api import PATHS as WEB_PATHS
from .web_api import routes as web_routes

__all__ = ["PATHS", "ServerSettings", "create_app", "default_codecs"]

PATHS = {
    "chat": ("/v1/chat/completions", "/chat/completions", "/beta/chat/completions"),
    "responses": ("/v1/responses", "/responses"),
    "messages": ("/v1/messages", "/messages", "/anthropic/v1/messages"),
}
"""Where each protocol is served."""
_OPEN_PATHS = frozenset({"/healthz", "/readyz"}) | WEB_OPEN_PATHS


COMPACT_PATHS = ("/v1/responses/compact", "/responses/compact")


def responses_sockets() -> list[BaseRoute]:
    """The Responses API's WebSocket mode, on the paths of its ``POST``."""
    return [WebSocketRoute(path, responses_socket) for path in PATHS["responses"]]


def default_codecs() -> dict[str, Codec]:
    return {"chat": ChatCodec(), "responses": ResponsesCodec(), "messages": MessagesCodec()}


def create_app(
    settings: ServerSettings,
    runtime: WebRuntime,
    options: ToolOptions,
    codecs: dict[str, Codec] | None = None,
    store: CacheStore | None = None,
    secrets: Iterable[str] = (),
    *,
    keepalive_seconds: float = 10.0,
    tools: Sequence[ToolFactory] = BUILT_IN_TOOLS,
) -> Starlette:
    """The server; it owns ``runtime`` (and ``store``, where responses and read pages are kept
    for ``settings.store_ttl`` seconds) and closes them on shutdown. ``secrets`` (providers'
    keys, say) are hidden from upstream texts with the ones ``settings`` holds. A request
    waiting for its answer gets a keep-alive (an SSE comment or a newline) every
    ``keepalive_seconds``. ``tools`` are the web tools the server runs itself, in the order
    their calls are planned (docs/development/adding-a-server-tool.md shows how to add one)."""
    settings.upstream_url()  # a server without an upstream fails here, not at its start
    secrets = (*settings.secrets(), *secrets)
    redactor = Redactor(secrets)
    codecs = codecs if codecs is not None else default_codecs()

    metrics = Metrics() if settings.metrics else None
    if metrics is not None:
        runtime = MeteredRuntime(runtime, metrics).runtime
    open_context = _context_opener(
        settings, runtime, options, store, redactor, tuple(tools), metrics
    )

    routes = _routes(settings, codecs, keepalive_seconds)
    middleware, shapes = _middleware(settings, codecs, routes, redactor, metrics, store)
    not_routed = {404: shapes.not_routed, 405: shapes.not_routed}
    app = Starlette(
        routes=routes,
        middleware=middleware,
        lifespan=_lifespan(open_context, settings),
        exception_handlers=not_routed,
    )
    app.state.stopping = Stopping()
    return app


def _lifespan(
    open_context: Callable[[], AbstractAsyncContextManager[ServerContext]],
    settings: ServerSettings,
) -> Callable[[Starlette], AbstractAsyncContextManager[None]]:
    """The server's life: the shared context open, and the upstream's readiness watched."""

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with open_context() as context:
            app.state.context = context
            app.state.readiness = readiness = Readiness(context.upstream, settings.ready_window)
            watcher = asyncio.create_task(readiness.watch(), name="webreach-readiness")
            try:
                yield
            finally:
                await cancel_and_wait([watcher])

    return lifespan


def _routes(
    settings: ServerSettings, codecs: dict[str, Codec], keepalive_seconds: float
) -> list[BaseRoute]:
    """Each protocol's paths, the model list, health, the web API and the playground."""
    routes: list[BaseRoute] = [
        Route(path, ProtocolEndpoint(codec, keepalive_seconds).handle, methods=["POST"])
        for protocol, codec in codecs.items()
        for path in PATHS[protocol]
    ]
    if "responses" in codecs:
        routes += [Route(path, compact_endpoint, methods=["POST"]) for path in COMPACT_PATHS]
        routes += responses_sockets()
    listing = models_endpoint(codecs.get("chat") or ChatCodec())
    routes += [
        Route("/v1/models", listing, methods=["GET"]),
        Route("/models", listing, methods=["GET"]),
        Route("/healthz", healthz, methods=["GET"]),
        Route("/readyz", readyz, methods=["GET"]),
        *web_routes(),
    ]
    if settings.playground is not False:
        routes += playground_routes()
    return routes


def _middleware(
    settings: ServerSettings,
    codecs: dict[str, Codec],
    routes: list[BaseRoute],
    redactor: Redactor,
    metrics: Metrics | None,
    store: CacheStore | None,
) -> tuple[list[Middleware], ErrorShapes]:
    """The middleware, outermost first, and the error shapes it answers in; it adds to
    ``routes`` the operator's endpoints (metrics, usage), which the admin key guards."""
    protocols = _protocols(codecs)
    middleware = [
        Middleware(RedactedResponses, redactor=redactor),
        Middleware(AccessLog, protocols=protocols),
    ]
    admin_key = settings.admin_api_key
    if admin_key is not None and not admin_key.get_secret_value():
        admin_key = None
    operator_paths = {ADMIN_USAGE_PATH}
    if metrics is not None:
        scrape = metrics_endpoint(metrics)
        if admin_key is not None:
            # Its labels name every key and its usage: the operator's, like /admin/usage.
            scrape = admin_only(scrape, admin_key)
            operator_paths.add(METRICS_PATH)
        routes.append(Route(METRICS_PATH, scrape, methods=["GET"]))
        paths = known_paths(protocols)
        middleware.append(Middleware(MetricsMiddleware, metrics=metrics, paths=paths))
    keys = settings.named_api_keys()
    shapes = error_shapes(codecs)
    listed = settings.cors_origins()
    middleware += [
        Middleware(ServerTiming),
        Middleware(CrossOrigin, listed=listed, forbidden=shapes.at(403)),
    ]
    if not keys:
        # Nothing else stops a page in the user's browser, or one rebound to 127.0.0.1.
        middleware.append(
            Middleware(
                LoopbackOnly, listed=listed, misdirected=shapes.at(421), forbidden=shapes.at(403)
            )
        )
    middleware += [
        Middleware(HopLimit, error_body=shapes.at(LOOP_DETECTED)),
        Middleware(JsonBodies, paths=_post_paths(routes), error_body=shapes.at(415)),
    ]
    tenants = Tenants([name for name, _ in keys], settings.server_key_limits, store)
    if admin_key is not None:
        routes.append(Route(ADMIN_USAGE_PATH, usage_endpoint(tenants, admin_key)))
    if keys:
        inbound = Middleware(
            InboundKeys,
            keys=keys,
            error_body=shapes.at(401),
            refused_body=shapes.at(429),
            tenants=tenants,
            open_paths=_OPEN_PATHS | operator_paths | PLAYGROUND_PATHS,
        )
        middleware.append(inbound)
    return middleware, shapes


def _context_opener(
    settings: ServerSettings,
    runtime: WebRuntime,
    options: ToolOptions,
    store: CacheStore | None,
    redactor: Redactor,
    tools: tuple[ToolFactory, ...],
    metrics: Metrics | None = None,
) -> Callable[[], AbstractAsyncContextManager[ServerContext]]:
    """What every request shares, opened when the server starts and closed when it stops."""

    @asynccontextmanager
    async def open_context() -> AsyncIterator[ServerContext]:
        upstream = Upstream(settings, redactor)
        if metrics is not None:
            upstream.observe_responses(metrics.upstream_response)
        kept = None
        if store is not None and settings.store_ttl > 0:
            kept = ResponseStore(store, settings.store_ttl)
        reviewer = None
        if settings.moderation_base_url:
            reviewer = ModerationReviewer(
                settings.moderation_base_url,
                _revealed(settings.moderation_api_key),
                settings.moderation_model,
            )
        try:
            yield ServerContext(
                upstream=upstream,
                runtime=runtime,
                options=options,
                cipher=PageCipher(_revealed(settings.signing_key)),
                settings=settings,
                store=kept,
                reviewer=reviewer,
                tools=tools,
            )
        finally:
            if reviewer is not None:
                await reviewer.aclose()
            await upstream.aclose()
            await runtime.aclose()
            if store is not None:
                await store.aclose()

    return open_context


def _revealed(secret: SecretStr | None) -> str | None:
    """The secret itself, for the one place that uses it."""
    return secret.get_secret_value() if secret is not None else None


def _protocols(codecs: dict[str, Codec]) -> dict[str, str]:
    """What the access line names as each path's protocol."""
    named = {path: protocol for protocol in codecs for path in PATHS[protocol]}
    named.update(dict.fromkeys(COMPACT_PATHS, "responses"))
    named.update({"/v1/models": "models", "/models": "models"})
    named.update(
        {
            "/healthz": "health",
            "/readyz": "health",
            ADMIN_USAGE_PATH: "admin",
            METRICS_PATH: "metrics",
        }
    )
    named.update({path: name.split("_")[0] for name, path in WEB_PATHS.items()})
    named.update(dict.fromkeys(PLAYGROUND_PATHS, "playground"))
    return named


def error_shapes(codecs: dict[str, Codec]) -> ErrorShapes:
    """The error shape of the protocol a path speaks (the search and fetch endpoints' own on
    theirs, Chat's for anything else)."""
    return ErrorShapes(codecs, PATHS, WEB_PATHS.values(), codecs.get("chat") or ChatCodec())


def _post_paths(routes: Iterable[BaseRoute]) -> frozenset[str]:
    posted = (r for r in routes if isinstance(r, Route) and "POST" in (r.methods or ()))
    return frozenset(route.path for route in posted)
