"""004's optional inputs of ``web_search`` (``limit``, ``num_search_results``, ``max_tokens``,
``temperature``) on every face: the tool, ``webreach search`` as a process, ``POST /v1/search``,
MCP and the server's own ``web_search`` function; they reach every query's ``SearchRequest``, a
bad value names its field and no provider is called."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.client import Client

from cli_helpers import clean_env, run_cli
from providers_for_tests import ScriptedSearch, sources
from scripted_upstream import Call, ScriptedUpstream, Step
from sdk_clients import openai_client
from server_harness import LiveServer
from test_mcp import text_of
from test_search_sections import ANSWERED, PEP
from test_server_web_api import conforms
from webreach.cache import MemoryStore
from webreach.seam import SearchRequest, SearchResult, WebRuntime
from webreach.server.app import ServerSettings, create_app
from webreach.server.web_api import replies
from webreach.tools import INVALID_ARGUMENTS, ToolError, ToolOptions, web_search_tool
from webreach.tools.mcp.server import create_server

TUNED = {"num_search_results": 20, "max_tokens": 800, "temperature": 0.3}
MANY = sources(*(f"https://r{n}.example/" for n in range(10)))

BAD_VALUES: list[tuple[dict[str, Any], str]] = [
    ({"limit": 0}, "`limit` must be at least 1, not 0"),
    ({"limit": "5"}, "`limit` must be a whole number, not '5'"),
    ({"limit": 2.5}, "`limit` must be a whole number, not 2.5"),
    ({"limit": True}, "`limit` must be a whole number, not a boolean"),
    ({"num_search_results": 51}, "`num_search_results` must be between 1 and 50, not 51"),
    ({"num_search_results": 0}, "`num_search_results` must be between 1 and 50, not 0"),
    ({"max_tokens": 0}, "`max_tokens` must be between 1 and 16384, not 0"),
    ({"max_tokens": 100_000}, "`max_tokens` must be between 1 and 16384, not 100000"),
    ({"max_tokens": [1]}, "`max_tokens` must be a whole number, not an array"),
    ({"temperature": 2.5}, "`temperature` must be between 0 and 2, not 2.5"),
    ({"temperature": -0.1}, "`temperature` must be between 0 and 2, not -0.1"),
    ({"temperature": "hot"}, "`temperature` must be a number, not 'hot'"),
]


def asked(request: SearchRequest) -> tuple[Any, ...]:
    return (
        request.query,
        request.max_results,
        request.num_search_results,
        request.max_tokens,
        request.temperature,
    )


def answering() -> ScriptedSearch:
    return ScriptedSearch(
        "perplexity", answers={"python 3.13": ANSWERED, "asyncio": SearchResult(MANY)}
    )


def tool_over(provider: ScriptedSearch, **options: Any) -> Any:
    runtime = WebRuntime()
    runtime.register_search_provider(provider)
    return web_search_tool(runtime, ToolOptions(**{"search_context_size": "low", **options}))


# -- the tool --------------------------------------------------------------------------------


async def test_they_reach_every_querys_request() -> None:
    provider = answering()
    await tool_over(provider).execute({"queries": ["python 3.13", "asyncio"], "limit": 3, **TUNED})
    assert sorted(asked(c) for c in provider.calls) == [
        ("asyncio", 3, 20, 800, 0.3),
        ("python 3.13", 3, 20, 800, 0.3),
    ]


async def test_limit_narrows_the_deployments_bound_but_never_widens_it() -> None:
    provider = answering()
    tool = tool_over(provider, search_max_results=5)
    narrow = await tool.execute({"queries": ["asyncio"], "limit": 2})
    wide = await tool.execute({"queries": ["asyncio"], "limit": 40})
    assert [c.max_results for c in provider.calls] == [2, 5]
    assert len(narrow.data.sources) == 2 and len(wide.data.sources) == 5
    assert tool.input_schema["properties"]["limit"]["maximum"] == 5


async def test_absent_or_null_leave_the_request_as_before() -> None:
    provider = answering()
    nulls = dict.fromkeys(["limit", "num_search_results", "max_tokens", "temperature"])
    await tool_over(provider).execute({"queries": ["asyncio"], **nulls})
    await tool_over(provider).execute({"queries": ["asyncio"]})
    assert [asked(c) for c in provider.calls] == [("asyncio", 8, None, None, None)] * 2


async def test_whole_numbers_sent_as_floats_are_taken() -> None:
    provider = answering()
    await tool_over(provider).execute({"queries": ["asyncio"], "limit": 2.0, "max_tokens": 500.0})
    assert asked(provider.calls[0]) == ("asyncio", 2, None, 500, None)


@pytest.mark.parametrize(("arguments", "message"), BAD_VALUES)
async def test_a_bad_value_is_invalid_arguments_and_calls_no_provider(
    arguments: dict[str, Any], message: str
) -> None:
    provider = answering()
    with pytest.raises(ToolError) as caught:
        await tool_over(provider).execute({"queries": ["asyncio"], **arguments})
    assert caught.value.code == INVALID_ARGUMENTS
    assert caught.value.message == message
    assert provider.calls == []


def test_the_schema_says_which_reach_only_model_backed_providers() -> None:
    properties = tool_over(answering()).input_schema["properties"]
    assert "model-backed providers only" in properties["max_tokens"]["description"]
    assert "model-backed providers only" in properties["temperature"]["description"]
    assert (properties["temperature"]["minimum"], properties["temperature"]["maximum"]) == (0, 2)
    assert properties["num_search_results"]["maximum"] == 50
    assert all(len(p["description"]) <= 60 for n, p in properties.items() if n != "recency")


# -- webreach search, as a process -----------------------------------------------------------

PLUGIN = """\
import json, os
from webreach.seam import SearchCitation, SearchResult, SearchSource

