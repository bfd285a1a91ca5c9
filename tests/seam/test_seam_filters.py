"""The seam's side of search filters: what a provider declares it passes, what the seam applies
after it (domains by host, recency by date), how many results it asks for, what the result
records, the cache, and how ``SearchRequest`` checks and normalises the filters."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import pytest

from webreach.seam import (
    InvalidValueError,
    SearchFilter,
    SearchRequest,
    SearchResult,
    SearchSource,
    WebRuntime,
)
from webreach.seam.filters import apply_after, published
from webreach.testing import ScriptedSearch

Q = "python asyncio"
NOW = datetime(2026, 6, 15, 12, 0, tzinfo=UTC)


class DictCache:
    """An in-memory ``CacheStore``."""

    def __init__(self) -> None:
        self.data: dict[str, bytes] = {}

    async def get(self, key: str) -> bytes | None:
        return self.data.get(key)

    async def set(self, key: str, value: bytes, ttl: float) -> None:
        self.data[key] = value

    async def aclose(self) -> None:
        pass


def scripted(
    *sources: SearchSource, filters: frozenset[SearchFilter] | None = None, **extra: Any
) -> ScriptedSearch:
    provider = ScriptedSearch(answers={Q: SearchResult(sources=sources, **extra)})
    if filters is not None:
        provider.filters = filters  # type: ignore[attr-defined]
    return provider


async def search(provider: ScriptedSearch, request: SearchRequest, **runtime: Any) -> SearchResult:
    async with WebRuntime(search_provider="scripted", **runtime) as web:
        web.register_search_provider(provider)
        return await web.search(request)


SITES = (
    SearchSource("https://python.org/about/"),
    SearchSource("https://docs.python.org/3/library/asyncio.html"),
    SearchSource("https://notpython.org/asyncio"),
    SearchSource("https://example.com/python"),
    SearchSource("https://sub.example.com/python"),
)


# --- domains ----------------------------------------------------------------------------------


async def test_included_domains_match_the_host_and_its_subdomains() -> None:
    result = await search(scripted(*SITES), SearchRequest(Q, include_domains=("python.org",)))
    assert [s.url for s in result.sources] == [
        "https://python.org/about/",
        "https://docs.python.org/3/library/asyncio.html",
    ]
    assert result.filtered_after == {"include_domains"}
    assert result.filtered_by_provider == frozenset()
    assert result.unfiltered == frozenset()


async def test_excluded_domains_drop_the_host_and_its_subdomains() -> None:
    result = await search(scripted(*SITES), SearchRequest(Q, exclude_domains=("example.com",)))
    assert [s.url for s in result.sources] == [s.url for s in SITES[:3]]
    assert result.filtered_after == {"exclude_domains"}


async def test_a_provider_that_declares_domains_is_trusted_with_them() -> None:
    provider = scripted(*SITES, filters=frozenset({"include_domains"}))
    result = await search(
        provider, SearchRequest(Q, max_results=5, include_domains=("python.org",))
    )
    assert len(result.sources) == 5
    assert result.filtered_by_provider == {"include_domains"}
    assert result.filtered_after == frozenset()
    assert provider.calls[0].max_results == 5


# --- how many results are asked for ------------------------------------------------------------


@pytest.mark.parametrize(("wanted", "asked"), [(5, 20), (20, 50), (None, 40)])
async def test_filtering_after_asks_for_four_times_the_results_capped_at_50(
    wanted: int | None, asked: int
) -> None:
    provider = scripted(*SITES)
    await search(provider, SearchRequest(Q, max_results=wanted, recency="week"))
    assert provider.calls[0].max_results == asked


async def test_the_cut_to_max_results_comes_after_the_filter() -> None:
    many = tuple(SearchSource(f"https://site{i}.example/") for i in range(30))
    hits = (SearchSource("https://a.python.org/"), SearchSource("https://b.python.org/"))
    result = await search(
        scripted(*many, *hits), SearchRequest(Q, max_results=2, include_domains=("python.org",))
    )
    assert [s.url for s in result.sources] == [s.url for s in hits]


@pytest.mark.parametrize(
    "filters",
    [{}, {"country": "DE"}, {"language": "de"}],
    ids=["none", "country", "language"],
)
async def test_no_overfetch_when_nothing_is_filtered_after(filters: dict[str, str]) -> None:
    provider = scripted(*SITES)
    result = await search(provider, SearchRequest(Q, max_results=5, **filters))
    assert provider.calls[0].max_results == 5
    assert result.unfiltered == set(filters)
    assert result.filtered_after == frozenset()


async def test_no_overfetch_when_the_provider_takes_every_filter_asked() -> None:
    provider = scripted(*SITES, filters=frozenset({"recency", "exclude_domains"}))
    await search(provider, SearchRequest(Q, max_results=5, recency="day", exclude_domains=("x.y",)))
    assert provider.calls[0].max_results == 5


# --- recency ----------------------------------------------------------------------------------


def dated(published_at: str | None, name: str) -> SearchSource:
    return SearchSource(f"https://{name}.example/", published_at=published_at)


def test_recency_reads_iso_rfc2822_and_date_prefixes_and_keeps_the_undated() -> None:
    sources = (
        dated((NOW - timedelta(days=2)).isoformat(), "iso-recent"),
        dated("2026-06-01T08:00:00Z", "iso-old"),
        dated(format_datetime(NOW - timedelta(hours=30)), "rfc2822-recent"),
        dated("Mon, 01 Jun 2026 08:00:00 GMT", "rfc2822-old"),
        dated("2026-06-13 (updated)", "prefix-recent"),
        dated("2026-05-02, a Saturday", "prefix-old"),
        dated(None, "undated"),
        dated("3 weeks ago", "age-old"),
        dated("last Tuesday", "unreadable"),
    )
    request = SearchRequest(Q, recency="week")
    result = apply_after(SearchResult(sources=sources), request, frozenset(), now=NOW)
    assert [s.url.split("//")[1].split(".")[0] for s in result.sources] == [
        "iso-recent",
        "rfc2822-recent",
        "prefix-recent",
        "undated",
        "unreadable",
    ]
    assert result.filtered_after == {"recency"}


@pytest.mark.parametrize(
    ("recency", "age", "kept"),
    [
        ("day", timedelta(hours=23), True),
        ("day", timedelta(hours=25), False),
        ("month", timedelta(days=30), True),
        ("month", timedelta(days=40), False),
        ("year", timedelta(days=360), True),
        ("year", timedelta(days=400), False),
    ],
)
def test_recency_windows(recency: Any, age: timedelta, kept: bool) -> None:
    source = dated((NOW - age).isoformat(), "s")
    result = apply_after(
        SearchResult(sources=(source,)), SearchRequest(Q, recency=recency), frozenset(), now=NOW
    )
    assert bool(result.sources) is kept


@pytest.mark.parametrize("text", ["2024-13-45", "2024-02-30T10:00:00", "9999-99-99 x", ""])
def test_a_date_that_does_not_exist_counts_as_undated(text: str) -> None:
    assert published(text) is None


async def test_recency_through_the_runtime_against_todays_date() -> None:
    recent = dated((datetime.now(UTC) - timedelta(days=1)).isoformat(), "recent")
    old = dated("2001-01-01", "old")
    result = await search(scripted(recent, old), SearchRequest(Q, recency="week"))
    assert result.sources == (recent,)


# --- what a provider says it could not pass ---------------------------------------------------


async def test_a_declared_filter_the_provider_could_not_pass_is_recorded_unfiltered() -> None:
    provider = scripted(
        *SITES, filters=frozenset({"country", "language"}), unfiltered=frozenset({"country"})
    )
    result = await search(provider, SearchRequest(Q, country="AQ", language="en"))
    assert result.filtered_by_provider == {"language"}
    assert result.unfiltered == {"country"}


async def test_a_declared_domain_filter_the_provider_could_not_pass_is_applied_after() -> None:
    provider = scripted(
        *SITES, filters=frozenset({"include_domains"}), unfiltered=frozenset({"include_domains"})
    )
    result = await search(provider, SearchRequest(Q, include_domains=("example.com",)))
    assert [s.url for s in result.sources] == [s.url for s in SITES[3:]]
    assert result.filtered_after == {"include_domains"}


# --- the cache --------------------------------------------------------------------------------


async def test_filtered_and_unfiltered_searches_are_cached_apart() -> None:
    provider = scripted(*SITES)
    cache = DictCache()
    async with WebRuntime(search_provider="scripted", cache=cache) as web:
        web.register_search_provider(provider)
        plain = await web.search(SearchRequest(Q))
        narrow = await web.search(SearchRequest(Q, include_domains=("python.org",)))
        other = await web.search(SearchRequest(Q, include_domains=("example.com",)))
        again = await web.search(SearchRequest(Q, include_domains=("python.org",)))
        plain_again = await web.search(SearchRequest(Q))
    assert len(provider.calls) == 3
    assert len(plain.sources) == len(plain_again.sources) == 5
    assert narrow == again and len(narrow.sources) == 2
    assert len(other.sources) == 2


async def test_what_the_provider_could_not_pass_survives_the_cache() -> None:
    provider = scripted(*SITES, filters=frozenset({"country"}), unfiltered=frozenset({"country"}))
    async with WebRuntime(search_provider="scripted", cache=DictCache()) as web:
        web.register_search_provider(provider)
        first = await web.search(SearchRequest(Q, country="AQ"))
        second = await web.search(SearchRequest(Q, country="AQ"))
    assert len(provider.calls) == 1
    assert first.unfiltered == second.unfiltered == {"country"}


# --- SearchRequest checks and normalises ------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "name"),
    [
        ({"recency": "fortnight"}, "recency"),
        ({"recency": ""}, "recency"),
        ({"include_domains": ("",)}, "include_domains"),
        ({"include_domains": ("  ",)}, "include_domains"),
        ({"exclude_domains": ("https://",)}, "exclude_domains"),
        ({"include_domains": ("user@example.com",)}, "include_domains"),
        ({"include_domains": ("example.com?x=1",)}, "include_domains"),
        ({"include_domains": ("a..b",)}, "include_domains"),
        ({"include_domains": 7}, "include_domains"),
        ({"country": "DEU"}, "country"),
        ({"country": "D1"}, "country"),
        ({"country": ""}, "country"),
        ({"language": "deu"}, "language"),
        ({"language": "de-DE"}, "language"),
    ],
)
def test_bad_filters_are_refused_naming_the_field(fields: dict[str, Any], name: str) -> None:
    with pytest.raises(InvalidValueError) as caught:
        SearchRequest(Q, **fields)
    assert caught.value.field == name


def test_good_filters_are_normalised() -> None:
    request = SearchRequest(
        Q,
        recency=" Week ",  # type: ignore[arg-type]
        include_domains=(
            "Python.ORG",
            "https://www.Example.com:443/path?q=1",
            "*.docs.rs",
            "python.org.",
        ),
        exclude_domains="spam.example",  # type: ignore[arg-type]
        country=" de ",
        language="DE",
    )
    assert request.recency == "week"
    assert request.include_domains == ("python.org", "www.example.com", "docs.rs")
    assert request.exclude_domains == ("spam.example",)
    assert (request.country, request.language) == ("DE", "de")
    assert request.filters() == {
        "recency",
        "include_domains",
        "exclude_domains",
        "country",
        "language",
    }


def test_an_unfiltered_request_sets_no_filter() -> None:
    request = SearchRequest(Q)
    assert request.filters() == frozenset()
    assert dataclasses.replace(request, max_results=3).filters() == frozenset()
