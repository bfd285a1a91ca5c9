"""Kimi against a local server that replays answers shaped like the Kimi Code search API (the
``search_results`` items kimi-cli's ``SearchWeb`` tool reads)."""

from __future__ import annotations

import httpx
import pytest

from provider_failure_cases import FAILURES, check_failure
from replay_server import ReplayServer, Reply
from webreach.config import build_runtime
from webreach.providers.search.kimi import PROVIDER, KimiSearchProvider, KimiSettings
from webreach.providers.spec import ProviderContext
from webreach.seam import SearchRequest, SharedCredential, WebError

CANARY = "sk-kimi-canary-key-7d21c9"
PATH = "/coding/v1/search"
VARIABLES = (
    "MOONSHOT_SEARCH_API_KEY",
    "KIMI_SEARCH_API_KEY",
    "KIMI_API_KEY",
    "MOONSHOT_API_KEY",
    "MOONSHOT_SEARCH_BASE_URL",
    "KIMI_SEARCH_BASE_URL",
    "KIMI_BASE_URL",
)

KIMI_RESPONSE = {
    "search_results": [
        {
            "site_name": "Python documentation",
            "title": "What's New In Python 3.13",
            "url": "https://docs.python.org/3/whatsnew/3.13.html",
            "snippet": "Python 3.13 is the latest stable release of the Python programming"
            " language, with a mix of changes to the language, the implementation and the"
            " standard library.",
            "content": "",
            "date": "2024-10-07",
            "icon": "https://docs.python.org/favicon.ico",
            "mime": "text/html",
        },
        {
            "site_name": "Python.org",
            "title": "Python Release Python 3.13.0 | Python.org",
            "url": "https://www.python.org/downloads/release/python-3130/",
            "snippet": "",
            "content": "Python 3.13.0 is the newest major release of the Python language.",
            "date": "",
            "icon": "",
            "mime": "",
        },
        {
            "site_name": "PEPs",
            "title": "",
            "url": "https://peps.python.org/pep-0719/",
            "snippet": "PEP 719 &ndash; Python 3.13 Release Schedule",
        },
        {"site_name": "no url", "title": "dropped", "url": "", "snippet": "x"},
    ]
}


def kimi(replay: ReplayServer, client: httpx.AsyncClient) -> KimiSearchProvider:
    return KimiSearchProvider(api_key=CANARY, base_url=replay.url + PATH, client=client)


async def test_request_shape(replay: ReplayServer, client: httpx.AsyncClient) -> None:
    replay.route("POST", PATH, Reply(json=KIMI_RESPONSE))
    await kimi(replay, client).search(SearchRequest("when was python 3.13 released", 5))

    sent = replay.requests[0]
    assert (sent.method, sent.path, sent.query) == ("POST", PATH, {})
    assert sent.headers["authorization"] == f"Bearer {CANARY}"
    assert sent.headers["content-type"] == "application/json"
    assert sent.json() == {
        "text_query": "when was python 3.13 released",
        "limit": 5,
        "enable_page_crawling": False,
        "timeout_seconds": 30,
    }


@pytest.mark.parametrize(
    ("request_", "limit"),
    [
        pytest.param(SearchRequest("q"), 10, id="default"),
        pytest.param(SearchRequest("q", max_results=40), 20, id="capped"),
        pytest.param(SearchRequest("q", max_results=1), 1, id="one"),
        pytest.param(SearchRequest("q", max_results=3, num_search_results=15), 15, id="breadth"),
    ],
)
async def test_the_limit_is_the_breadth_within_1_to_20(
    replay: ReplayServer, client: httpx.AsyncClient, request_: SearchRequest, limit: int
) -> None:
    replay.route("POST", PATH, Reply(json={"search_results": []}))
    result = await kimi(replay, client).search(request_)
    assert replay.requests[0].json()["limit"] == limit
    assert result.sources == ()


async def test_mapping(replay: ReplayServer, client: httpx.AsyncClient) -> None:
    replay.route("POST", PATH, Reply(json=KIMI_RESPONSE))
    result = await kimi(replay, client).search(SearchRequest("q"))

    first, second, third = result.sources
    assert first.url == "https://docs.python.org/3/whatsnew/3.13.html"
    assert first.title == "What's New In Python 3.13"
    assert first.snippet is not None
    assert first.snippet.startswith("Python 3.13 is the latest stable release")
    assert first.published_at == "2024-10-07"
    # No snippet: the crawled content stands in; an empty date is no date.
    assert second.snippet == "Python 3.13.0 is the newest major release of the Python language."
    assert second.published_at is None
    assert (third.title, third.snippet, third.published_at) == (
        None,
        "PEP 719 – Python 3.13 Release Schedule",
        None,
    )
    assert (result.content, result.citations, result.related, result.queries) == (
        None,
        (),
        (),
        (),
    )


