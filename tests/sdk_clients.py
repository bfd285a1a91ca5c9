"""The official SDKs' clients as the tests drive webreach with them: no retries, so a failure
shows at once as what the server answered, not as the SDK's retry of it.

Every client made here is closed after the test by the ``sdk_clients_closed`` fixture
(tests/conftest.py): a client left to the garbage collector sits in reference cycles, so its
pooled sockets can be finalized before it and warn (``ResourceWarning``) in a later test."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

import anthropic
import openai

__all__ = ["anthropic_client", "close_clients", "openai_client"]

_Client = TypeVar("_Client", openai.OpenAI, anthropic.Anthropic)
_made: list[openai.OpenAI | anthropic.Anthropic] = []


def _made_client(
    sdk: type[_Client],
    base_url: str,
    api_key: str,
    *,
    strict: bool = False,
    timeout: float | None = None,
    headers: Mapping[str, str] | None = None,
) -> _Client:
    """``strict``: the SDK checks every response against its types, as a typed caller would;
    without ``timeout``, the SDK's own."""
    options: dict[str, Any] = {} if timeout is None else {"timeout": timeout}
    client = sdk(
        base_url=base_url,
        api_key=api_key,
        max_retries=0,
        default_headers=headers,
        _strict_response_validation=strict,
        **options,
    )
    _made.append(client)
    return client


def openai_client(base_url: str, api_key: str = "k", **options: Any) -> openai.OpenAI:
    return _made_client(openai.OpenAI, base_url, api_key, **options)


def anthropic_client(base_url: str, api_key: str = "k", **options: Any) -> anthropic.Anthropic:
    return _made_client(anthropic.Anthropic, base_url, api_key, **options)


def close_clients() -> None:
    """Close every client made so far (closing one twice is harmless)."""
    while _made:
        _made.pop().close()