class Answers:
    id = "answers"
    def available(self):
        return True
    async def search(self, request):
        with open(os.environ["ANSWERS_LOG"], "a") as log:
            log.write(json.dumps([request.query, request.max_results,
                request.num_search_results, request.max_tokens, request.temperature]) + "\\n")
        return SearchResult(
            content="Python 3.13 came out in October 2024.",
            sources=(SearchSource("https://www.python.org/", "Python", "Home.", "2024-10-07"),),
            citations=(SearchCitation("https://peps.python.org/pep-0703/", "PEP 703", "free"),),
            related=("What is new in 3.14?",),
            queries=("python 3.13 release",),
        )

def make(settings):
    return Answers()
"""


@pytest.fixture
def plugin_env(tmp_path: Path) -> dict[str, str]:
    """``webreach`` with an installed plugin provider that logs what each request asked."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "answers_plugin.py").write_text(PLUGIN)
    dist = site / "answers_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: answers-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[webreach.search_providers]\nanswers = answers_plugin:make\n"
    )
    return clean_env(
        PYTHONPATH=os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]),
        ANSWERS_LOG=str(tmp_path / "asked.jsonl"),
        WEBREACH_SEARCH_PROVIDER="answers",
        WEBREACH_CACHE="none",
        WEBREACH_CONFIG="",
    )


def logged(env: dict[str, str]) -> list[list[Any]]:
    log = Path(env["ANSWERS_LOG"])
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


CLI_TUNED = ("--num-search-results", "20", "--max-tokens", "800", "--temperature", "0.3")


def test_cli_options_reach_the_request_and_json_shows_the_sections(
    plugin_env: dict[str, str],
) -> None:
    done = run_cli("search", "python 3.13", "--limit", "3", *CLI_TUNED, "--json", env=plugin_env)
    assert done.returncode == 0, done.stderr
    assert logged(plugin_env) == [["python 3.13", 3, 20, 800, 0.3]]
    data = json.loads(done.stdout)
    assert data["citations"] == [
        {"url": "https://peps.python.org/pep-0703/", "title": "PEP 703", "cited_text": "free"}
    ]
    assert data["related"] == ["What is new in 3.14?"]
    assert data["provider_queries"] == ["python 3.13 release"]


