"""Each search provider sends the request filters its API takes, in its own terms, against a
local replay server (DuckDuckGo: at the ``ddgs`` boundary); without filters the request is byte
for byte what it was before filters existed."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from replay_server import Recorded, ReplayServer, Reply
from webreach.providers.search.brave import BraveSearchProvider
from webreach.providers.search.deepseek import DeepSeekSearchProvider
from webreach.providers.search.duckduckgo import DuckDuckGoSearchProvider
from webreach.providers.search.exa import ExaSearchProvider
from webreach.providers.search.jina import JinaSearchProvider
from webreach.providers.search.kagi import KagiSearchProvider
from webreach.providers.search.perplexity import PerplexitySearchProvider
from webreach.providers.search.searxng import SearxngSearchProvider
from webreach.providers.search.tavily import TavilySearchProvider
from webreach.seam import SearchRequest, SearchResult

KEY = "filters-canary-key"
Q = "python 3.13"

FILTERS: dict[str, dict[str, Any]] = {
    "recency": {"recency": "week"},
    "include": {"include_domains": ("python.org", "docs.python.org")},
    "exclude": {"exclude_domains": ("example.com",)},
    "country": {"country": "DE"},
    "language": {"language": "de"},
    "country+language": {"country": "AT", "language": "de"},
}


def body_bytes(data: Any) -> bytes:
    """A JSON body as httpx sends it."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


async def sent(
    replay: ReplayServer,
    method: str,
    path: str,
    reply: Any,
    provider: Any,
    request: SearchRequest,
) -> tuple[Recorded, SearchResult]:
    replay.route(method, path, Reply(json=reply))
    result = await provider.search(request)
    return replay.requests[-1], result


# --- Brave ------------------------------------------------------------------------------------

BRAVE = {"type": "search", "web": {"results": []}}


@pytest.mark.parametrize(
    ("name", "query", "unfiltered"),
    [
        ("recency", {"q": [Q], "freshness": ["pw"]}, set()),
        ("include", {"q": [Q + " site:python.org OR site:docs.python.org"]}, set()),
        ("exclude", {"q": [Q + " -site:example.com"]}, set()),
        ("country", {"q": [Q], "country": ["DE"]}, set()),
        ("language", {"q": [Q], "search_lang": ["de"]}, set()),
        ("country+language", {"q": [Q], "country": ["AT"], "search_lang": ["de"]}, set()),
    ],
)
async def test_brave_filters(
    replay: ReplayServer,
    client: httpx.AsyncClient,
    name: str,
    query: dict[str, list[str]],
    unfiltered: set[str],
) -> None:
    provider = BraveSearchProvider(api_key=KEY, base_url=replay.url, client=client)
    request = SearchRequest(Q, **FILTERS[name])
    recorded, result = await sent(replay, "GET", "/res/v1/web/search", BRAVE, provider, request)
    assert recorded.query == query
    assert result.unfiltered == unfiltered
    assert provider.filters == {"recency", "country", "language"}


@pytest.mark.parametrize(
    ("given", "sent_lang"),
    [
        ({"language": "ja"}, {"search_lang": ["jp"]}),
        ({"language": "zh", "country": "TW"}, {"search_lang": ["zh-hant"], "country": ["TW"]}),
        ({"language": "pt", "country": "BR"}, {"search_lang": ["pt-br"], "country": ["BR"]}),
    ],
)
async def test_brave_spells_languages_its_own_way(
    replay: ReplayServer,
    client: httpx.AsyncClient,
    given: dict[str, str],
    sent_lang: dict[str, list[str]],
) -> None:
    provider = BraveSearchProvider(api_key=KEY, base_url=replay.url, client=client)
    recorded, _ = await sent(
        replay, "GET", "/res/v1/web/search", BRAVE, provider, SearchRequest(Q, **given)
    )
    assert recorded.query == {"q": [Q], **sent_lang}


