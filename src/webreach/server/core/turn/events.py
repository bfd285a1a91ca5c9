"""What the loop reports, in order, for a codec to render as its protocol's stream or body.

Call events come before their searches finish, so a client can show progress for the real
duration of a search.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal

from .shape import ClientToolKind

__all__ = [
    "Action",
    "ActionFinds",
    "Billing",
    "CallFailed",
    "CallKind",
    "ClientToolArguments",
    "ClientToolCall",
    "Event",
    "Failed",
    "FindInPageAction",
    "Finished",
    "FirstStepUsage",
    "OpenPageAction",
    "PageOutcome",
    "ReadLinkAction",
    "ReasoningDelta",
    "RequestCounter",
    "SearchAction",
    "SearchOutcome",
    "StepReasoningDone",
    "TextCitation",
    "TextDelta",
    "UnitCounter",
    "Usage",
    "WebCall",
    "WebCallCompleted",
    "WebCallStarted",
    "WebSource",
    "rfc3339",
]

CallKind = str
"""What clients see as a call's ``kind``: ``search``, ``deep_search``, ``image_search``,
``deep_image_search`` and ``read_link`` for the built-in tools, a new tool's own word for it."""
RequestCounter = Literal["web_search_requests", "web_fetch_requests"]
UnitCounter = Literal["tool_search", "tool_fetch", "tool_image_search"]
StopReason = Literal["end_turn", "max_tokens", "tool_use", "refusal"]
ErrorCode = Literal[
    "unavailable",
    "url_not_accessible",
    "url_not_allowed",
    "max_uses_exceeded",
    "invalid_tool_input",
]


def rfc3339(seconds: float) -> str:
    """A moment as RFC 3339 in UTC, to the second (``2026-01-02T03:04:05Z``)."""
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True, slots=True)
class WebSource:
    """A search result as clients display it; ``number`` is what the model cites as 【n】."""

    url: str
    title: str | None
    snippet: str | None
    published_at: str | None
    number: int
    site_name: str | None = None
    site_icon: str | None = None
    image_url: str | None = None
    """For a page an image search found: the image as it appears there."""


ActionFinds = Literal["sources", "page"]
"""What a call brings back: numbered sources (a search) or a page (reading one)."""


@dataclass(frozen=True, slots=True)
class Action:
    """What a web call does, in words every protocol can render without knowing the tool.

    ``name`` is the action's own word (``search``, ``open_page``, ``find_in_page``,
    ``read_link``); a call that ``finds`` sources has ``queries``, one that reads a page has
    ``url`` and, when it looks for text in it, ``pattern``.
    """

    name: str
    finds: ActionFinds
    queries: tuple[str, ...] = ()
    url: str = ""
    pattern: str | None = None


# The built-in tools' actions, by the names their classes had before ``Action`` was one.


def SearchAction(queries: tuple[str, ...], name: str = "search") -> Action:
    """A call that looks for sources (an image search has no queries)."""
    return Action(name, "sources", queries=queries)


def OpenPageAction(url: str) -> Action:
    return Action("open_page", "page", url=url)


def FindInPageAction(url: str, pattern: str) -> Action:
    return Action("find_in_page", "page", url=url, pattern=pattern)


def ReadLinkAction(url: str) -> Action:
    return Action("read_link", "page", url=url)


@dataclass(frozen=True, slots=True)
class WebCall:
    """One server-side tool call: ``tool_name``/``tool_type`` are the client's declaration."""

    id: str
    step: int
    index: int
    kind: CallKind
    tool_name: str
    tool_type: str
    action: Action


@dataclass(frozen=True, slots=True)
class SearchOutcome:
    sources: tuple[WebSource, ...]


@dataclass(frozen=True, slots=True)
class PageOutcome:
    url: str
    title: str | None
    published_at: str | None
    signature: str | None = None
    retrieved_at: str = field(default_factory=lambda: rfc3339(time.time()))
    """When the server read it (RFC 3339, UTC): Anthropic's ``web_fetch_result`` requires it."""


@dataclass(frozen=True, slots=True)
class CallFailed:
    error_code: ErrorCode


Outcome = SearchOutcome | PageOutcome | CallFailed


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    text: str


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str
    links: bool = False
    """Markdown links to the sources just cited (``markdown`` citation style), not the model's
    own words: Messages gives them a text block of their own."""


