"""Values refused where they are given (a constructor's argument): ``except WebreachError`` catches
them as it promises to catch everything webreach raises on purpose, the message names the field,
and they stay ``ValueError``s for code that caught them as such."""

from __future__ import annotations

from collections.abc import Callable

import pytest

import webreach
from webreach.seam import ImageUrl, WebRuntime, parse_provider_ids

REFUSED: list[tuple[Callable[[], object], str, str]] = [
    (
        lambda: webreach.ToolOptions(fetch_max_chars=0),
        "fetch_max_chars",
        "ToolOptions.fetch_max_chars",
    ),
    (
        lambda: webreach.ToolOptions(search_max_queries=-1),
        "search_max_queries",
        "search_max_queries",
    ),
    (
        lambda: webreach.ToolOptions(search_max_results=0),
        "search_max_results",
        "search_max_results",
    ),
    (lambda: WebRuntime(search_timeout=0), "search_timeout", "search_timeout"),
    (lambda: WebRuntime(image_search_timeout=-1.0), "image_search_timeout", "image_search_timeout"),
    (lambda: WebRuntime(fetch_provider="http,http"), "fetch_provider", "names a provider twice"),
    (lambda: parse_provider_ids(["a", "a"]), "provider list", "names a provider twice"),
    (lambda: webreach.SearchRequest("q", max_results=0), "max_results", "max_results"),
    (
        lambda: webreach.ImageSearchRequest(ImageUrl("https://a.example/i.png"), max_results=0),
        "max_results",
        "max_results",
    ),
]


@pytest.mark.parametrize(("make", "field", "named"), REFUSED)
def test_a_refused_value_is_a_webreach_error_naming_its_field(
    make: Callable[[], object], field: str, named: str
) -> None:
    with pytest.raises(webreach.WebreachError) as refused:
        make()
    assert isinstance(refused.value, ValueError)
    assert isinstance(refused.value, webreach.InvalidValueError)
    assert refused.value.field == field
    assert named in refused.value.message
    assert str(refused.value) == refused.value.message


def test_tool_options_refusal_says_what_it_got() -> None:
    with pytest.raises(webreach.WebreachError) as refused:
        webreach.ToolOptions(fetch_max_chars=0)
    assert str(refused.value) == "ToolOptions.fetch_max_chars must be a positive integer, not 0"
