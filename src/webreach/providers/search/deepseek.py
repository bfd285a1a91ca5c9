"""DeepSeek: a model-backed search through its Messages API and the ``deepseek_web_search`` tool.

The service runs the searches; the sources are read from its ``web_search_tool_result`` blocks
and the content is the model's answer after them.
"""

from __future__ import annotations

from typing import Any

from ...seam import (
    SearchRequest,
    SearchResult,
    SearchSource,
    WebError,
    WebErrorCode,
)
from .._json_api import field, optional_str, redact
from ..spec import (
    BaseUrl,
    NonEmpty,
    ProviderSettings,
    Secret,
)
from ._keyed import ModelProvider, keyed_spec

__all__ = ["PROVIDER", "DeepSeekSearchProvider", "DeepSeekSettings"]

_INSTRUCTION = "Search the web for the user's query and answer it concisely from what you find."
_TOOL_BLOCKS = frozenset({"server_tool_use", "web_search_tool_result", "web_fetch_tool_result"})


class DeepSeekSearchProvider(ModelProvider):
    id = "deepseek"
    default_base_url = "https://api.deepseek.com"
    default_model = "deepseek-flash"
    model_setting = "deepseek_search_model"

    async def search(self, request: SearchRequest) -> SearchResult:
        data = await self._call(
            "POST",
            "/anthropic/v1/messages",
            headers={
                "x-api-key": self._api_key or "",
                "anthropic-version": "2023-06-01",
                "content-type": "application/json",
            },
            json_body={
                "model": self._model,
                "max_tokens": 2048,
                "stream": False,
                "thinking": {"type": "disabled"},
                "tools": [{"type": "deepseek_web_search", "name": "deepseek_web_search"}],
                "system": _INSTRUCTION,
                "messages": [{"role": "user", "content": request.query}],
            },
        )
        self._raise_on_generation_error(data)
        content = field(self.id, data, "content", list)
        blocks = [block for block in content if isinstance(block, dict)]
        return SearchResult(sources=_sources(blocks), content=_answer(blocks))

    def _raise_on_generation_error(self, data: Any) -> None:
        """A failure after generation began still comes back as HTTP 200, with an error body."""
        if not (isinstance(data, dict) and data.get("type") == "error"):
            return
        error = data.get("error")
        detail = error if isinstance(error, dict) else {}
        kind = optional_str(detail, "type") or "error"
        message = optional_str(detail, "message")
        text = f"{kind}: {message}" if message else kind
        raise WebError(
            WebErrorCode.WEB_PROVIDER_ERROR,
            f"{self.id}: the model failed to answer ({redact(text, [self._api_key])})",
            provider=self.id,
        )


def _sources(blocks: list[dict[str, Any]]) -> tuple[SearchSource, ...]:
    """Every search result of every search, first appearance of a URL kept."""
    found: dict[str, SearchSource] = {}
    for block in blocks:
        items = block.get("content") if block.get("type") == "web_search_tool_result" else None
        if not isinstance(items, list):
            continue
        for item in items:
            if _is_result(item) and item["url"] not in found:
                found[item["url"]] = _source(item)
    return tuple(found.values())


def _is_result(item: Any) -> bool:
    return (
        isinstance(item, dict)
        and item.get("type") == "web_search_result"
        and isinstance(item.get("url"), str)
        and bool(item["url"])
    )


def _source(item: dict[str, Any]) -> SearchSource:
    return SearchSource(
        url=item["url"],
        title=optional_str(item, "title"),
        snippet=optional_str(item, "snippet"),
        published_at=optional_str(item, "page_age"),
    )


def _answer(blocks: list[dict[str, Any]]) -> str | None:
    """The text blocks after the last tool block: text before a search is a preamble, not the
    answer. Blocks are joined as they are, since a citation splits one sentence across blocks."""
    last_tool = max((i for i, b in enumerate(blocks) if b.get("type") in _TOOL_BLOCKS), default=-1)
    text = "".join(
        block["text"]
        for block in blocks[last_tool + 1 :]
        if block.get("type") == "text" and isinstance(block.get("text"), str)
    )
    return text if text.strip() else None


class DeepSeekSettings(ProviderSettings):
    """``DEEPSEEK_API_KEY``, ``DEEPSEEK_SEARCH_MODEL`` and ``DEEPSEEK_BASE_URL``."""

    deepseek_api_key: Secret = None
    deepseek_base_url: BaseUrl = None
    deepseek_search_model: NonEmpty = DeepSeekSearchProvider.default_model


PROVIDER = keyed_spec(DeepSeekSearchProvider, DeepSeekSettings)
