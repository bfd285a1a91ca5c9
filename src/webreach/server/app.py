"""The application: routes, middleware and the resources its lifespan owns.

A plain Starlette app: the endpoints read raw bodies and answer with bytes they build
themselves, so a framework's models and dependency injection would only add per-request cost.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import Route

from ..seam import CacheStore, WebRuntime
from ..tools import ToolOptions
from .chat import ChatCodec
from .config import DEFAULT_MAX_BODY_BYTES, ServerConfig
from .core.codec import Codec
from .core.context import ServerContext
from .core.review import ModerationReviewer
from .core.sealing import PageSealer
from .core.secrets import Redactor
from .core.store import ResponseStore
from .core.turn import JSON
from .core.upstream import Upstream
from .endpoints import ProtocolEndpoint, healthz, models_endpoint
from .messages import MessagesCodec
from .middleware import AccessLog, InboundKeys, ServerTiming
from .responses import ResponsesCodec
from .web_api import OPEN_PATHS as WEB_OPEN_PATHS
from .web_api import PATHS as WEB_PATHS
from .web_api import routes as web_routes
from .web_api import unauthorized_body

__all__ = ["DEFAULT_MAX_BODY_BYTES", "PATHS", "ServerConfig", "create_app", "default_codecs"]

PATHS = {
    "chat": ("/v1/chat/completions", "/chat/completions", "/beta/chat/completions"),
    "responses": ("/v1/responses", "/responses"),
    "messages": ("/v1/messages", "/messages", "/anthropic/v1/messages"),
}
"""Where each protocol is served."""
_OPEN_PATHS = frozenset({"/healthz"}) | WEB_OPEN_PATHS


def default_codecs() -> dict[str, Codec]:
    return {"chat": ChatCodec(), "responses": ResponsesCodec(), "messages": MessagesCodec()}


def create_app(
    config: ServerConfig,
    runtime: WebRuntime,
    options: ToolOptions,
    codecs: dict[str, Codec] | None = None,
    store: CacheStore | None = None,
    secrets: Iterable[str] = (),
) -> Starlette:
    """The server; it owns ``runtime`` (and ``store``, where responses and read pages are kept
    for ``config.store_ttl`` seconds) and closes them on shutdown. ``secrets`` (providers'
    keys, say) are hidden from upstream texts with the ones ``config`` holds."""
    secrets = tuple(secrets)
    codecs = codecs if codecs is not None else default_codecs()

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        upstream = Upstream(
            base_url=config.upstream_base_url,
            api_key=config.upstream_api_key,
            model=config.upstream_model,
            timeout=config.upstream_timeout,
            connect_timeout=config.upstream_connect_timeout,
            dialect=config.upstream_dialect,
            continuation=config.upstream_continue,
            system_first=config.upstream_system == "first",
            redactor=Redactor(_secrets(config, secrets)),
        )
        kept = None
        if store is not None and config.store_ttl > 0:
            kept = ResponseStore(store, config.store_ttl)
        app.state.config = config
        reviewer = None
        if config.moderation_base_url:
            reviewer = ModerationReviewer(
                config.moderation_base_url, config.moderation_api_key, config.moderation_model
            )
        app.state.context = ServerContext(
            upstream, runtime, options, PageSealer(config.signing_key), kept, reviewer
        )
        try:
            yield
        finally:
            if reviewer is not None:
                await reviewer.aclose()
            await upstream.aclose()
            await runtime.aclose()
            if store is not None:
                await store.aclose()

    routes = [
        Route(path, ProtocolEndpoint(codec).handle, methods=["POST"])
        for protocol, codec in codecs.items()
        for path in PATHS[protocol]
    ]
    listing = models_endpoint(codecs.get("chat") or ChatCodec())
    routes += [
        Route("/v1/models", listing, methods=["GET"]),
        Route("/models", listing, methods=["GET"]),
        Route("/healthz", healthz, methods=["GET"]),
        *web_routes(),
    ]
    middleware = [Middleware(AccessLog, protocols=_protocols(codecs)), Middleware(ServerTiming)]
    if any(config.api_keys):
        keys = Middleware(
            InboundKeys,
            keys=config.api_keys,
            error_body=_error_body_for(codecs),
            open_paths=_OPEN_PATHS,
        )
        middleware.append(keys)
    return Starlette(routes=routes, middleware=middleware, lifespan=lifespan)


def _secrets(config: ServerConfig, more: Iterable[str]) -> list[str | None]:
    """Every secret the server knows, none of which an upstream text may carry onwards."""
    return [
        config.upstream_api_key,
        config.moderation_api_key,
        config.signing_key,
        *config.api_keys,
        *more,
    ]


def _protocols(codecs: dict[str, Codec]) -> dict[str, str]:
    """What the access line names as each path's protocol."""
    named = {path: protocol for protocol in codecs for path in PATHS[protocol]}
    named.update({"/v1/models": "models", "/models": "models", "/healthz": "health"})
    named.update({path: name.split("_")[0] for name, path in WEB_PATHS.items()})
    return named


def _error_body_for(codecs: dict[str, Codec]) -> Callable[[str], Callable[[str], JSON]]:
    """The error shape of the protocol a path speaks (the search and fetch endpoints' own on
    theirs, Chat's for anything else)."""
    by_path = {path: codecs[protocol] for protocol in codecs for path in PATHS[protocol]}
    fallback = codecs.get("chat") or ChatCodec()
    web_paths = frozenset(WEB_PATHS.values())

    def for_path(path: str) -> Callable[[str], JSON]:
        if path in web_paths:
            return unauthorized_body
        codec = by_path.get(path, fallback)
        return lambda message: codec.error_body(401, message)

    return for_path