async def test_brave_leaves_out_a_country_it_has_no_code_for_and_says_so(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    provider = BraveSearchProvider(api_key=KEY, base_url=replay.url, client=client)
    recorded, result = await sent(
        replay, "GET", "/res/v1/web/search", BRAVE, provider, SearchRequest(Q, country="KE")
    )
    assert recorded.query == {"q": [Q]}
    assert result.unfiltered == {"country"}


async def test_brave_without_filters_sends_what_it_sent_before(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    provider = BraveSearchProvider(api_key=KEY, base_url=replay.url, client=client)
    recorded, _ = await sent(
        replay, "GET", "/res/v1/web/search", BRAVE, provider, SearchRequest(Q, max_results=5)
    )
    assert recorded.raw_query == "q=python+3.13&count=5"


# --- Exa --------------------------------------------------------------------------------------

EXA_BASE = {
    "query": Q,
    "type": "auto",
    "contents": {"highlights": {"maxCharacters": 1000}},
}


@pytest.mark.parametrize(
    ("name", "extra"),
    [
        ("include", {"includeDomains": ["python.org", "docs.python.org"]}),
        ("exclude", {"excludeDomains": ["example.com"]}),
        ("country", {"userLocation": "DE"}),
        ("language", {}),
    ],
)
async def test_exa_filters(
    replay: ReplayServer, client: httpx.AsyncClient, name: str, extra: dict[str, Any]
) -> None:
    provider = ExaSearchProvider(api_key=KEY, base_url=replay.url, client=client)
    recorded, _ = await sent(
        replay, "POST", "/search", {"results": []}, provider, SearchRequest(Q, **FILTERS[name])
    )
    assert recorded.json() == {**EXA_BASE, **extra}
    assert provider.filters == {"recency", "include_domains", "exclude_domains", "country"}


async def test_exa_recency_is_a_start_published_date(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    provider = ExaSearchProvider(api_key=KEY, base_url=replay.url, client=client)
    before = datetime.now(UTC)
    recorded, _ = await sent(
        replay, "POST", "/search", {"results": []}, provider, SearchRequest(Q, recency="week")
    )
    start = recorded.json()["startPublishedDate"]
    assert start.endswith(".000Z")
    moment = datetime.fromisoformat(start.replace("Z", "+00:00"))
    assert abs(moment - (before - timedelta(days=7))) < timedelta(minutes=5)


async def test_exa_without_filters_sends_what_it_sent_before(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    provider = ExaSearchProvider(api_key=KEY, base_url=replay.url, client=client)
    recorded, _ = await sent(
        replay, "POST", "/search", {"results": []}, provider, SearchRequest(Q, max_results=3)
    )
    assert recorded.body == body_bytes({**EXA_BASE, "numResults": 3})


# --- Tavily -----------------------------------------------------------------------------------

TAVILY_BASE = {"query": Q, "include_answer": True}


@pytest.mark.parametrize(
    ("name", "extra", "unfiltered"),
    [
        ("recency", {"time_range": "week"}, set()),
        ("include", {"include_domains": ["python.org", "docs.python.org"]}, set()),
        ("exclude", {"exclude_domains": ["example.com"]}, set()),
        ("country", {"country": "germany"}, set()),
        ("language", {}, set()),
        ("country+language", {"country": "austria"}, set()),
    ],
)
async def test_tavily_filters(
    replay: ReplayServer,
    client: httpx.AsyncClient,
    name: str,
    extra: dict[str, Any],
    unfiltered: set[str],
) -> None:
    provider = TavilySearchProvider(api_key=KEY, base_url=replay.url, client=client)
    recorded, result = await sent(
        replay, "POST", "/search", {"results": []}, provider, SearchRequest(Q, **FILTERS[name])
    )
    assert recorded.json() == {**TAVILY_BASE, **extra}
    assert result.unfiltered == unfiltered
    assert provider.filters == {"recency", "include_domains", "exclude_domains", "country"}


async def test_tavily_leaves_out_a_country_it_has_no_name_for_and_says_so(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    provider = TavilySearchProvider(api_key=KEY, base_url=replay.url, client=client)
    recorded, result = await sent(
        replay, "POST", "/search", {"results": []}, provider, SearchRequest(Q, country="AQ")
    )
    assert recorded.json() == TAVILY_BASE
    assert result.unfiltered == {"country"}


async def test_tavily_without_filters_sends_what_it_sent_before(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    provider = TavilySearchProvider(api_key=KEY, base_url=replay.url, client=client)
    recorded, _ = await sent(
        replay, "POST", "/search", {"results": []}, provider, SearchRequest(Q, max_results=4)
    )
    assert recorded.body == body_bytes({**TAVILY_BASE, "max_results": 4})


# --- Perplexity -------------------------------------------------------------------------------

PPLX_BASE = {
    "model": "sonar",
    "messages": [{"role": "user", "content": Q}],
    "search_mode": "web",
    "return_related_questions": True,
}


def pplx_reply(*urls: str) -> dict[str, Any]:
    return {
        "choices": [{"message": {"role": "assistant", "content": "answer"}}],
        "search_results": [{"url": url, "title": url} for url in urls],
    }


@pytest.mark.parametrize(
    ("name", "extra"),
    [
        ("recency", {"search_recency_filter": "week"}),
        ("include", {"search_domain_filter": ["python.org", "docs.python.org"]}),
        ("exclude", {"search_domain_filter": ["-example.com"]}),
        ("country", {"web_search_options": {"user_location": {"country": "DE"}}}),
        ("language", {"search_language_filter": ["de"]}),
        (
            "country+language",
            {
                "search_language_filter": ["de"],
                "web_search_options": {"user_location": {"country": "AT"}},
            },
        ),
    ],
)
async def test_perplexity_filters(
    replay: ReplayServer, client: httpx.AsyncClient, name: str, extra: dict[str, Any]
) -> None:
    provider = PerplexitySearchProvider(api_key=KEY, base_url=replay.url, client=client)
    recorded, _ = await sent(
        replay,
        "POST",
        "/chat/completions",
        pplx_reply(),
        provider,
        SearchRequest(Q, **FILTERS[name]),
    )
    assert recorded.json() == {**PPLX_BASE, **extra}
    assert provider.filters == {
        "recency",
        "include_domains",
        "exclude_domains",
        "country",
        "language",
    }


async def test_perplexity_sends_the_allow_list_and_applies_the_deny_list_itself(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    """``search_domain_filter`` is an allow list or a deny list, never both."""
    provider = PerplexitySearchProvider(api_key=KEY, base_url=replay.url, client=client)
    request = SearchRequest(
        Q, include_domains=("python.org",), exclude_domains=("wiki.python.org",)
    )
    reply = pplx_reply(
        "https://docs.python.org/3/", "https://wiki.python.org/moin/", "https://x.io"
    )
    recorded, result = await sent(replay, "POST", "/chat/completions", reply, provider, request)
    assert recorded.json()["search_domain_filter"] == ["python.org"]
    assert [s.url for s in result.sources] == ["https://docs.python.org/3/"]


async def test_perplexity_without_filters_sends_what_it_sent_before(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    provider = PerplexitySearchProvider(api_key=KEY, base_url=replay.url, client=client)
    recorded, _ = await sent(
        replay, "POST", "/chat/completions", pplx_reply(), provider, SearchRequest(Q)
    )
    assert recorded.body == body_bytes(PPLX_BASE)


# --- SearXNG ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "query", "unfiltered"),
    [
        ("recency", {"q": [Q], "format": ["json"], "time_range": ["month"]}, set()),
        (
            "include",
            {"q": [Q + " site:python.org OR site:docs.python.org"], "format": ["json"]},
            set(),
        ),
        ("exclude", {"q": [Q + " -site:example.com"], "format": ["json"]}, set()),
        ("country", {"q": [Q], "format": ["json"], "language": ["de-DE"]}, set()),
        ("language", {"q": [Q], "format": ["json"], "language": ["de"]}, set()),
        ("country+language", {"q": [Q], "format": ["json"], "language": ["de-AT"]}, set()),
    ],
)
async def test_searxng_filters(
    replay: ReplayServer,
    client: httpx.AsyncClient,
    name: str,
    query: dict[str, list[str]],
    unfiltered: set[str],
) -> None:
    provider = SearxngSearchProvider(base_url=replay.url, client=client)
    recorded, result = await sent(
        replay, "GET", "/search", {"results": []}, provider, SearchRequest(Q, **FILTERS[name])
    )
    assert recorded.query == query
    assert result.unfiltered == unfiltered
    assert provider.filters == {"country", "language"}


@pytest.mark.parametrize(("recency", "time_range"), [("day", "day"), ("year", "year")])
async def test_searxng_time_ranges(
    replay: ReplayServer, client: httpx.AsyncClient, recency: str, time_range: str
) -> None:
    provider = SearxngSearchProvider(base_url=replay.url, client=client)
    recorded, _ = await sent(
        replay,
        "GET",
        "/search",
        {"results": []},
        provider,
        SearchRequest(Q, recency=recency),  # type: ignore[arg-type]
    )
    assert recorded.query["time_range"] == [time_range]


async def test_searxng_country_without_a_known_language_is_not_sent(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    provider = SearxngSearchProvider(base_url=replay.url, client=client)
    recorded, result = await sent(
        replay, "GET", "/search", {"results": []}, provider, SearchRequest(Q, country="AQ")
    )
    assert recorded.query == {"q": [Q], "format": ["json"]}
    assert result.unfiltered == {"country"}


async def test_searxng_without_filters_sends_what_it_sent_before(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    provider = SearxngSearchProvider(base_url=replay.url, client=client)
    recorded, _ = await sent(replay, "GET", "/search", {"results": []}, provider, SearchRequest(Q))
    assert recorded.raw_query == "q=python+3.13&format=json"


# --- Jina -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "query"),
    [
        ("recency", {"q": [Q]}),
        ("include", {"q": [Q], "site": ["python.org", "docs.python.org"]}),
        ("exclude", {"q": [Q]}),
        ("country", {"q": [Q], "gl": ["de"]}),
        ("language", {"q": [Q], "hl": ["de"]}),
        ("country+language", {"q": [Q], "gl": ["at"], "hl": ["de"]}),
    ],
)
async def test_jina_filters(
    replay: ReplayServer, client: httpx.AsyncClient, name: str, query: dict[str, list[str]]
) -> None:
    provider = JinaSearchProvider(api_key=KEY, base_url=replay.url, client=client)
    recorded, _ = await sent(
        replay, "GET", "/", {"data": []}, provider, SearchRequest(Q, **FILTERS[name])
    )
    assert recorded.query == query
    assert provider.filters == {"include_domains", "country", "language"}


async def test_jina_without_filters_sends_what_it_sent_before(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    provider = JinaSearchProvider(api_key=KEY, base_url=replay.url, client=client)
    recorded, _ = await sent(replay, "GET", "/", {"data": []}, provider, SearchRequest(Q))
    assert recorded.raw_query == "q=python+3.13"


# --- Kagi: recency as filters.after, country as filters.region; the rest by the seam ---------

KAGI_BASE = {"query": Q, "workflow": "search", "limit": 10}
KAGI_NOW = datetime(2026, 5, 15, 8, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("name", "extra"),
    [
        ("recency", {"filters": {"after": "2026-05-08"}}),
        ("include", {}),
        ("exclude", {}),
        ("country", {"filters": {"region": "de"}}),
        ("language", {}),
        ("country+language", {"filters": {"region": "at"}}),
    ],
)
async def test_kagi_filters(
    replay: ReplayServer, client: httpx.AsyncClient, name: str, extra: dict[str, Any]
) -> None:
    provider = KagiSearchProvider(
        api_key=KEY, base_url=replay.url, client=client, clock=lambda: KAGI_NOW
    )
    recorded, _ = await sent(
        replay,
        "POST",
        "/api/v1/search",
        {"data": {}},
        provider,
        SearchRequest(Q, **FILTERS[name]),
    )
    assert recorded.json() == {**KAGI_BASE, **extra}
    assert provider.filters == {"recency", "country"}


# --- DeepSeek: its API takes none of the filters ---------------------------------------------


@pytest.mark.parametrize("name", list(FILTERS))
async def test_deepseek_sends_no_filter(
    replay: ReplayServer, client: httpx.AsyncClient, name: str
) -> None:
    provider = DeepSeekSearchProvider(api_key=KEY, base_url=replay.url, client=client)
    reply = {"type": "message", "content": [{"type": "text", "text": "ok"}]}
    unfiltered_request = SearchRequest(Q)
    plain, _ = await sent(
        replay, "POST", "/anthropic/v1/messages", reply, provider, unfiltered_request
    )
    filtered, _ = await sent(
        replay, "POST", "/anthropic/v1/messages", reply, provider, SearchRequest(Q, **FILTERS[name])
    )
    assert filtered.body == plain.body
    assert provider.filters == frozenset()


# --- DuckDuckGo: the arguments ddgs receives ---------------------------------------------------

Calls = list[tuple[str, int, dict[str, str]]]


def recording(calls: Calls) -> Callable[..., list[dict[str, Any]]]:
    def text_search(query: str, max_results: int, /, **options: str) -> list[dict[str, Any]]:
        calls.append((query, max_results, options))
        return [{"href": "https://docs.python.org/3/", "title": "t", "body": "b"}]

    return text_search


@pytest.mark.parametrize(
    ("name", "query", "options", "unfiltered"),
    [
        ("recency", Q, {"timelimit": "w"}, set()),
        ("include", Q + " site:python.org OR site:docs.python.org", {}, set()),
        ("exclude", Q + " -site:example.com", {}, set()),
        ("country", Q, {"region": "de-de"}, set()),
        ("language", Q, {"region": "de-de"}, set()),
        ("country+language", Q, {"region": "at-de"}, set()),
    ],
)
async def test_duckduckgo_filters(
    name: str, query: str, options: dict[str, str], unfiltered: set[str]
) -> None:
    calls: Calls = []
    provider = DuckDuckGoSearchProvider(text_search=recording(calls))
    result = await provider.search(SearchRequest(Q, max_results=3, **FILTERS[name]))
    assert calls == [(query, 3, options)]
    assert result.unfiltered == unfiltered
    assert provider.filters == {"country", "language"}


async def test_duckduckgo_region_it_cannot_build_is_not_sent() -> None:
    calls: Calls = []
    provider = DuckDuckGoSearchProvider(text_search=recording(calls))
    result = await provider.search(SearchRequest(Q, country="AQ"))
    assert calls == [(Q, 10, {})]
    assert result.unfiltered == {"country"}


async def test_duckduckgo_without_filters_calls_ddgs_as_before() -> None:
    calls: Calls = []
    provider = DuckDuckGoSearchProvider(text_search=recording(calls))
    await provider.search(SearchRequest(Q, max_results=3))
    assert calls == [(Q, 3, {})]
