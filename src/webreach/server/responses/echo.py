"""The request settings a Responses object repeats back, as OpenAI's does.

A client reads them to know what its response was made with (the Agents SDK and Codex keep
``instructions`` and ``metadata``, say); a setting the client did not send is echoed as
OpenAI's default, and ``tool_choice`` as the client wrote it, not as the upstream was asked.
"""

from __future__ import annotations

import dataclasses
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


_COPIED = tuple(
    setting.name
    for setting in dataclasses.fields(Echo)
    if setting.name not in {"reasoning", "text", "tool_choice"}
)
"""The settings echoed as the request gave them, or as the default when it left them out."""


def echo_of(request: ResponsesRequest) -> Echo:
    """The settings of ``request`` the response repeats, those it left out as defaults."""
    reasoning = request.reasoning
    text = request.text
    verbosity = text.verbosity if text is not None else None
    copied = {
        name: _given(getattr(request, name, None), getattr(NO_ECHO, name)) for name in _COPIED
    }
    return Echo(
        **copied,
        reasoning=(
            NO_ECHO.reasoning
            if reasoning is None
            else {"effort": reasoning.effort, "summary": reasoning.summary}
        ),
        text=_text(text.format if text is not None else None, verbosity),
        tool_choice=_tool_choice_echo(request.tool_choice),
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
