"""The ``auto`` fetch provider, the default: a page is read over HTTP, and drawn in the
browser only when it is an app shell (little readable text against a page that loads scripts)
and a browser can be had; otherwise it is the HTTP result. PDFs and other documents that are
not HTML never reach the browser.

It shares the ``browser`` provider's engine (one browser per runtime) and its settings.
"""

from __future__ import annotations

from ...seam import FetchProvider
from ..spec import NoSettings, ProviderContext, ProviderSpec
from .browser import BrowserFetchProvider, engine_for

__all__ = ["PROVIDER"]


def _create(_settings: NoSettings, context: ProviderContext) -> FetchProvider:
    return BrowserFetchProvider(engine_for(context, None), mode="app_shell")


PROVIDER: ProviderSpec[NoSettings, FetchProvider] = ProviderSpec("auto", NoSettings, _create)
