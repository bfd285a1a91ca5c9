"""The official SDKs' clients as the server tests drive webreach with them: no retries, so a
failure shows at once as what the server answered, not as the SDK's retry of it."""

from __future__ import annotations

import anthropic
import openai

__all__ = ["anthropic_client", "openai_client"]


def openai_client(base_url: str, api_key: str = "k", *, strict: bool = False) -> openai.OpenAI:
    """``strict``: the SDK checks every response against its types, as a typed caller would."""
    return openai.OpenAI(
        base_url=base_url, api_key=api_key, max_retries=0, _strict_response_validation=strict
    )


def anthropic_client(
    base_url: str, api_key: str = "k", *, strict: bool = False
) -> anthropic.Anthropic:
    return anthropic.Anthropic(
        base_url=base_url, api_key=api_key, max_retries=0, _strict_response_validation=strict
    )