async def test_more_results_than_asked_are_cut(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    replay.route("POST", PATH, Reply(json=KIMI_RESPONSE))
    result = await kimi(replay, client).search(SearchRequest("q", max_results=2))
    assert [s.url for s in result.sources] == [
        "https://docs.python.org/3/whatsnew/3.13.html",
        "https://www.python.org/downloads/release/python-3130/",
    ]


@pytest.mark.parametrize(("reply", "expected"), FAILURES)
async def test_failures_are_provider_errors_naming_kimi(
    replay: ReplayServer, client: httpx.AsyncClient, reply: Reply, expected: str
) -> None:
    replay.route("POST", PATH, reply)
    with pytest.raises(WebError) as caught:
        await kimi(replay, client).search(SearchRequest("q"))
    check_failure(caught.value, "kimi", reply, expected)


async def test_the_key_never_reaches_errors_or_repr(
    replay: ReplayServer, client: httpx.AsyncClient
) -> None:
    echo = {"error": {"message": f"invalid key {CANARY}"}}
    provider = kimi(replay, client)
    for status in (401, 429, 500):
        replay.route("POST", PATH, Reply(status, json=echo))
        with pytest.raises(WebError) as caught:
            await provider.search(SearchRequest("q"))
        assert CANARY not in caught.value.message + repr(caught.value) + str(caught.value)
    assert CANARY not in repr(provider)
    assert replay.url + PATH in repr(provider)


def test_available_only_with_a_key(client: httpx.AsyncClient) -> None:
    assert KimiSearchProvider(api_key=CANARY, client=client).available()
    assert not KimiSearchProvider(api_key=None, client=client).available()
    assert not KimiSearchProvider(api_key="", client=client).available()


def test_settings_read_every_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in VARIABLES:
        value = f"https://{name.lower()}.example" if "URL" in name else f"{name}-value"
        monkeypatch.setenv(name, value)
    settings = KimiSettings()
    paced = {"kimi_requests_per_second"}
    assert set(KimiSettings.model_fields) == {name.lower() for name in VARIABLES} | paced
    for name in VARIABLES:
        value = getattr(settings, name.lower())
        shown = value if isinstance(value, str) else value.get_secret_value()
        assert shown == (f"https://{name.lower()}.example" if "URL" in name else f"{name}-value")
    assert "KIMI_API_KEY-value" not in repr(settings) + str(settings.model_dump())


def _built(client: httpx.AsyncClient) -> KimiSearchProvider:
    context = ProviderContext(
        client=client,
        model_client=client,
        search_timeout=5,
        proxy=None,
        fetch_timeout=5,
        fetch_max_bytes=1024,
        fetch_allow=None,
    )
    provider = PROVIDER.create(KimiSettings(), context)
    assert isinstance(provider, KimiSearchProvider)
    return provider


@pytest.mark.parametrize(
    ("keys", "wins", "shared"),
    [
        pytest.param(VARIABLES[:4], "MOONSHOT_SEARCH_API_KEY", False, id="all"),
        pytest.param(VARIABLES[1:4], "KIMI_SEARCH_API_KEY", False, id="kimi-search"),
        pytest.param(VARIABLES[2:4], "KIMI_API_KEY", True, id="kimi"),
        pytest.param(VARIABLES[3:4], "MOONSHOT_API_KEY", True, id="moonshot"),
        pytest.param(("MOONSHOT_API_KEY", "KIMI_SEARCH_API_KEY"), "KIMI_SEARCH_API_KEY", False),
    ],
)
async def test_the_key_order_and_the_shared_model_keys(
    replay: ReplayServer,
    client: httpx.AsyncClient,
    monkeypatch: pytest.MonkeyPatch,
    keys: tuple[str, ...],
    wins: str,
    shared: bool,
) -> None:
    for name in keys:
        monkeypatch.setenv(name, f"{name}-key")
    monkeypatch.setenv("MOONSHOT_SEARCH_BASE_URL", replay.url + PATH)
    replay.route("POST", PATH, Reply(json={"search_results": []}))
    provider = _built(client)
    await provider.search(SearchRequest("q"))
    assert replay.requests[0].headers["authorization"] == f"Bearer {wins}-key"
    assert isinstance(provider, SharedCredential)
    assert provider.shared_credential() is shared


async def test_no_key_is_unavailable_and_not_shared(client: httpx.AsyncClient) -> None:
    provider = _built(client)
    assert not provider.available()
    assert not provider.shared_credential()


@pytest.mark.parametrize(
    ("urls", "endpoint"),
    [
        pytest.param({}, "https://api.kimi.com/coding/v1/search", id="default"),
        pytest.param(
            {"KIMI_BASE_URL": "https://kimi.example/coding/v1/"},
            "https://kimi.example/coding/v1/search",
            id="kimi-base",
        ),
        pytest.param(
            {
                "KIMI_BASE_URL": "https://kimi.example/coding/v1",
                "KIMI_SEARCH_BASE_URL": "https://search.example/v1/search",
            },
            "https://search.example/v1/search",
            id="kimi-search",
        ),
        pytest.param(
            {
                "KIMI_SEARCH_BASE_URL": "https://search.example/v1/search",
                "MOONSHOT_SEARCH_BASE_URL": "https://moonshot.example/search",
            },
            "https://moonshot.example/search",
            id="moonshot-search",
        ),
    ],
)
async def test_the_endpoint_settings(
    client: httpx.AsyncClient,
    monkeypatch: pytest.MonkeyPatch,
    urls: dict[str, str],
    endpoint: str,
) -> None:
    for name, value in urls.items():
        monkeypatch.setenv(name, value)
    assert repr(_built(client)) == f"KimiSearchProvider(base_url={endpoint!r})"


async def test_the_runtime_builds_it_from_the_environment(
    replay: ReplayServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    replay.route("POST", PATH, Reply(json=KIMI_RESPONSE))
    monkeypatch.setenv("WEBREACH_SEARCH_PROVIDER", "kimi")
    monkeypatch.setenv("KIMI_SEARCH_API_KEY", CANARY)
    monkeypatch.setenv("KIMI_SEARCH_BASE_URL", replay.url + PATH)
    async with build_runtime() as runtime:
        result = await runtime.search(SearchRequest("python 3.13", max_results=3))
    assert result.provider == "kimi"
    assert [s.url for s in result.sources][:1] == ["https://docs.python.org/3/whatsnew/3.13.html"]
    assert replay.requests[0].headers["authorization"] == f"Bearer {CANARY}"
