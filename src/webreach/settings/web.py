"""The settings of search and fetch that every command shares: which providers, how many
queries and results, the fetch's limits and allow list, the cache."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import BaseModel, Field, field_validator

from ..defaults import (
    FETCH_MAX_CHARS,
    SEARCH_CONTEXT_SIZE,
    SEARCH_MAX_QUERIES,
    SEARCH_MAX_RESULTS,
    SEARCH_PAGE_TIMEOUT,
)

if TYPE_CHECKING:
    from ..tools import ToolOptions

__all__ = ["WebSettings", "default_render_processes"]

PositiveInt = Annotated[int, Field(gt=0)]


class WebSettings(BaseModel):
    """The settings of search and fetch that every command shares, with their defaults.

    A plain model like :class:`ServerSettings`: :class:`Settings` reads both from
    ``WEBREACH_<FIELD>`` and ``webreach.toml``.
    """

    search_provider: str | None = Field(None, examples=["exa,duckduckgo", "auto"])
    """A search provider id, or a comma list tried in order (explicit fallback), or ``auto``:
    every available provider, in the order of the providers table. Unset, the one available
    provider."""
    search_exclude: str | None = Field(None, examples=["deepseek,duckduckgo"])
    """Search provider ids no chain ever uses (comma list): ``auto``, a list, or a bare
    configuration's choice of its one available provider."""
    fetch_provider: str | None = Field("auto", examples=["http", "browser"])
    """``auto`` (over HTTP, and in the headless browser when the page is an app shell and a
    browser can be had), ``http`` (never a browser), ``browser`` (every HTML page drawn in
    it), a plugin's id, or a comma list for explicit fallback."""
    search_enabled: bool = True
    """Define the ``web_search`` tool at all; ``webreach search`` refuses with exit 2 when
    false."""
    fetch_enabled: bool = True
    """Define the ``web_fetch`` tool at all; ``webreach fetch`` refuses with exit 2 when false."""
    search_max_queries: PositiveInt = SEARCH_MAX_QUERIES
    """The most queries one ``web_search`` call takes."""
    search_max_results: PositiveInt = SEARCH_MAX_RESULTS
    """Sources per tool call (and the ``max_results`` asked of each provider)."""
    search_timeout: Annotated[float, Field(gt=0)] = 30.0
    """Seconds for one search provider's whole call, connecting to the last byte (model-backed
    providers: at least 120)."""
    search_context_size: Literal["low", "medium", "high"] = SEARCH_CONTEXT_SIZE
    """What a search gives the model: ``low`` (sources with snippets), ``medium`` / ``high``
    (the top sources' pages read too, and their passages most relevant to the queries added,
    within about 12,000 / 24,000 characters of output); ``webreach search --context-size``
    and a request's ``search_context_size`` choose per call."""
    search_page_timeout: Annotated[float, Field(gt=0)] = SEARCH_PAGE_TIMEOUT
    """Seconds the pages of a ``medium`` / ``high`` search may take, all together; a page slower
    than that keeps its snippet."""
    fetch_max_chars: PositiveInt = FETCH_MAX_CHARS
    """Characters of rendered page per ``web_fetch`` call."""
    fetch_timeout: Annotated[float, Field(gt=0)] = 30.0
    """Seconds for one fetch, redirects included."""
    fetch_max_bytes: PositiveInt = 10 * 1024 * 1024
    """Body bytes a fetch reads, counted after content decoding."""
    fetch_max_body_chars: PositiveInt = 2_000_000
    """Characters of decoded document (text, HTML, PDF text) one fetch keeps; a longer page is
    cut, and its note names this limit (a cut by bytes names ``WEBREACH_FETCH_MAX_BYTES``)."""
    image_search_provider: str | None = None
    """An image search provider id (``google_lens``, ``google_vision``), or a comma list for
    explicit fallback; unset, the one available."""
    image_search_timeout: Annotated[float, Field(gt=0)] = 60.0
    """Seconds for one image search provider's attempt; past it the next one in the list is
    tried."""
    fetch_allow: str | None = Field(None, examples=["127.0.0.1,localhost:8080,10.0.0.0/8"])
    """A comma list exempt from the private-network guard: hosts, ``*.domain``, IPs, CIDRs, or
    ``host:port`` / ``ip:port`` / ``[v6]:port`` for that port only; anything else (a URL,
    ``10.0.0.0/33``) is refused at start."""
    fetch_robots: Literal["obey", "ignore"] | None = None
    """robots.txt: unset, what a model asks for obeys it and ``webreach fetch`` does not;
    ``obey`` or ``ignore`` sets both."""
    fetch_user_agent: str | None = Field(
        None, examples=["AcmeResearch/1.0 (+https://acme.example)"]
    )
    """The fetcher's ``User-Agent`` (default ``webreach/<version>``): an operator's own product
    name (one line of printable ASCII), never a browser's; its first word is the robots.txt
    token. Every provider sends it, the browser's requests from a drawn page included."""
    fetch_proxy: str | None = Field(None, examples=["http://proxy.example:3128"])
    """An HTTP(S) proxy for page fetches (``WEBREACH_PROXY`` is for search providers). The guard
    judges every URL before it goes to the proxy, which then resolves the names itself. Every
    provider fetches the page through it; the requests of a page drawn in the browser
    (scripts, its JSON calls) still go out directly, through the browser's guard."""
    cache: str | None = Field(None, examples=["sqlite:///tmp/webreach-cache.db"])
    """``memory``, ``sqlite:///absolute/path``, ``redis://host:port/db`` (shared by server
    replicas; the ``redis`` extra) or ``none``. Unset, ``sqlite:///<user
    cache>/webreach/cache.sqlite3`` for the command line and ``memory`` for the servers."""
    cache_ttl: Annotated[float, Field(ge=0)] = 600.0
    """Seconds a result is kept (0 turns caching off)."""
    proxy: str | None = Field(None, examples=["http://proxy.example:3128"])
    """The outbound proxy for search providers (environment proxies are ignored otherwise)."""
    mcp_calls_per_minute: PositiveInt = 60
    """Tool calls each MCP session may make in any minute; over it, a tool error saying when to
    retry."""
    mcp_event_store: str = Field("memory", examples=["memory", "none", "redis://cache:6379/0"])
    """Where ``webreach mcp --http`` keeps its SSE streams' events, so a client whose stream
    dropped resumes it with ``Last-Event-ID``: ``memory``, ``none`` or a ``redis://`` URL."""
    mcp_events_per_stream: PositiveInt = 256
    """Events one stream keeps (the oldest go)."""
    mcp_event_streams: PositiveInt = 1024
    """Streams the in-memory event store keeps (the least recently written go)."""
    mcp_event_ttl: Annotated[float, Field(gt=0)] = 600.0
    """Seconds a stream's events are kept after its last one."""
    read_processes: Annotated[int, Field(ge=0)] = Field(
        default_factory=lambda: default_render_processes()
    )
    """Worker processes that read a search's pages for passages (fetch, check and render each
    in a runtime of their own), so a wave of searches reads on every core. 0 reads them in the
    process. Default: one per available core, none on one core."""
    render_processes: Annotated[int, Field(ge=0)] = Field(
        default_factory=lambda: default_render_processes()
    )
    """Worker processes that render pages of 150,000 characters or more for the servers, so a
    wave of searches renders on every core and no render stalls the event loop; 0 renders in
    threads (what the one-shot commands always do). Default: one per available core, none on
    one core."""

    @field_validator("fetch_allow")
    @classmethod
    def _allow_list(cls, value: str | None) -> str | None:
        """Checked when read, so a typo stops every command at once instead of leaving a
        destination silently closed (or a URL silently ignored)."""
        from ..net.allow import AllowList

        if value is not None:
            AllowList.parse(value)
        return value

    @field_validator("fetch_user_agent")
    @classmethod
    def _user_agent(cls, value: str | None) -> str | None:
        """A header value: printable, one line, a product token first."""
        if value is None or not value.strip():
            return None
        value = value.strip()
        if not value.isprintable() or not value.isascii():
            raise ValueError("must be one line of printable ASCII, e.g. AcmeBot/1.0")
        return value

    @field_validator("fetch_proxy")
    @classmethod
    def _fetch_proxy(cls, value: str | None) -> str | None:
        from urllib.parse import urlsplit

        if value is None or not value.strip():
            return None
        parts = urlsplit(value.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("must be an http(s) proxy URL, e.g. http://proxy.example:3128")
        return value.strip()

    @field_validator("cache")
    @classmethod
    def _cache_store(cls, value: str | None) -> str | None:
        """An unknown store or a missing extra stops every command: continuing without the
        cache would leave server replicas silently without their shared store."""
        from ..cache.urls import check_store_url

        if value is not None:
            check_store_url(value.strip())
        return value

    @field_validator("mcp_event_store")
    @classmethod
    def _event_store(cls, value: str) -> str:
        """Memory, none or Redis (SQLite is not shared by replicas and would only be slower)."""
        from ..cache.urls import REDIS_SCHEMES, check_store_url

        value = value.strip()
        if value in ("memory", "none"):
            return value
        if value.partition("://")[0] not in REDIS_SCHEMES:
            raise ValueError("must be memory, none or a redis:// URL")
        check_store_url(value)  # the redis extra is installed
        return value

    def tool_options(self) -> ToolOptions:
        from ..tools import ToolOptions

        return ToolOptions(
            search_enabled=self.search_enabled,
            fetch_enabled=self.fetch_enabled,
            search_max_queries=self.search_max_queries,
            search_max_results=self.search_max_results,
            fetch_max_chars=self.fetch_max_chars,
            search_context_size=self.search_context_size,
            search_page_timeout=self.search_page_timeout,
        )


def default_render_processes() -> int:
    """One render process per core this process may use (its affinity, which a container or
    ``taskset`` sets); none on one core, where a process only adds copying."""
    cores = len(os.sched_getaffinity(0))
    return cores if cores > 1 else 0
