"""Open WebUI's own request bodies (its external web search and web loader), checked as the
server's others are, with Open WebUI's ways: a ``count`` past the server's limit is cut, not
refused, since Open WebUI turns any error into "no results"."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from ...tools import ToolOptions
from ..core.wire.fields import JSON, Request, bad, checked, validate
from .bodies import SearchCall
from .body_fields import PATTERNS, Integral, Text, Url, positive

__all__ = [
    "LOADER_MAX_URLS",
    "OpenWebUILoaderRequest",
    "OpenWebUISearchRequest",
    "loader_urls",
    "openwebui_search_call",
]

LOADER_MAX_URLS = 20
"""URLs per loader request: Open WebUI sends its URLs in batches of this size."""


class OpenWebUISearchRequest(Request):
    """Open WebUI's external web search request; fields it may add later are ignored."""

    model_config = PATTERNS

    query: Text
    count: (
        Annotated[
            int,
            Field(ge=1, description="Results wanted; more than the server gives are cut."),
            checked(positive, "must be a positive integer"),
            Integral,
        ]
        | None
    ) = None


class OpenWebUILoaderRequest(Request):
    """Open WebUI's external web loader request; fields it may add later are ignored."""

    model_config = PATTERNS

    urls: Annotated[
        list[Url],
        checked(
            lambda v: isinstance(v, list) and all(isinstance(item, str) for item in v),
            "must be an array of strings",
        ),
        Field(
            max_length=LOADER_MAX_URLS,
            description="Pages to read, in order; one that is not an http(s) URL refuses them "
            "all, as `/v1/fetch` refuses it.",
        ),
    ]


def openwebui_search_call(body: JSON, options: ToolOptions) -> SearchCall:
    """Open WebUI's ``{"query", "count"}``: a larger ``count`` than the server allows is cut
    to the limit rather than refused, because Open WebUI turns any error into no results."""
    checked_body = validate(OpenWebUISearchRequest, body)
    limit = options.search_max_results
    return SearchCall((checked_body.query.strip(),), min(checked_body.count or limit, limit))


def loader_urls(body: JSON) -> tuple[str, ...]:
    """Open WebUI's ``{"urls": [...]}``: distinct URLs in order, at most a batch of them."""
    urls = body.get("urls")
    if isinstance(urls, list) and len(urls) > LOADER_MAX_URLS:
        raise bad("urls", f"at most {LOADER_MAX_URLS} URLs per request, not {len(urls)}")
    checked_urls = validate(OpenWebUILoaderRequest, body).urls
    return tuple(dict.fromkeys(url.strip() for url in checked_urls if url.strip()))
