"""The patterns the web endpoints publish for their text fields promise no more than the checks
behind them accept: every string a pattern matches passes the server's own check, and the
non-blank and two-letter patterns match exactly what those checks take."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from webreach.net.guard import check_url
from webreach.seam import SearchRequest
from webreach.server.web_api.patterns import DOMAIN, HTTP_URL, NON_BLANK, TWO_LETTERS, http_url

pytestmark = pytest.mark.slow  # Hypothesis tries thousands of strings against each pattern

SETTINGS = settings(
    max_examples=400,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)


@SETTINGS
@given(st.from_regex(HTTP_URL).filter(lambda url: len(url) <= 2048))
def test_every_url_the_pattern_matches_passes_the_guards_check(url: str) -> None:
    check_url(url)


@SETTINGS
@given(st.from_regex(DOMAIN))
def test_every_domain_the_pattern_matches_is_a_domain_to_the_filters(domain: str) -> None:
    assert SearchRequest("q", include_domains=(domain,)).include_domains


@SETTINGS
@given(st.text())
def test_non_blank_is_what_stripping_leaves_something_of(text: str) -> None:
    assert bool(re.search(NON_BLANK, text)) == bool(text.strip())


@SETTINGS
@given(st.text(alphabet=st.sampled_from("aZ9é \t\n-"), max_size=5))
def test_two_letters_is_what_a_country_or_language_code_takes(text: str) -> None:
    code = text.strip()
    expected = len(code) == 2 and code.isascii() and code.isalpha()
    assert bool(re.search(TWO_LETTERS, text)) == expected


def test_the_url_pattern_refuses_what_the_guard_refuses_and_takes_ordinary_urls() -> None:
    for url in ("https://a.example/", "HTTP://1.2.3.4:8080/x?q=1#f", "http://[2001:db8::1]/"):
        assert http_url(url), url
    for url in ("ftp://a.example/", "https://u:p@a.example/", "https://a.example:0/", "a.b"):
        assert not http_url(url), url
