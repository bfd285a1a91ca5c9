"""One internal shape for a request, whatever protocol it arrived in.

Codecs turn Chat Completions, Responses and Messages requests into a :class:`Turn`: the
conversation as OpenAI Chat Completions messages (the upstream's own language), the client's
function tools, and the web tools the client declared.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ....tools import ContextSize, SearchFilters
from .extensions import Extensions

__all__ = [
    "DEFAULT_SEARCH_BUDGET",
    "JSON",
    "CitationStyle",
    "ClientTool",
    "ClientToolKind",
    "DeclaredWebTool",
    "DomainFilter",
    "ForcedWeb",
    "PageRef",
    "ReadUrlSpec",
    "SearchSpec",
    "ToolChoice",
    "Turn",
    "WebTools",
]

JSON = dict[str, object]
"""A JSON object: the wire shapes of requests and of the upstream's messages and tools."""
ToolChoice = str | JSON | None
"""A Chat Completions ``tool_choice``: ``"auto"``, ``"none"``, ``"required"`` or an object."""
CitationStyle = Literal["annotations", "markdown"]
"""How citations reach the client: the protocol's annotations, or those and inline links."""
ClientToolKind = Literal["function", "custom", "tool_search"]
"""What a client tool is to a Responses client: a function, a ``custom`` tool of one free-form
string, or a ``tool_search`` the client runs itself (each call returned in its own item type)."""
ForcedWeb = Literal["search", "read"] | None
"""The web tool the first model step must call, when the client forced a native one."""

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
class DeclaredWebTool:
    """A web tool the client declared: its name (echoed back in blocks exactly as declared) and
    type, the calls it allows and the domains it may reach."""

    name: str
    declared_type: str
    max_uses: int | None = None
    domains: DomainFilter = field(default_factory=DomainFilter)


@dataclass(frozen=True, slots=True)
class SearchSpec(DeclaredWebTool):
    """A declared web search tool."""

    max_results: int | None = None
    """Sources per search the model sees (``search_context_size``, say); None: the setting."""
    location: str | None = None
    """Where the user is, roughly, as the client said (``user_location``): a hint for the model."""
    filters: SearchFilters = field(default_factory=SearchFilters)
    """What the request's own fields ask of every search (domains, country, recency), pushed to
    the provider through the seam."""
    context_size: ContextSize | None = None
    """How much of the found pages the model gets (``search_context_size``); None: the setting."""
    live: bool = True
    """False: the turn's searches and page reads come from the cache only
    (``external_web_access: false``)."""

    @property
    def budget(self) -> int:
        return self.max_uses if self.max_uses is not None else DEFAULT_SEARCH_BUDGET


@dataclass(frozen=True, slots=True)
class ReadUrlSpec(DeclaredWebTool):
    """A declared URL-reading tool (``deepseek_read_url`` or Anthropic ``web_fetch``)."""


@dataclass(frozen=True, slots=True)
class WebTools:
    search: SearchSpec | None = None
    read_url: ReadUrlSpec | None = None

    @property
    def any(self) -> bool:
        return self.search is not None or self.read_url is not None

    @property
    def live(self) -> bool:
        """Whether the turn may search and read the web itself, or only the cache."""
        return self.search is None or self.search.live


Protocol = Literal["chat", "responses", "messages"]


