"""OpenRouter's server tools, ``openrouter:web_search`` and ``openrouter:web_fetch``, declared
in Chat and Responses requests, run as the server's own search and link reading with their
documented ``parameters``; pydantic-ai's OpenRouter model sends the search one."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import openai
import pytest
from pydantic_ai import Agent, WebSearchTool
from pydantic_ai.capabilities import NativeTool
from pydantic_ai.models.openrouter import OpenRouterModel
from pydantic_ai.providers.openrouter import OpenRouterProvider

from providers_for_tests import ScriptedFetch, ScriptedSearch
from scripted_upstream import Call, ScriptedUpstream, Step
from sdk_clients import openai_client as client
from test_server_read_link import ARTICLE, ARTICLE_URL, ASK

QUESTION = [{"role": "user", "content": "What is the weather like?"}]
SEARCH = {
    "type": "openrouter:web_search",
    "parameters": {
        "max_results": 2,
        "max_uses": 1,
        "search_context_size": "low",
        "excluded_domains": ["spam.example"],
        "user_location": {"type": "approximate", "city": "Oslo", "country": "NO"},
        "engine": "exa",
        "max_total_results": 10,
    },
}


@pytest.fixture
def sdk(webreach_url: str) -> Iterator[openai.OpenAI]:
    """The OpenAI SDK on the server, closed after the test: a client left to the collector can
    be finalized after its pooled sockets, which then warn that nobody closed them."""
    with client(webreach_url) as opened:
        yield opened


def searched_twice(upstream: ScriptedUpstream) -> None:
    """The model asks for two searches in one step; ``max_uses: 1`` lets one run."""
    search = Call("web_search", {"queries": ["weather oslo"]})
    upstream.queue(Step(calls=[search, search]), Step(content="Sunny【1】."))


def assert_searched_as_declared(search: ScriptedSearch, upstream: ScriptedUpstream) -> None:
    (request,) = search.calls
    assert request.query == "weather oslo"
    assert (request.exclude_domains, request.country) == (("spam.example",), "NO")
    first = upstream.requests[0]
    assert [tool["function"]["name"] for tool in first["tools"]] == ["web_search"]
    assert "Oslo" in str(first["messages"])


def test_chat_openrouter_web_search(
    upstream: ScriptedUpstream, sdk: openai.OpenAI, search: ScriptedSearch
) -> None:
    searched_twice(upstream)
    reply = sdk.chat.completions.create(
        model="m",
        messages=QUESTION,  # type: ignore[arg-type]
        tools=[SEARCH],  # type: ignore[list-item]
    )
    assert reply.choices[0].message.content == "Sunny."
    steps = reply.choices[0].message.model_extra["server_tool_calls"]
    calls = [call for step in steps for call in step["calls"]]
    assert {call["type"] for call in calls} == {"openrouter:web_search"}
    (done,) = [call for call in calls if call["status"] == "completed"]
    assert len(done["sources"]) == 2  # max_results
    assert reply.model_extra is not None and reply.model_extra["provider"] == "webreach"
    assert_searched_as_declared(search, upstream)


def test_responses_openrouter_web_search(
    upstream: ScriptedUpstream, sdk: openai.OpenAI, search: ScriptedSearch
) -> None:
    searched_twice(upstream)
    response = sdk.responses.create(
        model="m",
        input="What is the weather like?",
        tools=[SEARCH],  # type: ignore[list-item]
    )
    assert response.output_text == "Sunny."
    assert "web_search_call" in [item.type for item in response.output]
    assert_searched_as_declared(search, upstream)


@pytest.mark.parametrize("protocol", ["chat", "responses"])
def test_openrouter_web_fetch_reads_the_link(
    upstream: ScriptedUpstream, sdk: openai.OpenAI, fetcher: ScriptedFetch, protocol: str
) -> None:
    fetcher.pages[ARTICLE_URL] = ARTICLE
    upstream.queue(
        Step(calls=[Call("read_link", {"url": ARTICLE_URL})]), Step(content="A faster one.")
    )
    fetch: dict[str, Any] = {
        "type": "openrouter:web_fetch",
        "parameters": {"max_uses": 3, "allowed_domains": ["example.com"], "engine": "openrouter"},
    }
    if protocol == "chat":
        reply = sdk.chat.completions.create(model="m", messages=ASK, tools=[fetch])  # type: ignore[arg-type, list-item]
        assert reply.choices[0].message.content == "A faster one."
    else:
        response = sdk.responses.create(model="m", input=ASK, tools=[fetch])  # type: ignore[arg-type, list-item]
        assert response.output_text == "A faster one."
    assert fetcher.calls == [ARTICLE_URL]
    first, second = upstream.requests
    assert [tool["function"]["name"] for tool in first["tools"]] == ["read_link"]
    assert "JIT compiler" in second["messages"][-1]["content"]


def test_a_blocked_domain_is_not_read(
    upstream: ScriptedUpstream, sdk: openai.OpenAI, fetcher: ScriptedFetch
) -> None:
    fetcher.pages[ARTICLE_URL] = ARTICLE
    upstream.queue(Step(calls=[Call("read_link", {"url": ARTICLE_URL})]), Step(content="No."))
    fetch = {"type": "openrouter:web_fetch", "parameters": {"blocked_domains": ["example.com"]}}
    sdk.chat.completions.create(model="m", messages=ASK, tools=[fetch])  # type: ignore[arg-type, list-item]
    assert fetcher.calls == []


@pytest.mark.parametrize(
    ("tool", "message"),
    [
        (
            {"type": "openrouter:web_search", "parameters": {"max_results": 0}},
            "tools.0.parameters.max_results: must be a positive integer",
        ),
        (
            {"type": "openrouter:web_search", "parameters": {"search_context_size": "huge"}},
            "tools.0.parameters.search_context_size: must be `low`, `medium` or `high`",
        ),
        (
            {"type": "openrouter:web_fetch", "parameters": {"allowed_domains": "example.com"}},
            "tools.0.parameters.allowed_domains: must be a list of strings",
        ),
        ({"type": "openrouter:web_search", "parameters": 5}, "tools.0.parameters"),
    ],
)
@pytest.mark.parametrize("protocol", ["chat", "responses"])
def test_bad_parameters_are_400s_naming_them(
    upstream: ScriptedUpstream,
    sdk: openai.OpenAI,
    tool: dict[str, Any],
    message: str,
    protocol: str,
) -> None:
    create: Any = sdk.chat.completions.create if protocol == "chat" else sdk.responses.create
    given: dict[str, Any] = {"messages": QUESTION} if protocol == "chat" else {"input": "hi"}
    with pytest.raises(openai.BadRequestError) as raised:
        create(model="m", tools=[tool], **given)
    assert message in str(raised.value)
    assert upstream.requests == []


async def test_pydantic_ai_openrouter_model_searches_through_webreach(
    upstream: ScriptedUpstream, webreach_url: str, search: ScriptedSearch
) -> None:
    upstream.queue(
        Step(calls=[Call("web_search", {"queries": ["weather oslo"]})]), Step(content="Sunny【1】.")
    )
    async with openai.AsyncOpenAI(base_url=webreach_url, api_key="k", max_retries=0) as sdk:
        model = OpenRouterModel("openai/m", provider=OpenRouterProvider(openai_client=sdk))
        agent = Agent(model, capabilities=[NativeTool(WebSearchTool(max_uses=2))])
        result = await agent.run("What is the weather like?")
    assert result.output == "Sunny."
    assert [request.query for request in search.calls] == ["weather oslo"]
    assert [tool["function"]["name"] for tool in upstream.requests[0]["tools"]] == ["web_search"]
