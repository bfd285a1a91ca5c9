"""What went wrong on the network, named as a person would: DNS, refused, TLS, timeout.

HTTP client libraries wrap the operating system's error in their own, sometimes under the
wrong name (``httpx-aiohttp`` reports a refused connection as a connect *timeout*), so the
class a caller catches says little. The cause is found by walking the exception chain to the
error that actually happened. Only the standard library is used: exceptions of aiohttp and
httpx are recognised by their class names.
"""

from __future__ import annotations

import errno
import socket
import ssl
from dataclasses import dataclass
from typing import Literal

__all__ = ["CauseKind", "NetworkCause", "network_cause"]

CauseKind = Literal["dns", "refused", "tls", "unreachable", "closed", "connect_timeout", "timeout"]

_DNS_CLASSES = frozenset({"ClientConnectorDNSError"})
_TLS_CLASSES = frozenset(
    {"ClientSSLError", "ClientConnectorSSLError", "ClientConnectorCertificateError"}
)
_CLOSED_CLASSES = frozenset(
    {"ServerDisconnectedError", "RemoteProtocolError", "ClientPayloadError"}
)
_CONNECT_TIMEOUT_CLASSES = frozenset({"ConnectionTimeoutError", "ConnectTimeout"})
_UNREACHABLE = frozenset({errno.ENETUNREACH, errno.EHOSTUNREACH})


@dataclass(frozen=True, slots=True)
class NetworkCause:
    """One network failure: its kind, and for TLS the library's short reason."""

    kind: CauseKind
    reason: str | None = None

    def describe(self, where: str | None = None) -> str:
        """A few words (``connection refused by 127.0.0.1:1``); ``where`` (a host, or
        ``host:port``) is left out of texts a remote client reads."""
        match self.kind:
            case "dns":
                host = where.rsplit(":", 1)[0] if where and where[-1:].isdigit() else where
                text = f"DNS lookup failed for {host}" if host else "DNS lookup failed"
            case "refused":
                text = f"connection refused by {where}" if where else "connection refused"
            case "tls":
                text = f"TLS handshake with {where} failed" if where else "TLS handshake failed"
            case "unreachable":
                text = f"network unreachable ({where})" if where else "network unreachable"
            case "closed":
                text = f"connection closed by {where}" if where else "connection closed"
            case "connect_timeout":
                text = f"connecting to {where} timed out" if where else "connection timed out"
            case _:
                text = f"no answer from {where} in time" if where else "timed out"
        return f"{text} ({self.reason})" if self.reason else text


def _chain(error: BaseException) -> list[BaseException]:
    found: list[BaseException] = []
    seen: BaseException | None = error
    while seen is not None and all(seen is not known for known in found):
        found.append(seen)
        seen = seen.__cause__ or seen.__context__
    return found


def _tls_reason(error: BaseException) -> str | None:
    said = getattr(error, "verify_message", None) or getattr(error, "reason", None)
    if not isinstance(said, str) or not said:
        return None
    said = " ".join(said.replace("_", " ").split()).lower()
    return said if len(said) <= 80 else said[:79] + "…"


def network_cause(error: BaseException) -> NetworkCause | None:
    """The cause of a failed request, or ``None`` when its chain shows no network failure.

    The most telling error in the chain wins (a DNS failure under a "timeout" is a DNS
    failure); a timeout counts only when nothing more specific is there.
    """
    chain = _chain(error)
    names = [{kind.__name__ for kind in type(e).__mro__} for e in chain]
    for e, classes in zip(chain, names, strict=True):
        if isinstance(e, socket.gaierror) or classes & _DNS_CLASSES:
            return NetworkCause("dns")
    for e, classes in zip(chain, names, strict=True):
        if isinstance(e, ssl.SSLError) or classes & _TLS_CLASSES:
            reasons = (_tls_reason(x) for x in reversed(chain) if isinstance(x, ssl.SSLError))
            return NetworkCause("tls", next(filter(None, reasons), None))
    for e in chain:
        if isinstance(e, ConnectionRefusedError):
            return NetworkCause("refused")
        if isinstance(e, OSError) and e.errno in _UNREACHABLE:
            return NetworkCause("unreachable")
    for e, classes in zip(chain, names, strict=True):
        if isinstance(e, ConnectionResetError | BrokenPipeError) or classes & _CLOSED_CLASSES:
            return NetworkCause("closed")
    if any(classes & _CONNECT_TIMEOUT_CLASSES for classes in names):
        return NetworkCause("connect_timeout")
    timeouts = ("TimeoutException", "APITimeoutError")
    if any(
        isinstance(e, TimeoutError) or c.intersection(timeouts)
        for e, c in zip(chain, names, strict=True)
    ):
        return NetworkCause("timeout")
    return None
