"""Each protocol's own search fields reach the provider's request as filters, through the
official SDKs against the running server; a bad one is that protocol's 400, naming the field."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import anthropic
import httpx
import openai
import pytest

from providers_for_tests import ScriptedSearch
from scripted_upstream import Call, ScriptedUpstream, Step
from sdk_clients import anthropic_client, openai_client
from test_server_web_api import conforms
from webreach.seam import SearchFilter, SearchRequest, SearchResult, SearchSource
from webreach.server.chat.request import parse_chat
from webreach.server.responses.request import parse_request as parse_responses_request
from webreach.server.web_api import replies

QUESTION = "Where do I download Python?"
USER = [{"role": "user", "content": QUESTION}]
OTHERS = tuple(SearchSource(f"https://site{n}.example/python", f"Other {n}") for n in range(10))
PYTHON = (
    SearchSource("https://www.python.org/downloads/", "Download Python"),
    SearchSource("https://docs.python.org/3/using/", "Using Python"),
)


@dataclass
class Engine(ScriptedSearch):
    """An index whose best answers are on other sites: python.org comes eleventh. It honours
    ``max_results`` as a real engine does, and (``native``) takes ``include_domains`` itself."""

    native: bool = False
    filters: frozenset[SearchFilter] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        if self.native:
            self.filters = frozenset({"include_domains"})

    async def search(self, request: SearchRequest) -> SearchResult:
        await super().search(request)
        found = OTHERS + PYTHON
        if self.native and request.include_domains:
            found = PYTHON
        return SearchResult(sources=found[: request.max_results or 10])


@pytest.fixture(params=["mixed", "native"])
def search(request: pytest.FixtureRequest) -> ScriptedSearch:
    return Engine("replay", native=request.param == "native")


def chat(url: str) -> openai.OpenAI:
    return openai_client(url)


def messages_client(url: str) -> anthropic.Anthropic:
    return anthropic_client(url.removesuffix("/v1"))


def search_then_answer(upstream: ScriptedUpstream, **arguments: Any) -> None:
    upstream.queue(
        Step(calls=[Call("web_search", {"queries": ["python download"], **arguments})]),
        Step(content="From python.org."),
    )


def tool_text(upstream: ScriptedUpstream) -> str:
    """What the model read from its search (the tool message of the second upstream call)."""
    (text,) = [m["content"] for m in upstream.requests[1]["messages"] if m["role"] == "tool"]
    assert isinstance(text, str)
    return text


def found_urls(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.startswith("    https://")]


# --- Chat Completions -----------------------------------------------------------------------


def test_chat_user_location_country_reaches_the_provider(
    upstream: ScriptedUpstream, webreach_url: str, search: Engine
) -> None:
    search_then_answer(upstream)
    location = {"type": "approximate", "approximate": {"city": "Berlin", "country": "de"}}
    chat(webreach_url).chat.completions.create(
        model="m",
        messages=USER,  # type: ignore[arg-type]
        web_search_options={"user_location": location, "search_context_size": "low"},  # type: ignore[typeddict-item]
    )
    (request,) = search.calls
    assert request.country == "DE"
    assert "country DE (not applied)" in tool_text(upstream)
    assert len(found_urls(tool_text(upstream))) == 3


def test_chat_search_context_size_and_location_fill_the_search_spec() -> None:
    options = {
        "search_context_size": "high",
        "user_location": {"type": "approximate", "approximate": {"country": "NO"}},
    }
    turn = parse_chat({"model": "m", "messages": USER, "web_search_options": options})
    spec = turn.web.search
    assert spec is not None
    assert (spec.context_size, spec.max_results, spec.filters.country) == ("high", 8, "NO")
    plain = parse_chat({"model": "m", "messages": USER, "web_search_options": {}}).web.search
    assert plain is not None and (plain.context_size, plain.max_results) == (None, 5)


def test_perplexity_filters_turn_on_search_and_reach_the_provider(
    upstream: ScriptedUpstream, webreach_url: str, search: Engine
) -> None:
    search_then_answer(upstream)
    reply = chat(webreach_url).chat.completions.create(
        model="sonar",
        messages=USER,  # type: ignore[arg-type]
        extra_body={
            "search_domain_filter": ["python.org", "-docs.python.org"],
            "search_recency_filter": "month",
        },
    )
    assert reply.choices[0].message.content == "From python.org."
    (request,) = search.calls
    assert (request.include_domains, request.exclude_domains, request.recency) == (
        ("python.org",),
        ("docs.python.org",),
        "month",
    )
    assert found_urls(tool_text(upstream)) == ["https://www.python.org/downloads/"]
    first = upstream.requests[0]
    assert "search_domain_filter" not in first and "search_recency_filter" not in first
    assert [tool["function"]["name"] for tool in first["tools"]] == ["web_search"]


def test_the_models_recency_combines_with_the_requests_the_narrower_wins(
    upstream: ScriptedUpstream, webreach_url: str, search: Engine
) -> None:
    upstream.queue(
        Step(calls=[Call("web_search", {"queries": ["a"], "recency": "year"})]),
        Step(calls=[Call("web_search", {"queries": ["b"], "recency": "day"})]),
        Step(content="Done."),
    )
    chat(webreach_url).chat.completions.create(
        model="m",
        messages=USER,  # type: ignore[arg-type]
        extra_body={"search_recency_filter": "week"},
    )
    assert [(c.query, c.recency) for c in search.calls] == [("a", "week"), ("b", "day")]


def test_the_models_recency_alone_reaches_the_provider(
    upstream: ScriptedUpstream, webreach_url: str, search: Engine
) -> None:
    search_then_answer(upstream, recency="week")
    chat(webreach_url).chat.completions.create(
        model="m",
        messages=USER,  # type: ignore[arg-type]
        web_search_options={},
    )
    assert [c.recency for c in search.calls] == ["week"]
    assert "Filtered: recency week (after)" in tool_text(upstream)


def test_a_bad_recency_from_the_model_calls_no_provider(
    upstream: ScriptedUpstream, webreach_url: str, search: Engine
) -> None:
    search_then_answer(upstream, recency="hour")
    chat(webreach_url).chat.completions.create(
        model="m",
        messages=USER,  # type: ignore[arg-type]
        web_search_options={},
    )
    assert search.calls == []
    assert "`recency` must be one of day, week, month, year" in tool_text(upstream)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            {"search_recency_filter": "hour"},
            "search_recency_filter: `hour` is not supported here",
        ),
        ({"search_recency_filter": "fortnight"}, "search_recency_filter: must be `day`"),
        ({"search_domain_filter": "python.org"}, "search_domain_filter: must be an array"),
        ({"search_domain_filter": ["-"]}, "search_domain_filter: must hold non-empty domain"),
        (
            {
                "web_search_options": {
                    "user_location": {"type": "approximate", "approximate": {"country": "Norway"}}
                }
            },
            "web_search_options.user_location.approximate.country: must be an ISO 3166-1 "
            "alpha-2 code like DE, not 'Norway'",
        ),
        (
            {"web_search_options": {"user_location": "Oslo"}},
            "web_search_options.user_location: must be an object",
        ),
    ],
)
def test_bad_chat_filters_are_a_400_naming_the_field(
    upstream: ScriptedUpstream, webreach_url: str, extra: dict[str, Any], message: str
) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        chat(webreach_url).chat.completions.create(
            model="m",
            messages=USER,  # type: ignore[arg-type]
            extra_body=extra,
        )
    assert isinstance(caught.value.body, dict)
    assert caught.value.body["message"].startswith(message), caught.value.body
    assert upstream.requests == []


# --- Responses ------------------------------------------------------------------------------


def test_responses_web_search_fields_reach_the_provider(
    upstream: ScriptedUpstream, webreach_url: str, search: Engine
) -> None:
    search_then_answer(upstream)
    response = chat(webreach_url).responses.create(
        model="m",
        input=QUESTION,
        tools=[
            {
                "type": "web_search",
                "filters": {"allowed_domains": ["python.org"]},
                "user_location": {"type": "approximate", "country": "GB", "city": "London"},
                "search_context_size": "low",
            }
        ],
    )
    assert response.output_text == "From python.org."
    (request,) = search.calls
    assert (request.include_domains, request.country) == (("python.org",), "GB")
    assert found_urls(tool_text(upstream)) == [s.url for s in PYTHON]
    assert "site python.org (" in tool_text(upstream)
    hint = upstream.requests[0]["messages"][0]
    assert hint["role"] == "system" and "London, GB" in hint["content"]


def test_responses_search_context_size_fills_the_search_spec() -> None:
    turn = parse_responses_request(
        {
            "model": "m",
            "input": "q",
            "tools": [{"type": "web_search", "search_context_size": "low"}],
        }
    )
    assert turn.web.search is not None and turn.web.search.context_size == "low"


@pytest.mark.parametrize(
    ("tool", "message"),
    [
        (
            {"type": "web_search", "user_location": {"type": "approximate", "country": "GBR"}},
            "tools.0.user_location.country: must be an ISO 3166-1 alpha-2 code",
        ),
        (
            {"type": "web_search", "filters": {"allowed_domains": ["not a domain"]}},
            "tools.0.filters.allowed_domains: 'not a domain' is not a domain name",
        ),
        (
            {"type": "web_search", "search_context_size": "huge"},
            "tools.0.search_context_size: must be `low`, `medium` or `high`",
        ),
    ],
)
def test_bad_responses_filters_are_a_400_naming_the_field(
    upstream: ScriptedUpstream, webreach_url: str, tool: dict[str, Any], message: str
) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        chat(webreach_url).responses.create(model="m", input=QUESTION, tools=[tool])  # type: ignore[list-item]
    assert isinstance(caught.value.body, dict)
    assert caught.value.body["message"].startswith(message), caught.value.body
    assert upstream.requests == []


# --- Messages -------------------------------------------------------------------------------


def test_messages_allowed_domains_return_sources_from_those_domains(
    upstream: ScriptedUpstream, webreach_url: str, search: Engine
) -> None:
    """Before: the provider was asked without a restriction, its top 8 held no python.org
    page, and the check after the fact left nothing."""
    search_then_answer(upstream)
    message = messages_client(webreach_url).messages.create(
        model="m",
        max_tokens=256,
        messages=USER,  # type: ignore[arg-type]
        tools=[
            {
                "type": "web_search_20250305",
                "name": "web_search",
                "allowed_domains": ["python.org"],
                "blocked_domains": ["docs.python.org"],
                "user_location": {"type": "approximate", "country": "IE", "city": "Dublin"},
            }
        ],
    )
    results = message.content[1]
    assert results.type == "web_search_tool_result"
    assert isinstance(results.content, list)
    assert [r.url for r in results.content] == ["https://www.python.org/downloads/"]
    (request,) = search.calls
    assert (request.include_domains, request.exclude_domains, request.country) == (
        ("python.org",),
        ("docs.python.org",),
        "IE",
    )


@pytest.mark.parametrize(
    ("tool", "message"),
    [
        (
            {"user_location": {"type": "approximate", "country": "Ireland"}},
            "tools.0.user_location.country: must be an ISO 3166-1 alpha-2 code",
        ),
        ({"blocked_domains": [" "]}, "tools.0.blocked_domains: must hold non-empty domain"),
        ({"user_location": {"country": 353}}, "tools.0.user_location.country: must be a string"),
    ],
)
def test_bad_messages_filters_are_a_400_naming_the_field(
    upstream: ScriptedUpstream, webreach_url: str, tool: dict[str, Any], message: str
) -> None:
    declared = {"type": "web_search_20250305", "name": "web_search", **tool}
    with pytest.raises(anthropic.BadRequestError) as caught:
        messages_client(webreach_url).messages.create(
            model="m",
            max_tokens=256,
            messages=USER,  # type: ignore[arg-type]
            tools=[declared],  # type: ignore[list-item]
        )
    assert isinstance(caught.value.body, dict)
    assert caught.value.body["error"]["message"].startswith(message), caught.value.body
    assert upstream.requests == []


# --- /v1/search -----------------------------------------------------------------------------


def test_v1_search_takes_filters_and_says_who_applied_them(
    webreach_url: str, search: Engine
) -> None:
    body = {
        "query": "python download",
        "recency": "week",
        "include_domains": ["python.org"],
        "exclude_domains": ["docs.python.org"],
        "country": "de",
        "language": "DE",
    }
    reply = httpx.post(webreach_url + "/search", json=body, timeout=30)
    assert reply.status_code == 200, reply.text
    data = reply.json()
    document = httpx.get(webreach_url + "/openapi.json", timeout=30).json()
    conforms(data, replies.SearchResult, document)
    assert [s["url"] for s in data["sources"]] == ["https://www.python.org/downloads/"]
    (request,) = search.calls
    assert (request.recency, request.include_domains, request.exclude_domains) == (
        "week",
        ("python.org",),
        ("docs.python.org",),
    )
    assert (request.country, request.language) == ("DE", "de")
    by_engine = ["include_domains"] if search.native else []
    assert data["filtered_by_provider"] == by_engine
    assert data["filtered_after"] == [
        name for name in ("recency", "include_domains", "exclude_domains") if name not in by_engine
    ]
    assert data["unfiltered"] == ["country", "language"]


def test_v1_search_without_filters_reports_none(webreach_url: str, search: Engine) -> None:
    reply = httpx.post(webreach_url + "/search", json={"query": "python"}, timeout=30)
    data = reply.json()
    assert (data["filtered_by_provider"], data["filtered_after"], data["unfiltered"]) == (
        [],
        [],
        [],
    )
    assert search.calls[0].filters() == frozenset()


@pytest.mark.parametrize(
    ("extra", "param", "message"),
    [
        ({"recency": "hour"}, "recency", "recency: must be `day`, `week`, `month` or `year`"),
        ({"include_domains": "python.org"}, "include_domains", "must be an array of domain"),
        ({"exclude_domains": ["a b"]}, "exclude_domains", "'a b' is not a domain name"),
        ({"country": "Germany"}, "country", "country: must be an ISO 3166-1 alpha-2 code"),
        ({"country": 49}, "country", "country: must be a string"),
        ({"language": "deu"}, "language", "language: must be an ISO 639-1 code like de"),
    ],
)
def test_v1_search_refuses_a_bad_filter_naming_it(
    webreach_url: str, search: Engine, extra: dict[str, Any], param: str, message: str
) -> None:
    reply = httpx.post(webreach_url + "/search", json={"query": "q", **extra}, timeout=30)
    assert reply.status_code == 400
    error = reply.json()["error"]
    assert (error["code"], error["param"]) == ("INVALID_ARGUMENTS", param)
    assert message in error["message"]
    assert search.calls == []


def test_the_openapi_document_publishes_the_filters(webreach_url: str) -> None:
    document = httpx.get(webreach_url + "/openapi.json", timeout=30).json()
    schemas = document["components"]["schemas"]
    fields = schemas["SearchRequest"]["properties"]
    assert fields["recency"]["anyOf"][0]["enum"] == ["day", "week", "month", "year"]
    assert {"include_domains", "exclude_domains", "country", "language"} <= set(fields)
    country = fields["country"]["anyOf"][0]["pattern"]
    assert re.search(country, "DE") and re.search(country, " de ")  # trimmed, either case
    assert not re.search(country, "Germany") and not re.search(country, "D3")
    result = schemas["SearchResult"]
    assert {"filtered_by_provider", "filtered_after", "unfiltered"} <= set(result["required"])
    validator = pytest.importorskip("openapi_spec_validator")
    validator.validate(document)
