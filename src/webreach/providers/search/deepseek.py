"""DeepSeek: a model-backed search through its Messages API and the ``deepseek_web_search`` tool.

The service runs the searches; its answer has Anthropic's blocks, read as ``anthropic``'s are
(:mod:`._anthropic_messages`): sources from ``web_search_tool_result``, the answer and its
citations from the text after the last search, the queries from ``server_tool_use``.
"""

from __future__ import annotations

from typing import Any

from ...seam import SearchRequest, SearchResult
from ..spec import (
    BaseUrl,
    NonEmpty,
    ProviderSettings,
    RequestsPerSecond,
    Secret,
)
from ._anthropic_messages import messages_headers, read_message
from ._keyed import ModelProvider, keyed_spec

__all__ = ["PROVIDER", "DeepSeekSearchProvider", "DeepSeekSettings"]

_INSTRUCTION = "Search the web for the user's query and answer it concisely from what you find."


class DeepSeekSearchProvider(ModelProvider):
    id = "deepseek"
    default_base_url = "https://api.deepseek.com"
    default_model = "deepseek-flash"
    model_setting = "deepseek_search_model"

    async def search(self, request: SearchRequest) -> SearchResult:
        body: dict[str, Any] = {
            "model": self._model,
            "max_tokens": request.max_tokens or 2048,
            "stream": False,
            "thinking": {"type": "disabled"},
            "tools": [{"type": "deepseek_web_search", "name": "deepseek_web_search"}],
            "system": _INSTRUCTION,
            "messages": [{"role": "user", "content": request.query}],
        }
        if request.temperature is not None:
            body["temperature"] = request.temperature
        data = await self._call(
            "POST",
            "/anthropic/v1/messages",
            headers=messages_headers(self._api_key),
            json_body=body,
        )
        found = read_message(self.id, data, [self._api_key])
        return SearchResult(
            sources=found.sources,
            content=found.answer,
            citations=found.citations,
            queries=found.queries,
        )


class DeepSeekSettings(ProviderSettings):
    """``DEEPSEEK_API_KEY``, ``DEEPSEEK_SEARCH_MODEL`` and ``DEEPSEEK_BASE_URL``."""

    deepseek_api_key: Secret = None
    deepseek_base_url: BaseUrl = None
    deepseek_search_model: NonEmpty = DeepSeekSearchProvider.default_model
    deepseek_requests_per_second: RequestsPerSecond = None


PROVIDER = keyed_spec(DeepSeekSearchProvider, DeepSeekSettings)
