"""What coding agents send and need, through the official SDKs against the running server.

Claude Code puts ``system`` messages between turns, forces its ``web_search_20250305`` tool and
reads a search's query from ``input_json_delta``; Codex declares ``namespace`` and ``custom``
tools and shows no annotations, so it gets Markdown links when it asks for them.
"""

from __future__ import annotations

import json
from typing import Any

import anthropic
import httpx
import openai
import pytest

import sdk_clients
from scripted_upstream import Call, ScriptedUpstream, Step
from server_harness import LiveServer, default_search
from webreach.cache import MemoryStore
from webreach.seam import WebRuntime
from webreach.server import ServerSettings, create_app
from webreach.server.core.turn.citations import markdown_links
from webreach.server.core.turn.events import WebSource
from webreach.server.responses.tools import upstream_name
from webreach.tools import ToolOptions

QUESTION = "How many people live in Iceland?"
NATIVE_SEARCH = [{"type": "web_search_20250305", "name": "web_search", "max_uses": 3}]
FORCE_SEARCH = {"type": "tool", "name": "web_search"}
ANSWER = ["Iceland has about 390,000 people【1】.", " Reykjavík is the capital【2】."]
FOUND = "https://iceland-population.example"
LINKED = (
    f"Iceland has about 390,000 people ([iceland-population.example]({FOUND}/1))."
    f" Reykjavík is the capital ([iceland-population.example]({FOUND}/2))."
)


def search_step(*queries: str) -> Step:
    return Step(calls=[Call("web_search", {"queries": list(queries)})])


def messages_client(url: str) -> anthropic.Anthropic:
    return sdk_clients.anthropic_client(url.removesuffix("/v1"), strict=True)


def send_messages(client: anthropic.Anthropic, request: dict[str, Any], *, stream: bool) -> Any:
    """``create(...)``, or the stream helper's final message."""
    if stream:
        with client.messages.stream(**request) as events:
            return events.get_final_message()
    return client.messages.create(**request)


def openai_client(url: str, **headers: str) -> openai.OpenAI:
    return sdk_clients.openai_client(url, headers=headers or None)


# --- Claude Code: Messages ---------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True])
def test_system_messages_between_turns_reach_the_upstream_where_they_were(
    upstream: ScriptedUpstream, webreach_url: str, stream: bool
) -> None:
    history: Any = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello."},
        {"role": "system", "content": [{"type": "text", "text": "The user is in Reykjavík."}]},
        {"role": "user", "content": QUESTION},
    ]
    upstream.queue(search_step("Iceland population"), Step(content=ANSWER))
    request = {
        "model": "m",
        "max_tokens": 256,
        "system": "You are a coding agent.",
        "messages": history,
        "tools": NATIVE_SEARCH,
    }
    message = send_messages(messages_client(webreach_url), request, stream=stream)
    assert message.stop_reason == "end_turn"
    sent = upstream.requests[0]["messages"]
    assert sent[1]["role"] == "system" and sent[1]["content"].startswith("Today is ")
    assert [(m["role"], m["content"]) for m in sent[2:]] == [
        ("user", "Hi"),
        ("assistant", "Hello."),
        ("system", "The user is in Reykjavík."),
        ("user", QUESTION),
    ]
    assert sent[0]["role"] == "system" and "You are a coding agent." in sent[0]["content"]


def test_an_upstream_that_takes_one_leading_system_message_gets_them_folded(
    upstream: ScriptedUpstream, search: Any, fetcher: Any
) -> None:
    """WEBREACH_UPSTREAM_SYSTEM=first: for chat templates (Mistral's, Gemma's) that refuse a
    system message anywhere but first, every one is folded, in order, into the leading one."""
    history: Any = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello."},
        {"role": "system", "content": "The user is in Reykjavík."},
        {"role": "user", "content": QUESTION},
    ]
    upstream.queue(search_step("Iceland population"), Step(content=ANSWER))
    config = ServerSettings(upstream_base_url=upstream.url, upstream_system="first")
    runtime = WebRuntime()
    runtime.register_search_provider(search)
    with LiveServer(create_app(config, runtime, ToolOptions())) as server:
        request = {
            "model": "m",
            "max_tokens": 256,
            "system": "You are a coding agent.",
            "messages": history,
            "tools": NATIVE_SEARCH,
        }
        message = send_messages(messages_client(server.url), request, stream=False)
    assert message.stop_reason == "end_turn"
    for sent in upstream.requests:
        roles = [m["role"] for m in sent["messages"]]
        assert roles.count("system") == 1 and roles[0] == "system"
    lead = upstream.requests[0]["messages"][0]["content"]
    assert lead.index("You are a coding agent.") < lead.index("The user is in Reykjavík.")
    assert [m["role"] for m in upstream.requests[0]["messages"][1:]] == [
        "user",
        "assistant",
        "user",
    ]


