"""The request settings a Responses object repeats back, as OpenAI's does.

A client reads them to know what its response was made with (the Agents SDK and Codex keep
``instructions`` and ``metadata``, say); a setting the client did not send is echoed as
OpenAI's default, and ``tool_choice`` as the client wrote it, not as the upstream was asked.
"""

from __future__ import annotations

from typing import TypeVar

from ..core.turn.shape import JSON
from .shapes_in import ResponsesRequest
from .shapes_out import Echo, TextEcho, ToolChoiceEcho

__all__ = ["NO_ECHO", "echo_of"]

T = TypeVar("T")

NO_ECHO = Echo()
"""What the response says when the request set nothing it repeats."""


def _given(value: T | None, default: T) -> T:
    return default if value is None else value


def echo_of(request: ResponsesRequest) -> Echo:
    """The settings of ``request`` the response repeats, those it left out as defaults."""
    reasoning = request.reasoning
    text = request.text
    verbosity = text.verbosity if text is not None else None
    return Echo(
        background=_given(request.background, NO_ECHO.background),
        instructions=request.instructions,
        max_output_tokens=request.max_output_tokens,
        max_tool_calls=request.max_tool_calls,
        parallel_tool_calls=_given(request.parallel_tool_calls, NO_ECHO.parallel_tool_calls),
        prompt_cache_key=request.prompt_cache_key,
        prompt_cache_retention=request.prompt_cache_retention,
        reasoning=(
            NO_ECHO.reasoning
            if reasoning is None
            else {"effort": reasoning.effort, "summary": reasoning.summary}
        ),
        safety_identifier=request.safety_identifier,
        service_tier=_given(request.service_tier, NO_ECHO.service_tier),
        temperature=_given(request.temperature, NO_ECHO.temperature),
        presence_penalty=_given(request.presence_penalty, NO_ECHO.presence_penalty),
        frequency_penalty=_given(request.frequency_penalty, NO_ECHO.frequency_penalty),
        text=_text(text.format if text is not None else None, verbosity),
        tool_choice=_tool_choice_echo(request.tool_choice),
        top_p=_given(request.top_p, NO_ECHO.top_p),
        truncation=_given(request.truncation, NO_ECHO.truncation),
        user=request.user,
        metadata=_given(request.metadata, NO_ECHO.metadata),
    )


def _text(shape: object, verbosity: str | None) -> TextEcho:
    """``text`` with its ``format`` as sent (a schema included), plain text when none was."""
    echoed: TextEcho = {"format": shape if isinstance(shape, dict) else {"type": "text"}}
    if verbosity is not None:
        echoed["verbosity"] = verbosity
    return echoed


def _tool_choice_echo(choice: str | JSON | None) -> ToolChoiceEcho:
    """The client's own choice (``required``, ``{"type": "web_search"}``, a function by the
    name it declared), checked by then; none sent is ``auto``."""
    if choice is None:
        return NO_ECHO.tool_choice
    return dict(choice) if isinstance(choice, dict) else choice
