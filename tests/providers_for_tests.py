"""Small in-process providers that implement the seam's protocols, for tests and benchmarks.

They ship with the package as :mod:`webreach.testing`; this module keeps the tests' imports,
and adds :func:`register_owned` for the real fetchers tests put on a runtime.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from webreach.testing import ScriptedFetch, ScriptedImageSearch, ScriptedSearch, sources

if TYPE_CHECKING:
    from webreach.providers.fetch.http import HttpFetchProvider
    from webreach.seam import WebRuntime

__all__ = ["ScriptedFetch", "ScriptedImageSearch", "ScriptedSearch", "register_owned", "sources"]


def register_owned(runtime: WebRuntime, fetcher: HttpFetchProvider) -> HttpFetchProvider:
    """Register ``fetcher`` on ``runtime`` and hand it over, so closing the runtime closes its
    connection pool: registering alone does not, as the runtime closes only what it owns."""
    runtime.register_fetch_provider(fetcher)
    runtime.own(fetcher)
    return fetcher
