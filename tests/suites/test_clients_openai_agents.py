"""The OpenAI Agents SDK (PyPI `openai-agents`) against the running server.

An `Agent` with `WebSearchTool()` on an `OpenAIResponsesModel` whose client points at the
server, run with `Runner.run` and `Runner.run_streamed`; a second turn the way its docs chain
turns (`result.to_input_list()` plus a new user message); a `@function_tool` beside web search
that the SDK runs itself before it continues. A case the server cannot serve is a strict xfail
naming the exact cause.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from agents import (
    Agent,
    MessageOutputItem,
    ModelSettings,
    OpenAIResponsesModel,
    ReasoningItem,
    RunConfig,
    Runner,
    ToolCallItem,
    ToolCallOutputItem,
    WebSearchTool,
    function_tool,
)
from agents.result import RunResultBase
from openai import AsyncOpenAI
from openai.types.shared import Reasoning

from clients.matrix import (
    ANSWER,
    CITED_URL,
    FOLLOW_UP_ANSWER,
    QUESTION,
    REASONING,
    WEATHER,
    WEATHER_ANSWER,
    WEATHER_CITED_URL,
    follow_up,
    function_tool_round,
    reasoning_round,
    search_round,
)
from scripted_upstream import ScriptedUpstream

RUNS = pytest.mark.parametrize("streamed", [False, True], ids=["run", "run_streamed"])
OFFLINE = RunConfig(tracing_disabled=True)
"""No traces are exported: the tests stay offline."""

weather_calls: list[str] = []


@function_tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    weather_calls.append(city)
    return f"5 °C and windy in {city}"


@pytest.fixture
async def client(webreach_url: str) -> AsyncIterator[AsyncOpenAI]:
    async with AsyncOpenAI(base_url=webreach_url, api_key="test-key", max_retries=0) as client:
        yield client


def agent(client: AsyncOpenAI, **settings: Any) -> Agent[None]:
    return Agent(
        name="researcher",
        instructions="Answer briefly.",
        model=OpenAIResponsesModel(model="test-model", openai_client=client),
        tools=[WebSearchTool(), get_weather],
        model_settings=ModelSettings(**settings),
    )


async def run(agent: Agent[None], given: Any, streamed: bool) -> tuple[RunResultBase, list[str]]:
    """The finished run, and the Responses events a streaming user saw (none without streaming)."""
    if not streamed:
        return await Runner.run(agent, given, run_config=OFFLINE), []
    result = Runner.run_streamed(agent, given, run_config=OFFLINE)
    events: list[str] = []
    deltas: list[str] = []
    async for event in result.stream_events():
        if event.type == "raw_response_event":
            events.append(event.data.type)
            if event.data.type == "response.output_text.delta":
                deltas.append(event.data.delta)
    assert "".join(deltas) == result.final_output
    return result, events


def citations(result: RunResultBase) -> list[tuple[str, str]]:
    found = []
    for item in result.new_items:
        if isinstance(item, MessageOutputItem):
            for part in item.raw_item.content:
                for note in getattr(part, "annotations", None) or []:
                    found.append((note.url, part.text[note.start_index : note.end_index]))
    return found


def web_searches(result: RunResultBase) -> list[Any]:
    return [
        item.raw_item
        for item in result.new_items
        if isinstance(item, ToolCallItem) and item.raw_item.type == "web_search_call"
    ]


@RUNS
async def test_web_search_answers_with_citations(
    upstream: ScriptedUpstream, client: AsyncOpenAI, streamed: bool
) -> None:
    upstream.queue(*search_round())
    result, events = await run(agent(client), QUESTION, streamed)
    assert result.final_output == ANSWER
    assert citations(result) == [(CITED_URL, "About 390,000 people")]
    (search,) = web_searches(result)
    assert search.status == "completed"
    assert search.action.query == "iceland population"
    assert CITED_URL in [source.url for source in search.action.sources]
    if streamed:
        assert "response.web_search_call.searching" in events
        assert events.index("response.web_search_call.completed") < events.index(
            "response.output_text.delta"
        )


@RUNS
async def test_second_turn_from_to_input_list(
    upstream: ScriptedUpstream, client: AsyncOpenAI, streamed: bool
) -> None:
    upstream.queue(*search_round(), *follow_up())
    first, _ = await run(agent(client), QUESTION, streamed)
    history = [*first.to_input_list(), {"role": "user", "content": "And what is its capital?"}]
    second, _ = await run(agent(client), history, streamed)
    assert (first.final_output, second.final_output) == (ANSWER, FOLLOW_UP_ANSWER)
    context = upstream.requests[-1]["messages"]
    assert [m["content"] for m in context if m["role"] == "assistant"] == [ANSWER]
    assert context[-1] == {"role": "user", "content": "And what is its capital?"}


@RUNS
async def test_function_tool_beside_web_search(
    upstream: ScriptedUpstream, client: AsyncOpenAI, streamed: bool
) -> None:
    weather_calls.clear()
    upstream.queue(*function_tool_round())
    result, _ = await run(agent(client), "Weather in Reykjavík?", streamed)
    assert weather_calls == ["Reykjavík"]
    assert result.final_output == WEATHER_ANSWER
    assert citations(result) == [(WEATHER_CITED_URL, "It is 5 °C")]
    outputs = [item.output for item in result.new_items if isinstance(item, ToolCallOutputItem)]
    assert outputs == [WEATHER]
    assert len(web_searches(result)) == 1
    assert upstream.requests[1]["messages"][-1]["content"] == WEATHER


@RUNS
async def test_reasoning_summary_is_shown(
    upstream: ScriptedUpstream, client: AsyncOpenAI, streamed: bool
) -> None:
    upstream.queue(*reasoning_round())
    thinking = agent(client, reasoning=Reasoning(effort="low", summary="auto"))
    result, _ = await run(thinking, QUESTION, streamed)
    assert result.final_output == ANSWER
    summaries = [
        part.text
        for item in result.new_items
        if isinstance(item, ReasoningItem)
        for part in item.raw_item.summary
    ]
    assert summaries == list(REASONING)