@dataclass(frozen=True, slots=True)
class TextCitation:
    """A citation at this point of the answer text (markers already removed from the text).

    ``start``/``end`` are Unicode code point offsets into the whole answer text: the cited span
    runs from the previous citation point (or the start) to here.
    """

    url: str
    title: str | None
    start: int
    end: int
    cited_text: str
    snippet: str | None = None
    """The cited source's own text (its search snippet), for clients that show that."""


@dataclass(frozen=True, slots=True)
class StepReasoningDone:
    step: int


@dataclass(frozen=True, slots=True)
class WebCallStarted:
    call: WebCall


@dataclass(frozen=True, slots=True)
class WebCallCompleted:
    call: WebCall
    outcome: Outcome


@dataclass(frozen=True, slots=True)
class ClientToolCall:
    """A call of one of the client's own tools: the turn ends and the client runs it."""

    id: str
    name: str
    arguments: str
    """JSON arguments; a ``custom`` tool's free-form input as it is."""
    namespace: str | None = None
    kind: ClientToolKind = "function"


@dataclass(frozen=True, slots=True)
class ClientToolArguments:
    """Arguments of a call of the client's own function as the upstream streams them, the
    first with none yet once its name is known; its :class:`ClientToolCall`, carrying all of
    them, follows when the step ends. ``name`` is the client's, as it declared the tool."""

    id: str
    name: str
    delta: str
    namespace: str | None = None


@dataclass(frozen=True, slots=True)
class Billing:
    """The usage counters a server tool's calls add to: one request each, and its billed units."""

    requests: RequestCounter
    units: UnitCounter


@dataclass(slots=True)
class Usage:
    """Summed over every upstream step of the request."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    reasoning_tokens: int = 0
    web_search_requests: int = 0
    web_fetch_requests: int = 0
    tool_search: int = 0
    tool_fetch: int = 0
    tool_image_search: int = 0

    @classmethod
    def of_completion(cls, answer: dict[str, object]) -> Usage:
        """The tokens of a non-streamed Chat completion the server asked for itself."""
        usage = cls()
        used = answer.get("usage")
        if isinstance(used, dict):
            prompt, completion = used.get("prompt_tokens"), used.get("completion_tokens")
            usage.add_step(
                prompt if isinstance(prompt, int) else 0,
                completion if isinstance(completion, int) else 0,
                0,
                0,
            )
        return usage

    def add(self, other: Usage) -> None:
        """Another completion's tokens (the title's, say) in this request's usage."""
        self.add_step(
            other.input_tokens, other.output_tokens, other.cached_tokens, other.reasoning_tokens
        )

    def add_step(self, prompt: int, completion: int, cached: int, reasoning: int) -> None:
        self.input_tokens += prompt
        self.output_tokens += completion
        self.cached_tokens += cached
        self.reasoning_tokens += reasoning

    def bill(self, billing: Billing, units: int) -> None:
        """One finished call of a server tool, counted where its tool says."""
        setattr(self, billing.requests, getattr(self, billing.requests) + 1)
        setattr(self, billing.units, getattr(self, billing.units) + units)

    @property
    def billed(self) -> bool:
        """Anything billed: Responses and Chat omit ``server_tool_use`` when nothing was."""
        return bool(self.tool_search or self.tool_fetch or self.tool_image_search)

    @property
    def has_server_tools(self) -> bool:
        return bool(
            self.web_search_requests
            or self.web_fetch_requests
            or self.tool_search
            or self.tool_fetch
            or self.tool_image_search
        )


@dataclass(frozen=True, slots=True)
class Finished:
    stop_reason: StopReason
    usage: Usage = field(default_factory=Usage)
    title: str | None = None
    """The conversation title, when the client asked for one and it was written in time."""


@dataclass(frozen=True, slots=True)
class FirstStepUsage:
    """The first model step's usage, as soon as the upstream reported it (usually with its
    last chunk; some upstreams report the input tokens early): Messages' ``message_start``
    carries it, as DeepSeek's does. Nothing else shows it; the final usage is summed."""

    usage: Usage


@dataclass(frozen=True, slots=True)
class Failed:
    """The request failed after the response had started (HTTP 200 already sent)."""

    message: str
    usage: Usage = field(default_factory=Usage)
    status: int = 502
    """The HTTP status the failure would have had before the reply started (504: the turn's
    deadline), for a protocol whose error event names a matching type."""


Event = (
    ReasoningDelta
    | TextDelta
    | TextCitation
    | StepReasoningDone
    | WebCallStarted
    | WebCallCompleted
    | ClientToolArguments
    | ClientToolCall
    | Finished
    | Failed
    | FirstStepUsage
)
