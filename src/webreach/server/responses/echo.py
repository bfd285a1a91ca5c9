"""The request settings a Responses object repeats back, as OpenAI's does.

A client reads them to know what its response was made with (the Agents SDK and Codex keep
``instructions`` and ``metadata``, say); a setting the client did not send is echoed as
OpenAI's default.
"""

from __future__ import annotations

from ..core.turn import JSON
from .shapes_in import ResponsesRequest

__all__ = ["ECHO_DEFAULTS", "echo_of"]

ECHO_DEFAULTS: JSON = {
    "background": False,
    "instructions": None,
    "max_tool_calls": None,
    "parallel_tool_calls": True,
    "prompt_cache_key": None,
    "prompt_cache_retention": None,
    "reasoning": {"effort": None, "summary": None},
    "safety_identifier": None,
    "service_tier": None,
    "text": {"format": {"type": "text"}},
    "top_logprobs": 0,
    "truncation": "disabled",
    "user": None,
    "metadata": {},
}
"""What the response says of each setting the client left out."""


def echo_of(request: ResponsesRequest) -> JSON:
    """The settings of ``request`` the response repeats, those it left out as defaults."""
    echo = dict(ECHO_DEFAULTS)
    for name in (
        "background",
        "instructions",
        "max_tool_calls",
        "parallel_tool_calls",
        "prompt_cache_key",
        "prompt_cache_retention",
        "safety_identifier",
        "service_tier",
        "truncation",
        "user",
        "metadata",
    ):
        value = getattr(request, name)
        if value is not None:
            echo[name] = value
    if request.reasoning is not None:
        reasoning = request.reasoning
        echo["reasoning"] = {"effort": reasoning.effort, "summary": reasoning.summary}
    if request.text is not None and request.text.verbosity is not None:
        echo["text"] = {"format": {"type": "text"}, "verbosity": request.text.verbosity}
    return echo
