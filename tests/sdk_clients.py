"""The official SDKs' clients as the tests drive webreach with them: no retries, so a failure
shows at once as what the server answered, not as the SDK's retry of it.

Every client made here is closed after the test by the ``sdk_clients_closed`` fixture
(tests/conftest.py): a client left to the garbage collector sits in reference cycles, so its
pooled sockets can be finalized before it and warn (``ResourceWarning``) in a later test."""

from __future__ import annotations

from collections.abc import Mapping

import anthropic
import openai

__all__ = ["anthropic_client", "close_clients", "openai_client"]

_made: list[openai.OpenAI | anthropic.Anthropic] = []


def openai_client(
    base_url: str,
    api_key: str = "k",
    *,
    strict: bool = False,
    timeout: float | openai.Timeout = openai.DEFAULT_TIMEOUT,
    headers: Mapping[str, str] | None = None,
) -> openai.OpenAI:
    """``strict``: the SDK checks every response against its types, as a typed caller would."""
    client = openai.OpenAI(
        base_url=base_url,
        api_key=api_key,
        max_retries=0,
        timeout=timeout,
        default_headers=headers,
        _strict_response_validation=strict,
    )
    _made.append(client)
    return client


def anthropic_client(
    base_url: str,
    api_key: str = "k",
    *,
    strict: bool = False,
    timeout: float | anthropic.Timeout = anthropic.DEFAULT_TIMEOUT,
    headers: Mapping[str, str] | None = None,
) -> anthropic.Anthropic:
    client = anthropic.Anthropic(
        base_url=base_url,
        api_key=api_key,
        max_retries=0,
        timeout=timeout,
        default_headers=headers,
        _strict_response_validation=strict,
    )
    _made.append(client)
    return client


def close_clients() -> None:
    """Close every client made so far (closing one twice is harmless)."""
    while _made:
        _made.pop().close()