@dataclass(frozen=True, slots=True)
class ClientTool:
    """A tool of the client's own: the model may call it, and the client runs it.

    ``definition`` is the Chat Completions tool the upstream is given, as sent when the
    client spoke Chat Completions (so fields the server does not know still reach the model).
    ``name`` is the upstream's name for it; a Responses client may know it as ``shown`` inside
    a ``namespace``, and as another ``kind`` than a function.
    """

    name: str
    definition: JSON
    description: str | None = None
    parameters: JSON | None = None
    strict: bool | None = None
    shown_name: str | None = None
    namespace: str | None = None
    kind: ClientToolKind = "function"

    @property
    def shown(self) -> str:
        """The tool's name as the client declared it."""
        return self.shown_name or self.name

    @classmethod
    def function(
        cls,
        name: str,
        description: str | None = None,
        parameters: JSON | None = None,
        strict: bool | None = None,
        *,
        shown: str | None = None,
        namespace: str | None = None,
        kind: ClientToolKind = "function",
    ) -> ClientTool:
        function: JSON = {"name": name}
        if description is not None:
            function["description"] = description
        if parameters is not None:
            function["parameters"] = parameters
        if strict is not None:
            function["strict"] = strict
        definition: JSON = {"type": "function", "function": function}
        kept = shown if shown != name else None
        return cls(name, definition, description, parameters, strict, kept, namespace, kind)

    @classmethod
    def sent(cls, tool: JSON) -> ClientTool:
        """A Chat Completions tool exactly as the client declared it."""
        function = tool.get("function")
        if not isinstance(function, dict):
            return cls("", tool)
        name, description = function.get("name"), function.get("description")
        parameters, strict = function.get("parameters"), function.get("strict")
        return cls(
            name if isinstance(name, str) else "",
            tool,
            description if isinstance(description, str) else None,
            parameters if isinstance(parameters, dict) else None,
            strict if isinstance(strict, bool) else None,
        )


@dataclass(frozen=True, slots=True)
class PageRef:
    """A page read in an earlier round, to be put back at the end of its round's user message
    (``round``: its index in ``Turn.messages``). The encrypted ``signature`` restores it; without
    one (a client that rebuilt the call from typed fields) the store may still hold it by
    ``call_id``."""

    round: int
    signature: str | None = None
    call_id: str | None = None

    @classmethod
    def of(cls, round_index: int, signature: object, call_id: object) -> PageRef | None:
        encrypted = signature if isinstance(signature, str) and signature else None
        named = call_id if isinstance(call_id, str) and call_id else None
        if encrypted is None and named is None:
            return None
        return cls(round_index, encrypted, named)


@dataclass(slots=True)
class Turn:
    """One request, ready for the loop.

    ``messages`` and ``client_tools`` are OpenAI Chat Completions shapes; ``params`` are the
    remaining upstream parameters (``max_tokens``, ``temperature``, ``stop`` …) already renamed.
    """

    protocol: Protocol
    model: str
    messages: list[JSON]
    stream: bool
    client_tools: list[ClientTool] = field(default_factory=list)
    tool_choice: ToolChoice = None
    forced_web: ForcedWeb = None
    """Anthropic's and OpenAI's own APIs let a client force their web search: the first step
    is made to call it, later steps are ``auto``."""
    web: WebTools = field(default_factory=WebTools)
    thinking: bool = False
    effort: str | None = None
    """How hard the client asked the model to think (``low``…``high``), when it said."""
    thinking_off: bool = False
    """The client turned thinking off in so many words (not just left it unset)."""
    params: JSON = field(default_factory=dict)
    pages: list[PageRef] = field(default_factory=list)
    """Pages of read links found in the history; restoring them is the loop's job."""
    store: bool = True
    """Whether this request may keep what it produces (Responses ``store``)."""
    previous_response_id: str | None = None
    continued: bool = False
    """The last message is a partial assistant reply the upstream is to continue: the answer
    is only the new part (Messages ending in an assistant message; Chat ``prefix: true``)."""
    extensions: Extensions = field(default_factory=Extensions)
    """``title`` and ``safety_check``, the top-level asks DeepSeek's API defines."""
    echo: object = None
    """Settings the response repeats back that nothing else reads (Responses ``instructions``,
    ``metadata``, ``truncation`` …): the protocol's own record of them, opaque to the rest."""
    citations: CitationStyle = "annotations"
    """Set by the endpoint from the setting or the ``X-Webreach-Citations`` header."""
    answer_format: JSON | None = None
    """The Chat ``response_format`` the answer must follow (``json_schema``, ``json_object``):
    kept off the steps that offer web tools, given to the step that answers."""

    @property
    def tools_off(self) -> bool:
        """``tool_choice: none`` turns every tool off, URL reading included."""
        return bool(self.tool_choice == "none")

    @property
    def uses_web(self) -> bool:
        return self.web.any and not self.tools_off
