"""Outbound HTTP shared by providers: the client factory and the private-network guard.

Imports the seam only.
"""

from .addresses import parse_ip_literal
from .allow import AllowList
from .client import USER_AGENT, create_client
from .guard import (
    MAX_URL_LENGTH,
    check_host,
    check_url,
    is_public_address,
)
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
