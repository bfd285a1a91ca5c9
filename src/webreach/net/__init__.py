"""Outbound HTTP shared by providers: the client factory and the private-network guard.

Imports the seam only. Names load on first use (PEP 562): a module that needs the guard or the
allow list loads neither HTTP client library.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names

if TYPE_CHECKING:
    from .addresses import parse_ip_literal
    from .allow import AllowList
    from .client import USER_AGENT, create_client
    from .guard import MAX_URL_LENGTH, check_host, check_url, is_public_address
    from .pinned_transport import PinnedTransport
    from .pinning import PinningBackend, Resolver, system_resolver

__all__ = [
    "MAX_URL_LENGTH",
    "USER_AGENT",
    "AllowList",
    "PinnedTransport",
    "PinningBackend",
    "Resolver",
    "check_host",
    "check_url",
    "create_client",
    "is_public_address",
    "parse_ip_literal",
    "system_resolver",
]

_HOMES = {
    "MAX_URL_LENGTH": "guard",
    "USER_AGENT": "client",
    "AllowList": "allow",
    "PinnedTransport": "pinned_transport",
    "PinningBackend": "pinning",
    "Resolver": "pinning",
    "check_host": "guard",
    "check_url": "guard",
    "create_client": "client",
    "is_public_address": "guard",
    "parse_ip_literal": "addresses",
    "system_resolver": "pinning",
}
"""The submodule each public name is defined in."""


if not TYPE_CHECKING:  # type checkers see the imports above
    __getattr__, __dir__ = lazy_names(__name__, _HOMES, globals())
