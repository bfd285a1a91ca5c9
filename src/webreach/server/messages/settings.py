"""A Messages request's settings as the upstream's Chat Completions takes them.

Each of Anthropic's top-level settings is passed on where Chat has its counterpart, refused
when the server cannot honour it and ignoring it would change the answer, or ignored when it
only tunes how Anthropic runs a request (``cache_control``, ``service_tier``, ``speed`` …).
"""

from __future__ import annotations

from ..core.turn.errors import RequestError
from ..core.turn.shape import JSON
from .shapes_in import MessagesRequest

__all__ = ["answer_format", "effort", "refuse_unhonoured", "thinking", "upstream_params"]

_THINKING_ON = ("enabled", "adaptive", "between_tools")

_UNHONOURED = {
    "top_k": "Chat Completions upstreams take no top-k sampling",
    "container": "the server runs no code execution containers",
    "mcp_servers": "the server connects to no MCP servers; declare their tools as client tools",
    "inference_geo": "the server cannot choose where the upstream model runs",
    "compaction": "the server does not summarize conversations",
    "thread": "the server keeps no conversation state; send the whole conversation",
}
"""Settings that change the answer or a promise the server cannot keep, and why."""


def refuse_unhonoured(request: MessagesRequest) -> None:
    """A 400 naming the first setting the server cannot honour (an empty one asks nothing)."""
    for name, why in _UNHONOURED.items():
        if getattr(request, name) not in (None, []):
            raise RequestError(f"{name}: not supported: {why}", param=name)
    policy = request.billing_policy
    if policy is not None and policy.bill_to == "user_profile":
        raise RequestError(
            "billing_policy.bill_to: not supported: only `self` can be billed",
            param="billing_policy",
        )


def upstream_params(request: MessagesRequest) -> JSON:
    """The Chat Completions parameters the request's settings become."""
    params: JSON = {}
    for name in ("max_tokens", "temperature", "top_p"):
        value = getattr(request, name)
        if value is not None:
            params[name] = value
    if request.stop_sequences:
        params["stop"] = request.stop_sequences
    if request.metadata is not None and request.metadata.user_id is not None:
        params["user"] = request.metadata.user_id
    return params


def answer_format(request: MessagesRequest) -> JSON | None:
    """``output_config.format`` (or the older ``output_format``) as Chat's ``json_schema``
    format, without ``strict``: OpenAI's strict mode refuses schemas Anthropic's accepts
    (optional properties), and upstreams that constrain decoding do so from the schema alone."""
    output = request.output_config
    shape = output.format if output is not None and output.format else request.output_format
    if shape is None:
        return None
    return {"type": "json_schema", "json_schema": {"name": "output", "schema": shape.schema_}}


def thinking(request: MessagesRequest) -> bool:
    return request.thinking is not None and request.thinking.type in _THINKING_ON


def effort(request: MessagesRequest) -> str | None:
    """The thinking effort, OpenAI-style: the client's ``output_config.effort``, else from the
    thinking budget (under 4k tokens low, under 16k medium, more high)."""
    asked = request.thinking
    if asked is None or asked.type not in _THINKING_ON:
        return None
    output = request.output_config
    if output is not None and output.effort is not None:
        return output.effort
    budget = asked.budget_tokens
    if not isinstance(budget, int) or isinstance(budget, bool):
        return "medium"
    return "low" if budget < 4096 else "medium" if budget < 16384 else "high"
