"""Dates as real providers send them, read once in the seam: by the recency filter and by the
server's display fields alike; what cannot be read stays undated."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from replay_server import ReplayServer, Reply
from webreach.net import create_client
from webreach.providers.search.jina import JinaSearchProvider
from webreach.seam import SearchRequest, SearchResult, SearchSource, WebRuntime
from webreach.seam.dates import parse_date
from webreach.seam.filters import apply_after
from webreach.server.core.wire.display import published as display_date

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # ages (Brave's ``age``, Google-style snippets)
        ("6 days ago", NOW - timedelta(days=6)),
        ("3 weeks ago", NOW - timedelta(weeks=3)),
        ("1 hour ago", NOW - timedelta(hours=1)),
        ("an hour ago", NOW - timedelta(hours=1)),
        ("14 minutes ago", NOW - timedelta(minutes=14)),
        ("5h ago", NOW - timedelta(hours=5)),
        ("2 mins ago", NOW - timedelta(minutes=2)),
        ("2 months ago", NOW - timedelta(days=60)),
        ("2 years ago", NOW - timedelta(days=730)),
        ("yesterday", NOW - timedelta(days=1)),
        ("3天前", NOW - timedelta(days=3)),
        ("6日前", NOW - timedelta(days=6)),
        ("2時間前", NOW - timedelta(hours=2)),
        ("3 일 전", NOW - timedelta(days=3)),
        # English month names
        ("December 21, 2015", datetime(2015, 12, 21, tzinfo=UTC)),
        ("June 30, 2025", datetime(2025, 6, 30, tzinfo=UTC)),
        ("Oct 7, 2024", datetime(2024, 10, 7, tzinfo=UTC)),
        ("Dec. 21, 2015", datetime(2015, 12, 21, tzinfo=UTC)),
        ("Sept 3, 2024", datetime(2024, 9, 3, tzinfo=UTC)),
        ("21 December 2015", datetime(2015, 12, 21, tzinfo=UTC)),
        ("Monday, December 21, 2015", datetime(2015, 12, 21, tzinfo=UTC)),
        ("Oct 7, 2024, 3:30 PM", datetime(2024, 10, 7, 15, 30, tzinfo=UTC)),
        ("December 2015", datetime(2015, 12, 1, tzinfo=UTC)),
        # CJK
        ("2025年3月28日", datetime(2025, 3, 28, tzinfo=UTC)),
        ("2025年3月28日 14:30", datetime(2025, 3, 28, 14, 30, tzinfo=UTC)),
        ("2025년 3월 28일", datetime(2025, 3, 28, tzinfo=UTC)),
        # RFC 2822 and ISO 8601
        ("Tue, 14 Oct 2025 08:00:00 GMT", datetime(2025, 10, 14, 8, tzinfo=UTC)),
        ("Tue, 14 Oct 2025 10:00:00 +0200", datetime(2025, 10, 14, 8, tzinfo=UTC)),
        ("2024-10-07T00:00:00", datetime(2024, 10, 7, tzinfo=UTC)),
        ("2025-03-28T10:00:00Z", datetime(2025, 3, 28, 10, tzinfo=UTC)),
        ("2025-03-28", datetime(2025, 3, 28, tzinfo=UTC)),
        ("2015/12/21", datetime(2015, 12, 21, tzinfo=UTC)),
        ("21.12.2015", datetime(2015, 12, 21, tzinfo=UTC)),
    ],
)
def test_provider_dates_are_read(text: str, expected: datetime) -> None:
    assert parse_date(text, NOW) == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "garbage words",
        "last Tuesday",
        "12/05/2024",  # May or December, depending on the reader
        "February 30, 2024",
        "Smarch 3, 2024",
        "2024-13-45",
        "99999999999 years ago",
        "6 days",
        "2019",
        "May 2025 news",
        "x" * 1000,
    ],
)
def test_what_cannot_be_read_stays_undated(text: str) -> None:
    assert parse_date(text, NOW) is None


def test_a_week_drops_a_2015_source_and_keeps_this_weeks() -> None:
    old = SearchSource("https://a.example/old", published_at="December 21, 2015")
    fresh = SearchSource("https://a.example/fresh", published_at="6 days ago")
    cjk = SearchSource("https://a.example/cjk", published_at="2026年11月30日")
    undated = SearchSource("https://a.example/undated", published_at="sometime")
    result = apply_after(
        SearchResult(sources=(old, fresh, cjk, undated)),
        SearchRequest("q", recency="week"),
        frozenset(),
        now=NOW,
    )
    assert result.sources == (fresh, cjk, undated)


async def test_recency_week_through_a_provider_that_sends_written_dates(
    replay: ReplayServer,
) -> None:
    """Jina takes no recency filter, so the seam applies it to the dates Jina writes out."""
    today = datetime.now(UTC)
    recent = (today - timedelta(days=2)).strftime("%b %d, %Y").replace(" 0", " ")
    replay.route(
        "GET",
        "/",
        Reply(
            json={
                "code": 200,
                "data": [
                    {"url": "https://old.example/2015", "title": "Old", "date": "Dec 21, 2015"},
                    {"url": "https://new.example/now", "title": "New", "date": recent},
                ],
            }
        ),
    )
    async with create_client(timeout=5) as client, WebRuntime(search_provider="jina") as web:
        web.register_search_provider(
            JinaSearchProvider(api_key="jina-dates-canary", base_url=replay.url, client=client)
        )
        result = await web.search(SearchRequest("news", recency="week"))
    assert [s.url for s in result.sources] == ["https://new.example/now"]
    assert "recency" in result.filtered_after


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2025年3月28日", "2025-03-28T00:00:00Z"),
        ("December 21, 2015", "2015-12-21T00:00:00Z"),
        ("6 days ago", "2026-11-26T12:00:00Z"),
        ("12/05/2024", None),
    ],
)
def test_the_server_shows_the_date_the_seam_read(text: str, expected: str | None) -> None:
    assert display_date(text, now=NOW.timestamp()) == expected