def test_cli_text_and_tool_formats_show_the_sections(plugin_env: dict[str, str]) -> None:
    text = run_cli("search", "python 3.13", "--max-results", "2", env=plugin_env)
    assert text.returncode == 0, text.stderr
    assert text.stdout.splitlines()[0] == '1 source for "python 3.13" (answers)'
    assert "Citations\n  PEP 703 · https://peps.python.org/pep-0703/\n    “free”" in text.stdout
    assert "Related\n  - What is new in 3.14?" in text.stdout
    assert "The provider searched for\n  - python 3.13 release" in text.stdout
    tool = run_cli("search", "python 3.13", "--format", "tool", env=plugin_env)
    assert "## Citations\n- PEP 703 — https://peps.python.org/pep-0703/" in tool.stdout
    assert "## Related\n- What is new in 3.14?" in tool.stdout
    assert "Search queries: 1\n- python 3.13 release" in tool.stdout
    assert [entry[1:] for entry in logged(plugin_env)] == [
        [2, None, None, None],
        [8, None, None, None],
    ]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (("--num-search-results", "51"), "--num-search-results: must be between 1 and 50, not 51"),
        (
            ("--num-search-results", "many"),
            "--num-search-results: must be a whole number, not 'many'",
        ),
        (("--max-tokens", "0"), "--max-tokens: must be between 1 and 16384, not 0"),
        (("--temperature", "3"), "--temperature: must be between 0 and 2, not 3.0"),
        (("--temperature", "warm"), "--temperature: must be a number, not 'warm'"),
    ],
)
def test_cli_a_bad_value_is_one_line_and_exit_2(
    plugin_env: dict[str, str], options: tuple[str, ...], message: str
) -> None:
    done = run_cli("search", "python", *options, env=plugin_env)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == f"webreach: USAGE: {message}\n"
    assert logged(plugin_env) == []


def test_cli_help_lists_the_options(plugin_env: dict[str, str]) -> None:
    done = run_cli("search", "--help", env=plugin_env)
    for option in (
        "--limit, --max-results N",
        "--num-search-results N",
        "--max-tokens N",
        "--temperature T",
    ):
        assert option in done.stdout


# -- POST /v1/search -------------------------------------------------------------------------


@pytest.fixture
def provider() -> ScriptedSearch:
    return answering()


@pytest.fixture
async def web_api(provider: ScriptedSearch) -> AsyncIterator[httpx.AsyncClient]:
    runtime = WebRuntime()
    runtime.register_search_provider(provider)
    config = ServerSettings(upstream_base_url="http://127.0.0.1:9")
    options = ToolOptions(search_max_results=5, search_context_size="low")
    with LiveServer(create_app(config, runtime, options, store=MemoryStore())) as server:
        async with httpx.AsyncClient(base_url=server.url) as client:
            yield client


async def test_v1_search_takes_them_as_body_fields_and_answers_the_sections(
    web_api: httpx.AsyncClient, provider: ScriptedSearch
) -> None:
    reply = await web_api.post(
        "/v1/search", json={"query": "python 3.13", "max_results": 2, **TUNED}
    )
    assert reply.status_code == 200, reply.text
    assert [asked(c) for c in provider.calls] == [("python 3.13", 2, 20, 800, 0.3)]
    body = reply.json()
    assert [c["url"] for c in body["citations"]][1] == PEP
    assert body["related"] == list(ANSWERED.related)
    assert body["provider_queries"] == list(ANSWERED.queries)
    document = (await web_api.get("/v1/openapi.json")).json()
    conforms(body, replies.SearchResult, document)
    published = document["components"]["schemas"]
    request = next(v for k, v in published.items() if k.startswith("SearchRequest"))
    temperature = request["properties"]["temperature"]["anyOf"][0]
    assert (temperature["minimum"], temperature["maximum"]) == (0, 2)
    assert request["properties"]["num_search_results"]["anyOf"][0]["maximum"] == 50


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("num_search_results", 51, "must be at most 50"),
        ("num_search_results", "20", "must be a positive integer"),
        ("max_tokens", 0, "must be a positive integer"),
        ("max_tokens", 16_385, "must be at most 16384"),
        ("temperature", 2.5, "must be between 0 and 2"),
        ("temperature", True, "must be a number"),
    ],
)
async def test_v1_search_a_bad_value_is_a_400_naming_the_field(
    web_api: httpx.AsyncClient, provider: ScriptedSearch, field: str, value: Any, message: str
) -> None:
    reply = await web_api.post("/v1/search", json={"query": "python 3.13", field: value})
    assert reply.status_code == 400
    error = reply.json()["error"]
    assert (error["code"], error["param"]) == ("INVALID_ARGUMENTS", field)
    assert message in error["message"]
    assert provider.calls == []


