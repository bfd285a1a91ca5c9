"""What the search and fetch endpoints answer, declared once as pydantic models.

The OpenAPI document is generated from these; the bodies themselves are the tools'
``to_json()`` (and Open WebUI's shapes), and the tests check every answer against the document,
so a field the tools add or drop fails there instead of drifting silently.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ...seam import SearchFilter
from ...tools.fetch import PageFormat

__all__ = [
    "Citation",
    "Error",
    "ErrorDetail",
    "FetchResult",
    "OpenWebUIDocument",
    "OpenWebUIMetadata",
    "OpenWebUISearchResult",
    "SearchResult",
    "Source",
]


class Reply(BaseModel):
    """Every field is always sent (``null`` when unknown), and nothing else is."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Source(Reply):
    """A found page, as the provider described it; missing fields are never invented."""

    url: str
    title: str | None
    snippet: str | None
    published_at: str | None = Field(description="As the provider gave it.")


class Citation(Reply):
    """A page a provider's answer cites, with the words of the answer that cite it."""

    url: str
    title: str | None
    cited_text: str | None


class SearchResult(Reply):
    """The `web_search` tool's structured result."""

    queries: list[str] = Field(description="The distinct queries that ran.")
    content: str | None = Field(description="A provider-generated answer, when it has one.")
    sources: list[Source] = Field(description="Merged round-robin by rank, one per URL.")
    truncated: bool = Field(description="More sources were found than returned.")
    provider: str | None = Field(description="The provider that answered (null if several).")
    filtered_by_provider: list[SearchFilter] = Field(
        description="The filters asked for that the provider's own API applied."
    )
    filtered_after: list[SearchFilter] = Field(
        description="The filters asked for that webreach applied to the provider's sources "
        "(domains by host, recency by publication date; undated sources are kept)."
    )
    unfiltered: list[SearchFilter] = Field(
        description="The filters asked for that nobody could apply (a `country` or `language` "
        "the provider cannot take)."
    )
    citations: list[Citation] = Field(
        description="What the providers' answers cite, over every query, each once."
    )
    related: list[str] = Field(
        description="Questions or searches the providers suggest next (Perplexity's related "
        "questions, SearXNG's suggestions, Kagi's related searches)."
    )
    provider_queries: list[str] = Field(
        description="The searches model-backed providers ran to answer."
    )


class FetchResult(Reply):
    """The `web_fetch` tool's structured result: one piece of the page, and what is left."""

    url: str = Field(description="The final URL, after (same-origin) redirects.")
    status_code: int = Field(description="The page's HTTP status: an error status is data.")
    kind: Literal["html", "text", "pdf"]
    title: str | None
    content: str = Field(description="This piece of the page, in `format`.")
    truncated: bool = Field(description="The page was not read whole (cut, or over a limit).")
    start: int = Field(ge=0)
    next_start: int | None = Field(description="The `start` that continues; null at the end.")
    total_chars: int = Field(ge=0, description="Characters of the page in `format`.")
    provider: str | None
    rendered_by: str | None = Field(
        description="`http`: the document as served; `browser`: the DOM a headless browser left "
        "after running the page's scripts (an app shell, or the `browser` fetch provider)."
    )
    render_reason: str | None = Field(description="Why it was drawn that way, when known.")
    format: PageFormat


class OpenWebUISearchResult(Reply):
    """One hit of Open WebUI's external web search."""

    link: str
    title: str = Field(description="The page's title, else its host name.")
    snippet: str


class OpenWebUIMetadata(Reply):
    source: str = Field(description="The URL as requested.")
    title: str = Field(description="The page's title, else its host name.")


class OpenWebUIDocument(Reply):
    """One page of Open WebUI's external web loader: its whole main content as Markdown."""

    page_content: str
    metadata: OpenWebUIMetadata


class ErrorDetail(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    code: str = Field(
        description="`INVALID_ARGUMENTS`, a `WEB_…` code of the tools, `REQUEST_TOO_LARGE`, "
        "`NOT_ENABLED` or `INTERNAL_ERROR`; a missing key is `UNAUTHORIZED`."
    )
    message: str
    param: str | None = Field(default=None, description="The request field at fault.")
    provider: str | None = Field(default=None, description="The provider that failed.")
    retry_after: float | None = Field(default=None, description="Seconds to wait (429).")


class Error(BaseModel):
    """Every refusal and failure."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    error: ErrorDetail
