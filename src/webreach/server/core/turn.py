"""One internal shape for a request, whatever protocol it arrived in.

Codecs turn Chat Completions, Responses and Messages requests into a :class:`Turn`: the
conversation as OpenAI Chat Completions messages (the upstream's own language), the client's
function tools, and the web tools the client declared.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "DEFAULT_SEARCH_BUDGET",
    "DomainFilter",
    "ReadUrlSpec",
    "SearchSpec",
    "Turn",
    "WebTools",
]

DEFAULT_SEARCH_BUDGET = 5
"""Searches per round when the client sets no ``max_uses``."""


@dataclass(frozen=True, slots=True)
class DomainFilter:
    """Anthropic-style ``allowed_domains`` / ``blocked_domains`` on a web tool."""

    allowed: tuple[str, ...] = ()
    blocked: tuple[str, ...] = ()

    def admits(self, host: str | None) -> bool:
        if not host:
            return not self.allowed
        host = host.lower().rstrip(".")

        def matches(domain: str) -> bool:
            domain = domain.lower().strip().lstrip(".")
            return host == domain or host.endswith("." + domain)

        if any(matches(d) for d in self.blocked):
            return False
        return not self.allowed or any(matches(d) for d in self.allowed)


@dataclass(frozen=True, slots=True)
class SearchSpec:
    """A declared web search tool. ``name`` is echoed back in blocks exactly as declared."""

    name: str
    declared_type: str
    max_uses: int | None = None
    domains: DomainFilter = field(default_factory=DomainFilter)

    @property
    def budget(self) -> int:
        return self.max_uses if self.max_uses is not None else DEFAULT_SEARCH_BUDGET


@dataclass(frozen=True, slots=True)
class ReadUrlSpec:
    """A declared URL-reading tool (``deepseek_read_url`` or Anthropic ``web_fetch``)."""

    name: str
    declared_type: str
    max_uses: int | None = None
    domains: DomainFilter = field(default_factory=DomainFilter)


@dataclass(frozen=True, slots=True)
class WebTools:
    search: SearchSpec | None = None
    read_url: ReadUrlSpec | None = None

    @property
    def any(self) -> bool:
        return self.search is not None or self.read_url is not None


Protocol = Literal["chat", "responses", "messages"]


@dataclass(slots=True)
class Turn:
    """One request, ready for the loop.

    ``messages`` and ``client_tools`` are OpenAI Chat Completions shapes; ``params`` are the
    remaining upstream parameters (``max_tokens``, ``temperature``, ``stop`` …) already renamed.
    """

    protocol: Protocol
    model: str
    messages: list[dict[str, Any]]
    stream: bool
    client_tools: list[dict[str, Any]] = field(default_factory=list)
    tool_choice: Any = None
    web: WebTools = field(default_factory=WebTools)
    thinking: bool = False
    params: dict[str, Any] = field(default_factory=dict)
    page_signatures: list[tuple[int, str]] = field(default_factory=list)
    """Sealed pages of read links found in the history: (index in ``messages`` of the user
    message that opened that round, signature). Restoring them is the loop's job."""

    @property
    def tools_off(self) -> bool:
        """``tool_choice: none`` turns every tool off, URL reading included."""
        return bool(self.tool_choice == "none")

    @property
    def uses_web(self) -> bool:
        return self.web.any and not self.tools_off
