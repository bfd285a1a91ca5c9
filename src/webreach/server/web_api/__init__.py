"""Search and fetch over HTTP: the model-facing tools' structured results for programs, and the
two shapes Open WebUI calls for an external web search engine and web loader."""

from __future__ import annotations

from starlette.routing import Route

from .errors import rate_limited_body, unauthorized_body
from .handlers import (
    fetch_endpoint,
    openapi_endpoint,
    openwebui_loader_endpoint,
    openwebui_search_endpoint,
    search_endpoint,
)
from .openapi import PATHS

__all__ = ["OPEN_PATHS", "PATHS", "rate_limited_body", "routes", "unauthorized_body"]

OPEN_PATHS = frozenset({PATHS["openapi"]})
"""Served without a key: the document says what the endpoints take, and nothing more."""


def routes() -> list[Route]:
    return [
        Route(PATHS["search"], search_endpoint, methods=["POST"]),
        Route(PATHS["fetch"], fetch_endpoint, methods=["POST"]),
        Route(PATHS["openapi"], openapi_endpoint, methods=["GET"]),
        Route(PATHS["openwebui_search"], openwebui_search_endpoint, methods=["POST"]),
        Route(PATHS["openwebui_loader"], openwebui_loader_endpoint, methods=["POST"]),
    ]