# -- MCP -------------------------------------------------------------------------------------


async def test_mcp_takes_them_through_the_schema_and_answers_the_sections() -> None:
    provider = answering()
    runtime = WebRuntime()
    runtime.register_search_provider(provider)
    options = ToolOptions(search_context_size="low")
    async with Client(create_server(runtime, options), mode="legacy") as client:
        listed = await client.list_tools()
        (search,) = [tool for tool in listed.tools if tool.name == "web_search"]
        assert set(TUNED) | {"limit"} <= set(search.input_schema["properties"])
        found = await client.call_tool(
            "web_search", {"queries": ["python 3.13"], "limit": 1, **TUNED}
        )
        assert not found.is_error
        assert "## Related\n- What is new in Python 3.14?" in text_of(found)
        data = found.structured_content
        assert data is not None
        assert data["related"] == list(ANSWERED.related)
        assert data["provider_queries"] == list(ANSWERED.queries)
        assert len(data["citations"]) == 2 and len(data["sources"]) == 1
        bad = await client.call_tool("web_search", {"queries": ["q"], "temperature": 9})
        assert bad.is_error
        assert "`temperature` must be between 0 and 2, not 9" in text_of(bad)
    assert [asked(c) for c in provider.calls] == [("python 3.13", 1, 20, 800, 0.3)]


# -- the server's web_search function --------------------------------------------------------


@pytest.fixture
def search() -> ScriptedSearch:
    """The provider the API server (``webreach_url``) searches with."""
    return answering()


@pytest.fixture
def server_options() -> ToolOptions:
    return ToolOptions(search_context_size="low")


def chat_with_search(url: str) -> None:
    client = openai_client(url)
    client.chat.completions.create(
        model="m",
        messages=[{"role": "user", "content": "When did Python 3.13 come out?"}],
        web_search_options={"search_context_size": "high"},  # type: ignore[typeddict-item]
    )


def tool_text(upstream: ScriptedUpstream) -> str:
    (text,) = [m["content"] for m in upstream.requests[1]["messages"] if m["role"] == "tool"]
    assert isinstance(text, str)
    return text


def test_server_web_search_reads_them_and_shows_the_sections(
    upstream: ScriptedUpstream, webreach_url: str, search: ScriptedSearch
) -> None:
    upstream.queue(
        Step(calls=[Call("web_search", {"queries": ["python 3.13"], "limit": 1, **TUNED})]),
        Step(content="October 2024 【1】."),
    )
    chat_with_search(webreach_url)
    offered = upstream.requests[0]["tools"][0]["function"]["parameters"]["properties"]
    assert set(TUNED) | {"limit", "queries", "recency"} == set(offered)
    assert [asked(c) for c in search.calls] == [("python 3.13", 1, 20, 800, 0.3)]
    text = tool_text(upstream)
    # the provider's citation of a listed source carries the round's number for 【n】
    assert "## Citations\n- [1] Python Release Python 3.13.0 — " in text
    assert "## Related\n- What is new in Python 3.14?" in text
    assert "Search queries: 2\n- python 3.13 release date" in text


def test_server_web_search_a_bad_value_reaches_the_model_and_no_provider(
    upstream: ScriptedUpstream, webreach_url: str, search: ScriptedSearch
) -> None:
    upstream.queue(
        Step(calls=[Call("web_search", {"queries": ["python 3.13"], "max_tokens": -1})]),
        Step(content="I could not search."),
    )
    chat_with_search(webreach_url)
    assert search.calls == []
    assert tool_text(upstream) == (
        "ERROR: INVALID_ARGUMENTS: `max_tokens` must be between 1 and 16384, not -1"
    )
