"""Gemini: ``generateContent`` with the ``google_search`` tool (Grounding with Google Search).

The documented API-key path (``x-goog-api-key``), not the Gemini CLI / Antigravity login. The
answer is the candidate's text; sources, citations and the searches run come from its
``groundingMetadata`` (see :mod:`._gemini_grounding`).

Filters: ``recency`` as the tool's ``timeRangeFilter``. The Gemini API takes no domain filter, and
its source URLs are ``vertexaisearch.cloud.google.com`` redirects whose host says nothing about
the site: the domains are asked of the model in the instruction and applied here to each
source's site (the chunk's title, which is its domain), which the seam could not do.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from ...seam import SearchRequest, SearchResult, WebError, WebErrorCode
from ...seam.filters import cutoff
from .._google import google_key_refused
from .._json_api import optional_str
from ..spec import (
    BaseUrl,
    NonEmpty,
    ProviderSettings,
    RequestsPerSecond,
    Secret,
)
from ._gemini_grounding import Grounding
from ._keyed import ModelProvider, own_key_spec

__all__ = ["PROVIDER", "GeminiSearchProvider", "GeminiSettings"]

_INSTRUCTION = (
    "Search the web with Google Search for the user's query and answer it concisely from what "
    "you find, grounding every claim in the sources."
)
_BLOCKED = frozenset(
    {"SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY"}
)
"""Finish reasons that mean the answer was withheld, not that it ended."""


class GeminiSearchProvider(ModelProvider):
    id = "gemini"
    default_base_url = "https://generativelanguage.googleapis.com"
    default_model = "gemini-2.5-flash"
    model_setting = "gemini_search_model"
    filters = frozenset({"recency", "include_domains", "exclude_domains"})

    async def search(self, request: SearchRequest) -> SearchResult:
        model = self._model.removeprefix("models/")
        data = await self._call(
            "POST",
            f"/v1beta/models/{model}:generateContent",
            headers={"x-goog-api-key": self._api_key or ""},
            json_body=self._body(request),
            key_refused=google_key_refused,
        )
        candidate = self._answered(data)
        grounding = Grounding.read(candidate.get("groundingMetadata"))
        grounding = grounding.on_sites(request.include_domains, request.exclude_domains)
        return SearchResult(
            sources=grounding.sources,
            content=_text(candidate),
            citations=grounding.citations,
            queries=grounding.queries,
        )

    def _body(self, request: SearchRequest) -> dict[str, Any]:
        search: dict[str, Any] = {}
        if request.recency is not None:
            search["timeRangeFilter"] = {
                "startTime": _timestamp(cutoff(request.recency)),
                "endTime": _timestamp(datetime.now(UTC)),
            }
        body: dict[str, Any] = {
            "contents": [{"role": "user", "parts": [{"text": request.query}]}],
            "tools": [{"google_search": search}],
            "systemInstruction": {"parts": [{"text": _instruction(request)}]},
        }
        config: dict[str, Any] = {}
        if request.max_tokens is not None:
            config["maxOutputTokens"] = request.max_tokens
        if request.temperature is not None:
            config["temperature"] = request.temperature
        if config:
            body["generationConfig"] = config
        return body

    def _answered(self, data: Any) -> dict[str, Any]:
        """The first candidate, or the reason there is none: a blocked query comes back as
        HTTP 200 with ``promptFeedback.blockReason`` and no candidates, a blocked answer as a
        candidate whose ``finishReason`` is ``SAFETY`` (or another refusal)."""
        if not isinstance(data, dict):
            raise self._shape_error("candidates")
        candidates = data.get("candidates")
        if not candidates:
            feedback = data.get("promptFeedback")
            reason = optional_str(feedback, "blockReason") if isinstance(feedback, dict) else None
            if reason is not None:
                raise self._blocked("the query was blocked", reason)
            if candidates is None and feedback is None:
                raise self._shape_error("candidates")
            raise WebError(
                WebErrorCode.WEB_PROVIDER_ERROR,
                f"{self.id}: the model returned no answer",
                provider=self.id,
            )
        if not isinstance(candidates, list) or not isinstance(candidates[0], dict):
            raise self._shape_error("candidates")
        candidate: dict[str, Any] = candidates[0]
        reason = optional_str(candidate, "finishReason")
        if reason is not None and reason in _BLOCKED:
            raise self._blocked("the answer was blocked", reason)
        return candidate

    def _shape_error(self, key: str) -> WebError:
        return WebError(
            WebErrorCode.WEB_PROVIDER_ERROR,
            f"{self.id}: unexpected response shape (no valid {key!r})",
            provider=self.id,
        )

    def _blocked(self, what: str, reason: str) -> WebError:
        return WebError(
            WebErrorCode.WEB_PROVIDER_ERROR,
            f"{self.id}: {what} ({reason})",
            provider=self.id,
        )


def _instruction(request: SearchRequest) -> str:
    lines = [_INSTRUCTION]
    if request.include_domains:
        lines.append("Use only sources on these sites: " + ", ".join(request.include_domains))
    if request.exclude_domains:
        lines.append("Do not use sources on these sites: " + ", ".join(request.exclude_domains))
    return "\n".join(lines)


def _timestamp(moment: datetime) -> str:
    return moment.astimezone(UTC).replace(microsecond=0, tzinfo=None).isoformat() + "Z"


def _text(candidate: dict[str, Any]) -> str | None:
    """The answer's text parts joined; the model's thought parts are not the answer."""
    content = candidate.get("content")
    parts = content.get("parts") if isinstance(content, dict) else None
    if not isinstance(parts, list):
        return None
    text = "".join(
        part["text"]
        for part in parts
        if isinstance(part, dict) and isinstance(part.get("text"), str) and not part.get("thought")
    )
    return text if text.strip() else None


class GeminiSettings(ProviderSettings):
    """``GEMINI_SEARCH_API_KEY``, else the general ``GOOGLE_API_KEY`` or ``GEMINI_API_KEY`` (in
    the official SDKs' order: ``GOOGLE_API_KEY`` wins); ``GEMINI_SEARCH_MODEL`` and
    ``GEMINI_BASE_URL``."""

    gemini_search_api_key: Secret = None
    google_api_key: Secret = None
    gemini_api_key: Secret = None
    gemini_base_url: BaseUrl = None
    gemini_search_model: NonEmpty = GeminiSearchProvider.default_model
    gemini_requests_per_second: RequestsPerSecond = None


PROVIDER = own_key_spec(
    GeminiSearchProvider,
    GeminiSettings,
    shared_keys=["google_api_key", "gemini_api_key"],
    base_urls=["gemini_base_url"],
)
