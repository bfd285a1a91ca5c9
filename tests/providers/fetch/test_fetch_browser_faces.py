"""Every face gets rendered pages through the seam, with no code of its own: the ``web_fetch``
tool, MCP's ``web_fetch``, ``webreach fetch`` (and ``--browser``), ``/v1/fetch``, search
passages, the server's URL reading and deep search's ``open_page``, all on a runtime built from
the settings (``auto``, the default). A plain page neither imports Playwright nor starts a
browser."""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from browser_harness import (
    Site,
    browser_env,
    browser_processes,
    needs_browser,
    shell,
    wait_for,
)
from cli_helpers import clean_env, only_settings, run_cli
from scripted_upstream import Call, ScriptedUpstream, Step
from sdk_clients import openai_client
from server_harness import LiveServer
from webreach.cache import MemoryStore
from webreach.config import build_runtime, load_settings
from webreach.seam import SearchResult, SearchSource
from webreach.server.app import ServerSettings, create_app
from webreach.testing import ScriptedSearch
from webreach.tools import ToolOptions, web_fetch_tool, web_search_tool
from webreach.tools.search.tool import SearchToolResult

pytestmark = needs_browser

FACT = "The lighthouse keeper counted four hundred and twelve ships in the winter of 1911."
FILLER = " Gulls wheeled over the harbour while the tide ran out across the flats." * 4
PLAIN = f"<title>plain</title><script>var x = 1;</script><article><p>{FACT}{FILLER}</p></article>"


@pytest.fixture
async def site() -> AsyncIterator[Site]:
    async with Site() as served:
        served.html("/shell", shell())
        served.json("/api/log", {"title": "Harbour log", "body": FACT + FILLER})
        served.html("/plain", PLAIN)
        yield served


