"""The HTTP fetcher's SSRF, redirect and limit tests, run again against the ``browser``
provider: every page it renders is read by the same guarded fetcher first, so each must hold
unchanged (the cases whose bodies are not HTML, or that fail before any body is read)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

import test_fetch_http
import test_net_guard
from browser_harness import limits, needs_browser
from test_fetch_http import (
    test_a_declared_length_over_the_cap_is_refused_before_reading,
    test_a_gigabyte_body_is_cut_at_the_cap,
    test_a_gzip_bomb_stops_at_the_decoded_cap,
    test_a_pdf_over_the_cap_is_too_large,
    test_a_resolved_name_is_dialled_by_address_keeping_its_host_header,
    test_a_slow_drip_hits_the_total_timeout,
    test_an_allowed_name_opens_its_private_addresses,
    test_an_invalid_url_is_refused_before_any_io,
    test_cancellation_propagates_and_closes_the_connection,
    test_cross_origin_redirects_are_blocked_with_the_target,
    test_dns_failure_is_a_provider_error,
    test_dns_rebinding_cannot_reach_a_blocked_address,
    test_each_hop_is_checked_again,
    test_one_private_answer_blocks_the_host,
    test_redirect_to_a_non_web_url_is_blocked,
    test_refused_connection_is_a_provider_error,
    test_resolver_garbage_is_blocked,
    test_the_timeout_covers_all_redirect_hops_together,
)
from test_net_guard import (
    test_every_loopback_spelling_is_refused_before_connecting,
    test_metadata_address_is_refused_without_io,
)
from webreach.providers.fetch._browser_engine import BrowserEngine
from webreach.providers.fetch.browser import BrowserFetchProvider

pytestmark = needs_browser

__all__ = [
    "test_a_declared_length_over_the_cap_is_refused_before_reading",
    "test_a_gigabyte_body_is_cut_at_the_cap",
    "test_a_gzip_bomb_stops_at_the_decoded_cap",
    "test_a_pdf_over_the_cap_is_too_large",
    "test_a_resolved_name_is_dialled_by_address_keeping_its_host_header",
    "test_a_slow_drip_hits_the_total_timeout",
    "test_an_allowed_name_opens_its_private_addresses",
    "test_an_invalid_url_is_refused_before_any_io",
    "test_cancellation_propagates_and_closes_the_connection",
    "test_cross_origin_redirects_are_blocked_with_the_target",
    "test_dns_failure_is_a_provider_error",
    "test_dns_rebinding_cannot_reach_a_blocked_address",
    "test_each_hop_is_checked_again",
    "test_every_loopback_spelling_is_refused_before_connecting",
    "test_metadata_address_is_refused_without_io",
    "test_one_private_answer_blocks_the_host",
    "test_redirect_to_a_non_web_url_is_blocked",
    "test_refused_connection_is_a_provider_error",
    "test_resolver_garbage_is_blocked",
    "test_the_timeout_covers_all_redirect_hops_together",
]


def as_browser(**options: Any) -> BrowserFetchProvider:
    """The ``browser`` provider in place of ``HttpFetchProvider(**options)``."""
    return BrowserFetchProvider(BrowserEngine(limits(), **options))


@pytest.fixture(autouse=True)
def browser_in_place_of_http(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(test_fetch_http, "HttpFetchProvider", as_browser)
    monkeypatch.setattr(test_net_guard, "HttpFetchProvider", as_browser)


@pytest.fixture
async def provider() -> AsyncIterator[BrowserFetchProvider]:
    fetcher = as_browser(allow="127.0.0.1")
    yield fetcher
    await fetcher.aclose()
