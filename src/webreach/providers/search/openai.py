"""OpenAI: the documented Responses API with the hosted ``web_search`` tool, in place of the
ChatGPT login endpoint coding agents use.

Sources are the ``url_citation`` annotations in the answer's order (with their titles), then the
pages the ``web_search_call`` actions list (``include: web_search_call.action.sources``); without
annotations, the Markdown links and bare URLs of the answer stand in for them.

Filters: ``filters.allowed_domains`` and ``user_location.country``; excluded domains are applied
by the seam. ``tool_choice: required`` makes the model search (the only tool is ``web_search``).

Keys: ``OPENAI_SEARCH_API_KEY`` for searches only, else the general ``OPENAI_API_KEY``, which the
provider then only borrows (``seam.SharedCredential``); ``OPENAI_SEARCH_BASE_URL`` likewise wins
over ``OPENAI_BASE_URL`` (which by convention ends in ``/v1``).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ...seam import SearchRequest, SearchResult, WebError
from ...seam.filters import host_matches
from .._json_api import field
from ..spec import (
    BaseUrl,
    NonEmpty,
    ProviderSettings,
    RequestsPerSecond,
    Secret,
)
from ._keyed import ModelProvider, model_failed, own_key_spec
from ._responses_output import read_output

__all__ = ["PROVIDER", "OpenAISearchProvider", "OpenAISettings"]

_INSTRUCTIONS = (
    "Search the web for the user's query and answer it concisely from what you find, "
    "citing your sources."
)
MAX_DOMAINS = 100
"""The most ``filters.allowed_domains`` takes; a longer list is applied here instead."""


class OpenAISearchProvider(ModelProvider):
    id = "openai"
    default_base_url = "https://api.openai.com/v1"
    default_model = "gpt-5.4-mini"
    model_setting = "openai_search_model"
    filters = frozenset({"include_domains", "country"})

    async def search(self, request: SearchRequest) -> SearchResult:
        body = self._body(request)
        try:
            data = await self._post(body)
        except WebError as error:
            if error.status != 400 or "temperature" not in body:
                raise
            # The reasoning models take only their default temperature (GPT-5 and o-series; the
            # GPT-5.1+ ones at reasoning effort "none" only): asked again without it, a
            # temperature never fails the search.
            del body["temperature"]
            data = await self._post(body)
        self._raise_on_failure(data)
        output = field(self.id, data, "output", list)
        found = read_output(output)
        sources = found.sources
        if request.include_domains:
            sources = tuple(s for s in sources if host_matches(s.url, request.include_domains))
        return dataclasses.replace(found, sources=sources, truncated=_cut_short(data))

    def _body(self, request: SearchRequest) -> dict[str, Any]:
        tool: dict[str, Any] = {"type": "web_search", "search_context_size": "high"}
        if request.include_domains and len(request.include_domains) <= MAX_DOMAINS:
            tool["filters"] = {"allowed_domains": list(request.include_domains)}
        if request.country is not None:
            tool["user_location"] = {"type": "approximate", "country": request.country}
        body: dict[str, Any] = {
            "model": self._model,
            "instructions": _INSTRUCTIONS,
            "input": request.query,
            "tools": [tool],
            "tool_choice": "required",
            "include": ["web_search_call.action.sources"],
            "store": False,
        }
        if request.max_tokens is not None:
            body["max_output_tokens"] = request.max_tokens
        if request.temperature is not None:
            body["temperature"] = request.temperature
        return body

    async def _post(self, body: dict[str, Any]) -> Any:
        headers = {"Authorization": f"Bearer {self._api_key or ''}"}
        return await self._post_model("/responses", headers, body)

    def _raise_on_failure(self, data: Any) -> None:
        """A response that failed after it began is HTTP 200 with ``status: failed``."""
        if not isinstance(data, dict):
            return
        error = data.get("error")
        if data.get("status") != "failed" and not isinstance(error, dict):
            return
        detail = error if isinstance(error, dict) else {}
        raise model_failed(self.id, detail, "code", "failed", [self._api_key])


def _cut_short(data: dict[str, Any]) -> bool:
    """``status: incomplete`` for ``max_output_tokens``: the answer stops mid-way."""
    details = data.get("incomplete_details")
    reason = details.get("reason") if isinstance(details, dict) else None
    return data.get("status") == "incomplete" and reason == "max_output_tokens"


class OpenAISettings(ProviderSettings):
    """``OPENAI_SEARCH_API_KEY`` (wins) or ``OPENAI_API_KEY``, ``OPENAI_SEARCH_BASE_URL`` (wins)
    or ``OPENAI_BASE_URL``, and ``OPENAI_SEARCH_MODEL``."""

    openai_search_api_key: Secret = None
    openai_api_key: Secret = None
    openai_search_base_url: BaseUrl = None
    openai_base_url: BaseUrl = None
    openai_search_model: NonEmpty = OpenAISearchProvider.default_model
    openai_requests_per_second: RequestsPerSecond = None


PROVIDER = own_key_spec(
    OpenAISearchProvider,
    OpenAISettings,
    shared_keys=["openai_api_key"],
    base_urls=["openai_search_base_url", "openai_base_url"],
)
