"""The one TLS context the process's clients share.

Building a verifying context loads the CA bundle, about 20 ms each; every client and transport
used to build its own, so one ``webreach search`` spent most of its time loading certificates.
An ``ssl.SSLContext`` is safe to share between connections, clients and threads once configured.
"""

from __future__ import annotations

import functools
import ssl

import httpx

__all__ = ["shared_ssl_context", "ssl_context_for"]


@functools.cache
def shared_ssl_context() -> ssl.SSLContext:
    """The verifying context (certifi's CA bundle, no ``SSL_CERT_FILE`` from the environment),
    built on first use and reused by every client of the process."""
    return httpx.create_ssl_context(verify=True, trust_env=False)


def ssl_context_for(verify: ssl.SSLContext | bool) -> ssl.SSLContext:
    """The context a ``verify`` setting asks for: the shared one for ``True``, a context given
    as it is, a non-verifying one (built each time, for tests) for ``False``."""
    if verify is True:
        return shared_ssl_context()
    return httpx.create_ssl_context(verify=verify, trust_env=False)
