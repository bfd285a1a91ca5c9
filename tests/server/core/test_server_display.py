"""What clients display beside a source: its site, an icon, and a date in one format."""

from __future__ import annotations

from typing import Any

import pytest

from providers_for_tests import ScriptedFetch
from scripted_upstream import Call, ScriptedUpstream, Step
from sdk_clients import openai_client
from webreach.seam import FetchResult, HtmlBody
from webreach.server.core.wire.display import published, site_icon, site_name

NOW = 1_767_323_045.0  # 2026-01-02T03:04:05Z


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("2025-10-15", "2025-10-15T00:00:00Z"),
        ("2025-10-15T16:00:00+02:00", "2025-10-15T14:00:00Z"),
        ("2025-10-15T16:00:00Z", "2025-10-15T16:00:00Z"),
        ("2025-10-15T16:00:00.123456", "2025-10-15T16:00:00Z"),
        ("Tue, 14 Oct 2025 08:00:00 GMT", "2025-10-14T08:00:00Z"),
        ("October 15, 2025", "2025-10-15T00:00:00Z"),
        ("15 Oct 2025", "2025-10-15T00:00:00Z"),
        ("3 days ago", "2025-12-30T03:04:05Z"),
        ("1 hour ago", "2026-01-02T02:04:05Z"),
        ("last Tuesday", None),
        ("", None),
        (None, None),
    ],
)
def test_provider_dates_become_rfc3339_in_utc(raw: str | None, expected: str | None) -> None:
    assert published(raw, now=NOW) == expected


def test_site_name_and_icon_come_from_the_url() -> None:
    assert site_name("https://www.example.com/a/b") == "example.com"
    assert site_icon("https://www.example.com/a/b") == "https://www.example.com/favicon.ico"
    assert site_icon("http://127.0.0.1:8080/x") == "http://127.0.0.1:8080/favicon.ico"
    assert site_icon("ftp://example.com/") is None


def test_sources_and_pages_carry_their_display_fields(
    upstream: ScriptedUpstream, webreach_url: str, fetcher: ScriptedFetch
) -> None:
    page = "https://news.example/story"
    html = (
        '<html><head><title>Story</title><meta property="article:published_time" '
        'content="2026-01-02T03:04:05+01:00"></head><body><article><p>'
        + "A long enough story about the weather in the mountains this week. " * 5
        + "</p></article></body></html>"
    )
    fetcher.pages[page] = FetchResult(page, 200, HtmlBody(html), False)
    upstream.queue(
        Step(calls=[Call("web_search", {"queries": ["weather"]})]),
        Step(calls=[Call("read_link", {"url": page})]),
        Step(content="Sunny."),
    )
    reply = openai_client(webreach_url).chat.completions.create(
        model="m",
        messages=[{"role": "user", "content": f"Weather, and read {page}"}],
        tools=[{"type": "deepseek_web_search"}, {"type": "deepseek_read_url"}],  # type: ignore[list-item]
    )
    steps: list[dict[str, Any]] = reply.choices[0].message.model_extra["server_tool_calls"]
    search, read = (step["calls"][0] for step in steps)
    first = search["sources"][0]
    assert first["site_name"] == "weather.example"
    assert first["site_icon"] == "https://weather.example/favicon.ico"
    assert read["page"] == {
        "url": page,
        "title": "Story",
        "published_at": "2026-01-02T02:04:05Z",
    }
