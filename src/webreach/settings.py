"""The shared settings of webreach: one typed object read from the environment and
``webreach.toml``, each value checked when read so a typo stops a command before it starts.

Loading them with every provider's own settings, and reporting problems, is :mod:`webreach.config`.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import BaseModel, Field, field_validator
from pydantic_settings import SettingsConfigDict

from .server.config import ServerSettings
from .settings_base import FileSettings

if TYPE_CHECKING:
    from .tools import ToolOptions

__all__ = ["ENV_PREFIX", "Settings", "WebSettings", "default_render_processes"]

ENV_PREFIX = "WEBREACH_"
PositiveInt = Annotated[int, Field(gt=0)]


class WebSettings(BaseModel):
    """The settings of search and fetch that every command shares, with their defaults.

    A plain model like :class:`ServerSettings`: :class:`Settings` reads both from
    ``WEBREACH_<FIELD>`` and ``webreach.toml``.
    """

    search_provider: str | None = Field(None, examples=["exa,duckduckgo", "auto"])
    search_exclude: str | None = Field(None, examples=["deepseek,duckduckgo"])
    fetch_provider: str | None = Field("auto", examples=["http", "browser"])
    """``auto``: over HTTP, and in the browser when the page is an app shell and one can be had."""
    search_enabled: bool = True
    fetch_enabled: bool = True
    search_max_queries: PositiveInt = 4
    search_max_results: PositiveInt = 8
    search_timeout: Annotated[float, Field(gt=0)] = 30.0
    search_context_size: Literal["low", "medium", "high"] = "medium"
    search_page_timeout: Annotated[float, Field(gt=0)] = 3.0
    fetch_max_chars: PositiveInt = 40_000
    fetch_timeout: Annotated[float, Field(gt=0)] = 30.0
    fetch_max_bytes: PositiveInt = 10 * 1024 * 1024
    fetch_max_body_chars: PositiveInt = 2_000_000
    """Characters of decoded document (text, HTML, PDF text) a fetch keeps; past it the page
    is cut and says so."""
    image_search_provider: str | None = None
    image_search_timeout: Annotated[float, Field(gt=0)] = 60.0
    fetch_allow: str | None = Field(None, examples=["127.0.0.1,localhost:8080,10.0.0.0/8"])
    fetch_robots: Literal["obey", "ignore"] | None = None
    """robots.txt: unset, what a model asks for obeys it and ``webreach fetch`` does not;
    ``obey`` or ``ignore`` sets both."""
    fetch_user_agent: str | None = Field(
        None, examples=["AcmeResearch/1.0 (+https://acme.example)"]
    )
    """The fetcher's ``User-Agent`` (default ``webreach/<version>``): an operator's own product
    name, never a browser's; its first token is the one robots.txt groups are matched against."""
    fetch_proxy: str | None = Field(None, examples=["http://proxy.example:3128"])
    """An HTTP(S) proxy for page fetches (``WEBREACH_PROXY`` is for search providers); the guard
    still checks every URL before it goes to the proxy, which then resolves the names."""
    cache: str | None = Field(None, examples=["sqlite:///tmp/webreach-cache.db"])
    cache_ttl: Annotated[float, Field(ge=0)] = 600.0
    proxy: str | None = Field(None, examples=["http://proxy.example:3128"])
    mcp_calls_per_minute: PositiveInt = 60
    mcp_event_store: str = Field("memory", examples=["memory", "none", "redis://cache:6379/0"])
    """Where ``webreach mcp --http`` keeps its SSE streams' events, so a client whose stream
    dropped resumes it with ``Last-Event-ID``: ``memory``, ``none`` or a ``redis://`` URL."""
    mcp_events_per_stream: PositiveInt = 256
    mcp_event_streams: PositiveInt = 1024
    mcp_event_ttl: Annotated[float, Field(gt=0)] = 600.0
    render_processes: Annotated[int, Field(ge=0)] = Field(
        default_factory=lambda: default_render_processes()
    )

    @field_validator("fetch_allow")
    @classmethod
    def _allow_list(cls, value: str | None) -> str | None:
        """Checked when read, so a typo stops every command at once instead of leaving a
        destination silently closed (or a URL silently ignored)."""
        from .net.allow import AllowList

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
        from .cache.urls import check_store_url

        if value is not None:
            check_store_url(value.strip())
        return value

    @field_validator("mcp_event_store")
    @classmethod
    def _event_store(cls, value: str) -> str:
        """Memory, none or Redis (SQLite is not shared by replicas and would only be slower)."""
        from .cache.urls import REDIS_SCHEMES, check_store_url

        value = value.strip()
        if value in ("memory", "none"):
            return value
        if value.partition("://")[0] not in REDIS_SCHEMES:
            raise ValueError("must be memory, none or a redis:// URL")
        check_store_url(value)  # the redis extra is installed
        return value

    def tool_options(self) -> ToolOptions:
        from .tools import ToolOptions

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


class Settings(FileSettings, ServerSettings, WebSettings):
    """The shared settings of webreach, read from ``WEBREACH_<FIELD>`` and ``webreach.toml``,
    with their defaults. Secrets are ``SecretStr``.

    The server's settings are declared once, in :class:`ServerSettings`, and inherited here,
    so ``webreach serve`` hands this object to ``create_app`` whole. A provider's own settings
    (its key, endpoint, model …) are not here: each provider module declares them (see
    :mod:`webreach.providers.spec`) and :func:`build_runtime` reads them.

    Fields come in the bases' reverse order: ``webreach config`` lists search and fetch first.
    """

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="ignore", validate_default=True)