def test_a_system_message_holds_only_text(upstream: ScriptedUpstream, webreach_url: str) -> None:
    image = {"type": "image", "source": {"type": "url", "url": "https://a.example/i.png"}}
    history: Any = [{"role": "user", "content": "Hi"}, {"role": "system", "content": [image]}]
    with pytest.raises(anthropic.BadRequestError) as caught:
        messages_client(webreach_url).messages.create(model="m", max_tokens=64, messages=history)
    assert caught.value.body["error"]["message"] == (  # type: ignore[index]
        "messages.1.content.0.type: must be `text` in a `system` message"
    )


@pytest.mark.parametrize("stream", [False, True])
def test_forcing_the_native_web_search_searches_first_then_lets_the_model_answer(
    upstream: ScriptedUpstream, webreach_url: str, stream: bool
) -> None:
    upstream.queue(search_step("Iceland population"), Step(content=ANSWER))
    request: dict[str, Any] = {
        "model": "m",
        "max_tokens": 256,
        "messages": [{"role": "user", "content": "Perform a web search for: " + QUESTION}],
        "tools": NATIVE_SEARCH,
        "tool_choice": FORCE_SEARCH,
    }
    message = send_messages(messages_client(webreach_url), request, stream=stream)
    first, second = upstream.requests
    assert first["tool_choice"] == {"type": "function", "function": {"name": "web_search"}}
    assert second["tool_choice"] == "auto"
    kinds = [block.type for block in message.content]
    assert kinds[:2] == ["server_tool_use", "web_search_tool_result"]
    assert message.usage.server_tool_use is not None
    assert message.usage.server_tool_use.web_search_requests == 1
    cited = [c.url for b in message.content if b.type == "text" for c in b.citations or ()]
    assert cited and all(url.startswith("https://iceland-population.example") for url in cited)


def test_forcing_deepseek_web_search_stays_the_reference_400(webreach_url: str) -> None:
    with pytest.raises(anthropic.BadRequestError) as caught:
        messages_client(webreach_url).messages.create(
            model="m",
            max_tokens=64,
            messages=[{"role": "user", "content": QUESTION}],
            tools=[{"type": "deepseek_web_search"}],  # type: ignore[list-item]
            tool_choice={"type": "tool", "name": "deepseek_web_search"},
        )
    assert "cannot be forced" in str(caught.value)