@pytest.fixture
def settings_env(site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    only_settings(monkeypatch, browser_env(site))


async def test_web_fetch_draws_a_shell_and_says_so_in_its_header(
    site: Site, settings_env: None, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, "webreach.browser")
    async with build_runtime(load_settings()) as runtime:
        out = await web_fetch_tool(runtime).execute({"url": site.url + "/shell"})
        plain = await web_fetch_tool(runtime).execute({"url": site.url + "/plain"})
    assert FACT in out.text
    assert "Rendered by: browser (app shell" in out.text
    assert out.data.rendered_by == "browser"  # type: ignore[union-attr]
    assert FACT in plain.text and "Rendered by" not in plain.text
    assert any("rendered by browser (app shell" in r.getMessage() for r in caplog.records)
    await wait_for(lambda: browser_processes() == [], "the browser to exit with the runtime")


async def test_mcp_web_fetch_draws_a_shell(site: Site, settings_env: None) -> None:
    from mcp.client import Client
    from mcp.types import TextContent

    from webreach.tools.mcp.server import create_server

    runtime = build_runtime(load_settings())
    async with runtime, Client(create_server(runtime), mode="legacy") as client:
        result = await client.call_tool("web_fetch", {"url": site.url + "/shell"})
    assert not result.is_error
    (block,) = result.content
    assert isinstance(block, TextContent)
    assert FACT in block.text
    assert "Rendered by: browser (app shell" in block.text


async def test_search_passages_read_the_drawn_page(site: Site, settings_env: None) -> None:
    url = site.url + "/shell"
    found = SearchResult((SearchSource(url, "Harbour log", "A log of the harbour."),))
    search = ScriptedSearch(answers={"harbour ships winter": found})
    async with build_runtime(load_settings(search_provider="scripted")) as runtime:
        runtime.register_search_provider(search)
        options = ToolOptions(search_context_size="medium", search_page_timeout=30.0)
        out = await web_search_tool(runtime, options).execute({"queries": ["harbour ships winter"]})
    assert isinstance(out.data, SearchToolResult)
    assert FACT in out.text
    assert out.data.passages[url]


async def test_v1_fetch_answers_with_the_drawn_page(site: Site, settings_env: None) -> None:
    runtime = build_runtime(load_settings())
    config = ServerSettings(upstream_base_url="http://127.0.0.1:9")
    with LiveServer(create_app(config, runtime, ToolOptions(), store=MemoryStore())) as server:
        async with httpx.AsyncClient(base_url=server.url, timeout=120) as client:
            reply = await client.post("/v1/fetch", json={"url": site.url + "/shell"})
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert (body["rendered_by"], body["provider"]) == ("browser", "auto")
    assert body["render_reason"].startswith("app shell")
    assert FACT in body["content"]


async def test_the_servers_url_reading_reads_the_drawn_page(
    site: Site, settings_env: None, upstream: ScriptedUpstream
) -> None:
    url = site.url + "/shell"
    upstream.queue(Step(calls=[Call("read_link", {"url": url})]), Step(content="Ships, counted."))
    runtime = build_runtime(load_settings())
    config = ServerSettings(upstream_base_url=upstream.url)
    with LiveServer(create_app(config, runtime, ToolOptions(), store=MemoryStore())) as server:
        client = openai_client(server.url + "/v1")
        reply = await asyncio.to_thread(
            client.chat.completions.create,
            model="m",
            messages=[{"role": "user", "content": f"What does {url} say?"}],
            tools=[{"type": "deepseek_read_url"}],  # type: ignore[list-item]
        )
    assert reply.choices[0].message.content == "Ships, counted."
    assert FACT in json.dumps(upstream.requests[1]["messages"])


async def test_deep_searchs_open_page_reads_the_drawn_page(
    site: Site, settings_env: None, upstream: ScriptedUpstream
) -> None:
    url = site.url + "/shell"
    upstream.queue(Step(calls=[Call("open_page", {"url": url})]), Step(content="Counted."))
    runtime = build_runtime(load_settings())
    config = ServerSettings(upstream_base_url=upstream.url)
    with LiveServer(create_app(config, runtime, ToolOptions(), store=MemoryStore())) as server:
        client = openai_client(server.url + "/v1")
        reply = await asyncio.to_thread(
            client.chat.completions.create,
            model="m",
            messages=[{"role": "user", "content": "How many ships? Check the harbour log."}],
            tools=[{"type": "deepseek_web_search"}],  # type: ignore[list-item]
            extra_body={"thinking": {"type": "enabled"}},
        )
    assert reply.choices[0].message.content == "Counted."
    assert FACT in json.dumps(upstream.requests[1]["messages"])


def cli(site: Site, *args: str, **extra: str) -> Any:
    return run_cli(*args, env=clean_env(**{**browser_env(site), **extra}))


async def test_webreach_fetch_json_names_the_browser(site: Site) -> None:
    done = await asyncio.to_thread(cli, site, "fetch", site.url + "/shell", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert (data["provider"], data["rendered_by"]) == ("auto", "browser")
    assert FACT in data["content"]


async def test_webreach_fetch_browser_forces_it_for_one_call(site: Site) -> None:
    done = await asyncio.to_thread(cli, site, "fetch", site.url + "/plain", "--browser", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert (data["provider"], data["rendered_by"]) == ("browser", "browser")
    assert data["render_reason"] == "the browser provider renders every HTML page"


async def test_webreach_fetch_browser_without_a_browser_says_why(site: Site) -> None:
    done = await asyncio.to_thread(
        cli, site, "fetch", site.url + "/plain", "--browser", WEBREACH_BROWSER_EXECUTABLE="/nope"
    )
    assert done.returncode == 2
    assert "WEBREACH_BROWSER_EXECUTABLE=/nope is not an executable file" in done.stderr
    assert "Traceback" not in done.stderr


async def test_a_plain_page_neither_imports_playwright_nor_starts_a_browser(site: Site) -> None:
    probe = (
        "import sys, runpy\n"
        "sys.argv = ['webreach', 'fetch', sys.argv[1]]\n"
        "try:\n"
        "    runpy.run_module('webreach', run_name='__main__')\n"
        "except SystemExit as done:\n"
        "    assert not done.code, done.code\n"
        "print('PLAYWRIGHT' if 'playwright' in sys.modules else 'NO PLAYWRIGHT')\n"
    )
    env = clean_env(**browser_env(site))

    def run() -> Any:
        import subprocess

        return subprocess.run(
            [sys.executable, "-c", probe, site.url + "/plain"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )

    done = await asyncio.to_thread(run)
    assert done.returncode == 0, done.stderr
    assert FACT in done.stdout
    assert done.stdout.strip().endswith("NO PLAYWRIGHT")
    assert browser_processes() == []
