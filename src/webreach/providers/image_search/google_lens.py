"""Google Lens through SerpApi: ``GET {base}/search.json?engine=google_lens&url=…``; matches are
the ``visual_matches[]``. SerpApi takes an image URL only (no upload), and its key only as the
``api_key`` query parameter."""

from __future__ import annotations

from typing import Any

import httpx

from ...net.aio import AioTransport
from ...net.client import create_client
from ...net.tls import shared_ssl_context
from ...seam import (
    ImageBytes,
    ImageMatch,
    ImageSearchProvider,
    ImageSearchRequest,
    ImageSearchResult,
    WebError,
    WebErrorCode,
)
from .._json_api import field, optional_field, optional_str
from .._plain_text import optional_text
from ..spec import BaseUrl, ProviderContext, ProviderSettings, ProviderSpec, Secret, secret
from ._matches import KeyedImageProvider, unique

__all__ = ["PROVIDER", "GoogleLensImageSearchProvider", "GoogleLensSettings"]


class _KeyInQuery(httpx.AsyncBaseTransport):
    """Adds ``api_key`` to each request's URL below httpx's client.

    httpx logs every request's URL (at INFO); the URL it logs, and the one a response keeps, is
    the one before this transport, so the key never reaches a log line or an exception's request.
    """

    def __init__(self, inner: httpx.AsyncBaseTransport, key: str | None) -> None:
        self._inner = inner
        self._key = key

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self._key is None:
            return await self._inner.handle_async_request(request)
        url = request.url.copy_set_param("api_key", self._key)
        # A body already read stays bytes: transports frame bytes and streams differently.
        try:
            content, stream = request.content or None, None
        except httpx.RequestNotRead:
            content, stream = None, request.stream
        keyed = httpx.Request(
            request.method,
            url,
            headers=request.headers,
            content=content,
            stream=stream,
            extensions=request.extensions,
        )
        return await self._inner.handle_async_request(keyed)

    async def aclose(self) -> None:
        await self._inner.aclose()


class GoogleLensImageSearchProvider(KeyedImageProvider):
    """Available with a SerpApi key. It owns its HTTP client (the key is added by its transport),
    which the runtime closes."""

    id = "google_lens"
    default_base_url = "https://serpapi.com"

    def __init__(
        self,
        *,
        api_key: str | None,
        base_url: str | None = None,
        timeout: float = 30.0,
        proxy: str | None = None,
    ) -> None:
        inner = (
            AioTransport()
            if proxy is None
            else httpx.AsyncHTTPTransport(proxy=proxy, verify=shared_ssl_context())
        )
        key = api_key or None
        client = create_client(timeout=timeout, transport=_KeyInQuery(inner, key))
        super().__init__(api_key=key, client=client, base_url=base_url)

    async def aclose(self) -> None:
        await self._client.aclose()

    async def image_search(self, request: ImageSearchRequest) -> ImageSearchResult:
        if isinstance(request.image, ImageBytes):
            raise WebError(
                WebErrorCode.WEB_UNSUPPORTED_CONTENT_TYPE,
                f"{self.id}: takes an image URL only, not bytes "
                "(list google_vision after it in WEBREACH_IMAGE_SEARCH_PROVIDER for those)",
                provider=self.id,
            )
        url = request.image.url
        # SerpApi has no result count for Lens (about 60 come back); the seam cuts them.
        data = await self._call(
            "GET",
            "/search.json",
            headers={"Accept": "application/json"},
            params={"engine": "google_lens", "url": url},
        )
        metadata = field(self.id, data, "search_metadata", dict)
        if metadata.get("status") == "Error":
            # A failed search is an HTTP error status too, but not always (SerpApi's docs).
            raise self._failed("the search failed", data.get("error"))
        # No matches: SerpApi leaves the key out (status Success, with an "error" text).
        items = optional_field(self.id, data, "visual_matches", list, [])
        return ImageSearchResult(matches=unique(_match(item) for item in items))


def _match(item: Any) -> ImageMatch | None:
    if not isinstance(item, dict) or not (link := optional_str(item, "link")):
        return None
    return ImageMatch(
        url=link,
        title=optional_text(item, "title"),
        image_url=optional_str(item, "image"),
        snippet=optional_text(item, "snippet"),
        thumbnail_url=optional_str(item, "thumbnail"),
    )


class GoogleLensSettings(ProviderSettings):
    """``SERPAPI_API_KEY`` (SerpApi's key; Google Lens is one of its engines), and
    ``SERPAPI_BASE_URL`` to use another endpoint than the official one."""

    serpapi_api_key: Secret = None
    serpapi_base_url: BaseUrl = None


def _create(
    settings: GoogleLensSettings, context: ProviderContext
) -> GoogleLensImageSearchProvider:
    return GoogleLensImageSearchProvider(
        api_key=secret(settings.serpapi_api_key),
        base_url=settings.serpapi_base_url,
        timeout=context.search_timeout,
        proxy=context.proxy,
    )


PROVIDER: ProviderSpec[GoogleLensSettings, ImageSearchProvider] = ProviderSpec(
    "google_lens", GoogleLensSettings, _create
)