def test_server_tool_use_input_arrives_as_input_json_delta(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    upstream.queue(search_step("Iceland population", "Reykjavík"), Step(content=ANSWER))
    client = messages_client(webreach_url)
    with client.messages.stream(
        model="m",
        max_tokens=256,
        messages=[{"role": "user", "content": QUESTION}],
        tools=NATIVE_SEARCH,  # type: ignore[arg-type]
    ) as events:
        seen = list(events)
        message = events.get_final_message()
    start = next(
        e
        for e in seen
        if e.type == "content_block_start" and e.content_block.type == "server_tool_use"
    )
    assert start.content_block.input == {}
    partial = [
        e.delta.partial_json
        for e in seen
        if e.type == "content_block_delta"
        and e.index == start.index
        and e.delta.type == "input_json_delta"
    ]
    expected = {
        "action": "search",
        "queries": ["Iceland population", "Reykjavík"],
        "query": "Iceland population",
    }
    assert json.loads("".join(partial)) == expected
    assert message.content[start.index].input == expected  # type: ignore[union-attr]


# --- Codex: Responses ---------------------------------------------------------------------------


CRM = {
    "type": "namespace",
    "name": "crm",
    "description": "Customer records.",
    "tools": [
        {
            "type": "function",
            "name": "lookup",
            "description": "Find a customer.",
            "parameters": {"type": "object", "properties": {"who": {"type": "string"}}},
        }
    ],
}
PATCH = {
    "type": "custom",
    "name": "apply_patch",
    "description": "Edit files.",
    "format": {"type": "grammar", "syntax": "lark", "definition": "start: begin_patch"},
}
PATCH_TEXT = "*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch"


def test_namespace_and_custom_tools_become_upstream_functions(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    tools: Any = [CRM, PATCH, {"type": "web_search"}, {"type": "file_search"}]
    openai_client(webreach_url).responses.create(model="m", input=QUESTION, tools=tools)
    offered = {t["function"]["name"]: t["function"] for t in upstream.requests[0]["tools"]}
    assert set(offered) == {"crm__lookup", "apply_patch", "web_search"}
    assert offered["crm__lookup"]["parameters"] == CRM["tools"][0]["parameters"]  # type: ignore[index]
    assert offered["crm__lookup"]["description"] == "Customer records.\n\nFind a customer."
    patch = offered["apply_patch"]
    assert patch["parameters"]["required"] == ["input"]
    assert "start: begin_patch" in patch["parameters"]["properties"]["input"]["description"]


@pytest.mark.parametrize("stream", [False, True])
def test_a_namespaced_call_comes_back_with_its_namespace_and_goes_back_flattened(
    upstream: ScriptedUpstream, webreach_url: str, stream: bool
) -> None:
    client = openai_client(webreach_url)
    upstream.queue(Step(calls=[Call("crm__lookup", {"who": "Jón"})]))
    request: dict[str, Any] = {"model": "m", "input": QUESTION, "tools": [CRM]}
    if stream:
        with client.responses.stream(**request) as events:
            response = events.get_final_response()
    else:
        response = client.responses.create(**request)
    (call,) = response.output
    assert call.type == "function_call"
    assert (call.name, call.namespace, json.loads(call.arguments)) == (
        "lookup",
        "crm",
        {"who": "Jón"},
    )
    back: Any = [
        {"role": "user", "content": QUESTION},
        call.model_dump(exclude_none=True),
        {"type": "function_call_output", "call_id": call.call_id, "output": "Jón: Akureyri"},
    ]
    client.responses.create(model="m", input=back, tools=[CRM], store=False)  # type: ignore[list-item]
    assistant, tool = upstream.requests[-1]["messages"][-2:]
    assert assistant["tool_calls"][0]["function"]["name"] == "crm__lookup"
    assert tool == {"role": "tool", "tool_call_id": call.call_id, "content": "Jón: Akureyri"}


@pytest.mark.parametrize("stream", [False, True])
def test_a_custom_tool_call_carries_its_free_form_input(
    upstream: ScriptedUpstream, webreach_url: str, stream: bool
) -> None:
    client = openai_client(webreach_url)
    upstream.queue(Step(calls=[Call("apply_patch", {"input": PATCH_TEXT})]))
    request: dict[str, Any] = {"model": "m", "input": "Add a.txt", "tools": [PATCH]}
    if stream:
        with client.responses.stream(**request) as events:
            seen = [event.type for event in events]
            response = events.get_final_response()
        assert "response.custom_tool_call_input.delta" in seen
        assert "response.custom_tool_call_input.done" in seen
    else:
        response = client.responses.create(**request)
    (call,) = response.output
    assert call.type == "custom_tool_call"
    assert (call.name, call.input) == ("apply_patch", PATCH_TEXT)
    back: Any = [
        {"role": "user", "content": "Add a.txt"},
        call.model_dump(exclude_none=True),
        {"type": "custom_tool_call_output", "call_id": call.call_id, "output": "Done!"},
    ]
    client.responses.create(model="m", input=back, tools=[PATCH], store=False)  # type: ignore[list-item]
    assistant, tool = upstream.requests[-1]["messages"][-2:]
    function = assistant["tool_calls"][0]["function"]
    assert (function["name"], json.loads(function["arguments"])) == (
        "apply_patch",
        {"input": PATCH_TEXT},
    )
    assert tool["content"] == "Done!"


def test_forcing_openai_web_search_on_responses_searches_first(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    upstream.queue(search_step("Iceland population"), Step(content=ANSWER))
    response = openai_client(webreach_url).responses.create(
        model="m",
        input=QUESTION,
        tools=[{"type": "web_search"}],
        tool_choice={"type": "web_search"},
    )
    assert [item.type for item in response.output] == ["web_search_call", "message"]
    choices = [request.get("tool_choice") for request in upstream.requests]
    assert choices == [{"type": "function", "function": {"name": "web_search"}}, "auto"]


def test_forcing_openai_web_search_on_chat_searches_first(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    upstream.queue(search_step("Iceland population"), Step(content=ANSWER))
    completion = openai_client(webreach_url).chat.completions.create(
        model="m",
        messages=[{"role": "user", "content": QUESTION}],
        tools=[{"type": "web_search"}],  # type: ignore[list-item]
        tool_choice={"type": "function", "function": {"name": "web_search"}},
    )
    assert completion.choices[0].message.content
    choices = [request.get("tool_choice") for request in upstream.requests]
    assert choices == [{"type": "function", "function": {"name": "web_search"}}, "auto"]


# --- citations as Markdown ----------------------------------------------------------------------


def _spans(text: str, annotations: list[Any]) -> list[str]:
    return [text[a.start_index : a.end_index] for a in annotations]


@pytest.mark.parametrize("stream", [False, True])
def test_markdown_citations_link_the_sources_in_the_text_and_keep_the_annotations(
    upstream: ScriptedUpstream, webreach_url: str, stream: bool
) -> None:
    client = openai_client(webreach_url, **{"X-Webreach-Citations": "markdown"})
    upstream.queue(search_step("Iceland population"), Step(content=ANSWER))
    request: dict[str, Any] = {"model": "m", "input": QUESTION, "tools": [{"type": "web_search"}]}
    if stream:
        with client.responses.stream(**request) as events:
            response = events.get_final_response()
    else:
        response = client.responses.create(**request)
    assert response.output_text == LINKED
    annotations = response.output[-1].content[0].annotations  # type: ignore[union-attr]
    assert [a.url for a in annotations] == [f"{FOUND}/1", f"{FOUND}/2"]
    assert _spans(response.output_text, annotations) == [
        "Iceland has about 390,000 people",
        ". Reykjavík is the capital",
    ]


def test_markdown_citations_on_chat_and_messages(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    upstream.queue(search_step("Iceland population"), Step(content=ANSWER))
    chat = openai_client(webreach_url, **{"x-webreach-citations": "MARKDOWN"})
    completion = chat.chat.completions.create(
        model="m",
        messages=[{"role": "user", "content": QUESTION}],
        tools=[{"type": "deepseek_web_search"}],  # type: ignore[list-item]
    )
    reply = completion.choices[0].message
    assert reply.content == LINKED
    assert reply.annotations and len(reply.annotations) == 2
    upstream.queue(search_step("Iceland population"), Step(content=ANSWER))
    message = messages_client(webreach_url).messages.create(
        model="m",
        max_tokens=256,
        messages=[{"role": "user", "content": QUESTION}],
        tools=NATIVE_SEARCH,  # type: ignore[arg-type]
        extra_headers={"X-Webreach-Citations": "markdown"},
    )
    texts = [(b.text, bool(b.citations)) for b in message.content if b.type == "text"]
    assert texts == [
        ("Iceland has about 390,000 people", True),
        (f" ([iceland-population.example]({FOUND}/1))", False),
        (". Reykjavík is the capital", True),
        (f" ([iceland-population.example]({FOUND}/2))", False),
        (".", False),
    ]


def test_an_unknown_citation_style_is_a_400(webreach_url: str) -> None:
    response = httpx.post(
        webreach_url + "/responses",
        json={"model": "m", "input": QUESTION},
        headers={"X-Webreach-Citations": "footnotes"},
    )
    assert response.status_code == 400
    assert response.json()["error"]["message"] == (
        "X-Webreach-Citations: must be `annotations` or `markdown`"
    )


def test_the_setting_is_the_default_and_the_header_overrides_it(
    upstream: ScriptedUpstream,
) -> None:
    config = ServerSettings(upstream_base_url=upstream.url, citations="markdown")
    runtime = WebRuntime()
    runtime.register_search_provider(default_search())
    app = create_app(config, runtime, ToolOptions(), store=MemoryStore())
    with LiveServer(app) as server:
        url = server.url + "/v1"
        texts = []
        for headers in ({}, {"X-Webreach-Citations": "annotations"}):
            upstream.queue(search_step("Iceland population"), Step(content=ANSWER))
            response = openai_client(url, **headers).responses.create(
                model="m", input=QUESTION, tools=[{"type": "web_search"}]
            )
            texts.append(response.output_text)
    assert texts == [LINKED, "Iceland has about 390,000 people. Reykjavík is the capital."]
    with pytest.raises(ValueError, match="citations"):
        ServerSettings(upstream_base_url=upstream.url, citations="footnotes")


def test_markdown_links_name_each_source_once_by_its_site() -> None:
    sources = [
        WebSource("https://www.hagstofa.is/a (b)", "Statistics", None, None, 1),
        WebSource("https://www.hagstofa.is/a (b)", "Statistics", None, None, 2),
        WebSource("https://en.wikipedia.org/wiki/Iceland", None, None, None, 3),
    ]
    assert markdown_links(sources) == (
        " ([hagstofa.is](https://www.hagstofa.is/a%20%28b%29), "
        "[en.wikipedia.org](https://en.wikipedia.org/wiki/Iceland))"
    )


# --- flattened names ----------------------------------------------------------------------------


def test_flattened_names_are_what_upstreams_accept_and_stable() -> None:
    assert upstream_name("lookup", "crm") == "crm__lookup"
    assert upstream_name("shell") == "shell"
    odd = upstream_name("read.file", "mcp server")
    assert len(odd) <= 64 and odd.startswith("mcp_server__read_file_")
    assert odd != upstream_name("read_file", "mcp_server")
    long = upstream_name("x" * 80, "ns")
    assert len(long) == 64 and long == upstream_name("x" * 80, "ns")
    assert long != upstream_name("x" * 81, "ns")


# --- tools the client loads later ---------------------------------------------------------------


TOOL_SEARCH = {
    "type": "tool_search",
    "execution": "client",
    "description": "Searches over deferred tool metadata.",
    "parameters": {
        "type": "object",
        "properties": {"query": {"type": "string"}},
        "required": ["query"],
    },
}


def test_a_tool_search_the_client_runs_loads_tools_for_the_next_request(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    client = openai_client(webreach_url)
    upstream.queue(Step(calls=[Call("tool_search", {"query": "customers"})]))
    tools: Any = [TOOL_SEARCH, {"type": "web_search"}]
    response = client.responses.create(model="m", input="Who is Jón?", tools=tools)
    (call,) = response.output
    assert call.type == "tool_search_call"
    assert (call.execution, call.arguments) == ("client", {"query": "customers"})
    offered = [t["function"]["name"] for t in upstream.requests[0]["tools"]]
    assert offered == ["tool_search", "web_search"]
    found = {
        "type": "tool_search_output",
        "call_id": call.call_id,
        "execution": "client",
        "status": "completed",
        "tools": [CRM],
    }
    back: Any = [{"role": "user", "content": "Who is Jón?"}, call.model_dump(), found]
    client.responses.create(model="m", input=back, tools=tools, store=False)
    sent = upstream.requests[-1]
    offered = [t["function"]["name"] for t in sent["tools"]]
    assert offered == ["tool_search", "crm__lookup", "web_search"]
    assistant, result = sent["messages"][-2:]
    assert assistant["tool_calls"][0]["function"]["name"] == "tool_search"
    assert result["tool_call_id"] == call.call_id
    assert result["content"].startswith("These tools can be called now:\n- crm__lookup:")


def test_additional_tools_items_declare_tools_and_say_nothing(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    extra = {"type": "additional_tools", "role": "developer", "tools": [CRM, PATCH]}
    question = {"role": "user", "content": QUESTION}
    openai_client(webreach_url).responses.create(model="m", input=[extra, question])  # type: ignore[list-item]
    sent = upstream.requests[0]
    assert [t["function"]["name"] for t in sent["tools"]] == ["crm__lookup", "apply_patch"]
    assert sent["messages"] == [question]


def test_a_hosted_tool_search_is_ignored(upstream: ScriptedUpstream, webreach_url: str) -> None:
    tools: Any = [{"type": "tool_search"}, CRM]
    openai_client(webreach_url).responses.create(model="m", input=QUESTION, tools=tools)
    assert [t["function"]["name"] for t in upstream.requests[0]["tools"]] == ["crm__lookup"]
