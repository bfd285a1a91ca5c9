"""Anthropic: Claude's Messages API with the ``web_search`` server tool, which Anthropic runs.

Sources come from the ``web_search_tool_result`` blocks, the answer and its citations from the
text after the last search, the queries from ``server_tool_use`` (:mod:`._anthropic_messages`).

Filters: ``allowed_domains`` or ``blocked_domains`` (the tool takes one of the two per request:
the allow list when domains are included, and excluded ones beside it are applied here, to the
sources and citations) and ``user_location.country``.

Keys, as coding agents name them: ``ANTHROPIC_SEARCH_API_KEY`` for searches only, else the general
``ANTHROPIC_API_KEY``; then the provider only borrows a key other programs use
(``seam.SharedCredential``). ``ANTHROPIC_SEARCH_BASE_URL`` likewise wins over
``ANTHROPIC_BASE_URL``.
"""

from __future__ import annotations

from typing import Any, TypeVar

from ...seam import (
    SearchCitation,
    SearchRequest,
    SearchResult,
    SearchSource,
    WebError,
    WebErrorCode,
)
from ...seam.filters import host_matches
from ..spec import (
    BaseUrl,
    NonEmpty,
    ProviderSettings,
    RequestsPerSecond,
    Secret,
)
from ._anthropic_messages import SearchedMessage, messages_headers, read_message
from ._keyed import ModelProvider, own_key_spec

__all__ = ["PROVIDER", "AnthropicSearchProvider", "AnthropicSettings"]

_SYSTEM = (
    "Search the web for the user's query and answer it concisely from what you find, "
    "citing your sources."
)
DEFAULT_MAX_TOKENS = 4096
"""The default when the request sets none: the Messages API requires ``max_tokens``."""
MAX_USES = 5
"""Searches per request: enough to refine a query, and a bound on the cost of one search."""
MAX_CONTINUATIONS = 3
"""Requests that continue a turn the API paused (``stop_reason: pause_turn``, long server-tool
work) before what was found so far is the answer, marked truncated."""


class AnthropicSearchProvider(ModelProvider):
    id = "anthropic"
    default_base_url = "https://api.anthropic.com"
    default_model = "claude-haiku-4-5"
    model_setting = "anthropic_search_model"
    filters = frozenset({"include_domains", "exclude_domains", "country"})

    async def search(self, request: SearchRequest) -> SearchResult:
        body: dict[str, Any] = {
            "model": self._model,
            "max_tokens": request.max_tokens or DEFAULT_MAX_TOKENS,
            "system": _SYSTEM,
            "messages": [{"role": "user", "content": request.query}],
            "tools": [_tool(request)],
        }
        if request.temperature is not None:
            body["temperature"] = request.temperature
        data = await self._post(body)
        # A paused turn is continued by sending back what it said so far; each answer holds
        # only its new blocks, so they are gathered into one message.
        blocks = _blocks(data)
        for _ in range(MAX_CONTINUATIONS):
            if not _paused(data):
                break
            said = {"role": "assistant", "content": blocks}
            try:
                data = await self._post({**body, "messages": [*body["messages"], said]})
            except WebError:
                break  # what the paused turn found stands, marked truncated
            blocks = [*blocks, *_blocks(data)]
        if isinstance(data, dict) and isinstance(data.get("content"), list):
            data = {**data, "content": blocks}
        found = read_message(self.id, data, [self._api_key])
        self._raise_when_every_search_failed(found)
        truncated = _paused(data) or (
            isinstance(data, dict) and data.get("stop_reason") == "max_tokens"
        )
        return SearchResult(
            sources=_on_sites(found.sources, request),
            content=found.answer,
            truncated=truncated,
            citations=_on_sites(found.citations, request),
            queries=found.queries,
        )

    async def _post(self, body: dict[str, Any]) -> Any:
        return await self._post_model("/v1/messages", messages_headers(self._api_key), body)

    def _raise_when_every_search_failed(self, found: SearchedMessage) -> None:
        """Searches that all failed (``max_uses_exceeded``, ``too_many_requests`` …) leave an
        answer from the model's memory, not from the web: an error, so a chain moves on.
        A failed search beside one that found sources is only dropped."""
        if found.sources or not found.search_errors:
            return
        codes = ", ".join(dict.fromkeys(found.search_errors))
        raise WebError(
            WebErrorCode.WEB_PROVIDER_ERROR,
            f"{self.id}: the web search failed ({codes})",
            provider=self.id,
        )


def _paused(data: Any) -> bool:
    return isinstance(data, dict) and data.get("stop_reason") == "pause_turn"


def _blocks(data: Any) -> list[Any]:
    content = data.get("content") if isinstance(data, dict) else None
    return list(content) if isinstance(content, list) else []


def _tool(request: SearchRequest) -> dict[str, Any]:
    tool: dict[str, Any] = {
        "type": "web_search_20250305",
        "name": "web_search",
        "max_uses": MAX_USES,
    }
    if request.include_domains:
        tool["allowed_domains"] = list(request.include_domains)
    elif request.exclude_domains:
        tool["blocked_domains"] = list(request.exclude_domains)
    if request.country is not None:
        tool["user_location"] = {"type": "approximate", "country": request.country}
    return tool


_Item = TypeVar("_Item", SearchSource, SearchCitation)


def _on_sites(items: tuple[_Item, ...], request: SearchRequest) -> tuple[_Item, ...]:
    """The excluded domains the request could not send beside an allow list, applied here."""
    if request.include_domains and request.exclude_domains:
        return tuple(item for item in items if not host_matches(item.url, request.exclude_domains))
    return items


class AnthropicSettings(ProviderSettings):
    """``ANTHROPIC_SEARCH_API_KEY`` (wins) or ``ANTHROPIC_API_KEY``, ``ANTHROPIC_SEARCH_BASE_URL``
    (wins) or ``ANTHROPIC_BASE_URL``, and ``ANTHROPIC_SEARCH_MODEL``."""

    anthropic_search_api_key: Secret = None
    anthropic_api_key: Secret = None
    anthropic_search_base_url: BaseUrl = None
    anthropic_base_url: BaseUrl = None
    anthropic_search_model: NonEmpty = AnthropicSearchProvider.default_model
    anthropic_requests_per_second: RequestsPerSecond = None


PROVIDER = own_key_spec(
    AnthropicSearchProvider,
    AnthropicSettings,
    shared_keys=["anthropic_api_key"],
    base_urls=["anthropic_search_base_url", "anthropic_base_url"],
)
