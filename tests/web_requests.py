"""One web-search request per way in — the Chat relay (no web tools) and each protocol's loop — for
tests that send the same fault through every path."""

from __future__ import annotations

from typing import Any

USER = [{"role": "user", "content": "What is new?"}]
PATHS = {"chat": "/v1/chat/completions", "responses": "/v1/responses", "messages": "/v1/messages"}
BODIES: dict[str, dict[str, Any]] = {
    "relay": {"model": "m", "messages": USER},
    "chat": {"model": "m", "messages": USER, "tools": [{"type": "deepseek_web_search"}]},
    "responses": {"model": "m", "input": "What is new?", "tools": [{"type": "web_search"}]},
    "messages": {
        "model": "m",
        "max_tokens": 64,
        "messages": USER,
        "tools": [{"type": "web_search_20250305", "name": "web_search"}],
    },
}
VARIANTS = ["relay", "chat", "responses", "messages"]
LOOPS = ["chat", "responses", "messages"]


def path_of(variant: str) -> str:
    return PATHS["chat" if variant == "relay" else variant]
