"""The body of one upstream step: the turn's messages as this upstream takes them, its
parameters and thinking, and the tools offered with the ``tool_choice`` the step needs.

The answer's format (``response_format``) goes only on a step that offers no web tools: an
upstream that enforces a format by constrained decoding (vLLM, llama.cpp, Ollama) could
otherwise never write a tool call."""

from __future__ import annotations

from collections.abc import Sequence

from ..turn.shape import JSON, Turn
from ..upstream.client import Upstream, thinking_params
from ..web_tools.tool import ModelTool
from .conversation import ends_with_reply

__all__ = ["step_body"]


def step_body(
    turn: Turn,
    upstream: Upstream,
    messages: list[JSON],
    own: Sequence[ModelTool],
    *,
    tools: bool,
    nudge: str | None = None,
    forced: ModelTool | None = None,
    first: bool = False,
) -> JSON:
    """``own`` are the server's tools as the model sees them; ``nudge`` a last system message
    asking for an answer; ``forced`` the tool the first step must call. A ``required`` choice
    binds the ``first`` step only: once the model has called a web tool it may answer."""
    if nudge is not None:
        messages = [*messages, {"role": "system", "content": nudge}]
    messages = upstream.placed(messages)
    body: JSON = {"model": turn.model, "messages": messages, **turn.params}
    if turn.continued and ends_with_reply(messages):
        body = upstream.continuing(body)
    asked = thinking_params(upstream.dialect, turn.thinking, turn.effort, turn.thinking_off)
    for name, value in asked.items():
        body.setdefault(name, value)
    if turn.answer_format is not None and not (tools and own):
        body["response_format"] = turn.answer_format
    if not tools:
        return body
    offered = [tool.definition for tool in turn.client_tools]
    offered.extend(model.definition for model in own)
    if offered:
        body["tools"] = offered
        choice = turn.tool_choice
        if choice == "required" and own and not first:
            choice = "auto"
        if forced is not None:
            choice = {"type": "function", "function": {"name": forced.name}}
        if choice is not None:
            body["tool_choice"] = choice
    return body
