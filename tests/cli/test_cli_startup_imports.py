"""What a command loads: ``webreach --help`` and a fetch the cache answers import no server,
MCP, aiohttp, browser engine or search provider, which would only slow them down."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cli_helpers import clean_env, run_cli
from replay_server import ReplayServer, Reply

pytestmark = pytest.mark.slow

PROBE = """
import runpy, sys
sys.argv = ["webreach", *sys.argv[2:]]
try:
    runpy.run_module("webreach", run_name="__main__", alter_sys=True)
except SystemExit as done:
    code = done.code
with open(__import__("os").environ["PROBE_OUT"], "w") as out:
    __import__("json").dump({"code": code, "modules": sorted(sys.modules)}, out)
"""

NEVER = ("aiohttp", "mcp", "playwright", "uvicorn", "starlette", "openai")


def _loaded(args: list[str], env: dict[str, str], tmp_path: Path) -> list[str]:
    out = tmp_path / "modules.json"
    done = subprocess.run(
        [sys.executable, "-c", PROBE, "--", *args],
        env={**env, "PROBE_OUT": str(out)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    found = json.loads(out.read_text())
    assert found["code"] in (0, None), done.stderr
    modules: list[str] = found["modules"]
    return modules


def _offending(modules: list[str]) -> list[str]:
    return [
        name
        for name in modules
        if name.split(".")[0] in NEVER
        or name == "webreach.server"
        or name.startswith("webreach.server.")
    ]


def test_help_loads_no_settings_provider_or_server(tmp_path: Path) -> None:
    modules = _loaded(["--help"], clean_env(), tmp_path)
    assert _offending(modules) == []
    heavy = ("pydantic", "httpx", "webreach.providers", "webreach.config", "webreach.server")
    assert [name for name in modules if name.startswith(heavy)] == []
    # the commands' own work loads inside them: the event loop, the seam and the tools
    later = ("asyncio", "webreach.seam", "webreach.tools")
    assert [name for name in modules if name.startswith(later)] == []


SEARCH_TOOL = ("adapters", "prompt", "search")
"""The modules of ``webreach.tools`` that only a search (or a model's tool list) needs: the
``search`` package stands for every module in it."""


def _cached_fetch_modules(tmp_path: Path, **settings: str) -> list[str]:
    """What a ``webreach fetch`` answered from the cache imports, with ``settings`` set."""
    with ReplayServer() as pages:
        pages.route(
            "GET",
            "/page",
            Reply(
                body=b"<html><body><p>cached</p></body></html>",
                headers={"Content-Type": "text/html"},
            ),
        )
        env = clean_env(
            WEBREACH_FETCH_ALLOW=pages.url.removeprefix("http://"),
            WEBREACH_CACHE=f"sqlite:///{tmp_path / 'cache.sqlite3'}",
            **settings,
        )
        first = run_cli("fetch", f"{pages.url}/page", "--json", env=env)
        assert first.returncode == 0, first.stderr
        assert json.loads(first.stdout)["cached"] is False
        modules = _loaded(["fetch", f"{pages.url}/page"], env, tmp_path)
    assert len(pages.requests) == 1, "the second fetch came from the cache"
    assert _offending(modules) == []
    tools = tuple(f"webreach.tools.{name}" for name in SEARCH_TOOL)
    inside = "webreach.tools.search."
    loaded = [name for name in modules if name in tools or name.startswith(inside)]
    assert loaded == [], "a fetch needs no search tool"
    return modules


def test_a_cached_fetch_loads_only_what_reads_its_page(tmp_path: Path) -> None:
    modules = _cached_fetch_modules(tmp_path)
    search = [name for name in modules if name.startswith("webreach.providers.search.")]
    assert search == [], "a fetch builds no search provider"
    image = [name for name in modules if name.startswith("webreach.providers.image_search.")]
    assert image == []
    # the fetcher's pool and the search clients are made by the first request that needs them
    pools = ("httpcore2", "trio", "httpx", "httpx_aiohttp")
    assert [name for name in modules if name.split(".")[0] in pools] == []
    # into a pipe the page is written as it is: rich, which draws styles, is for a terminal
    assert [name for name in modules if name.split(".")[0] == "rich"] == []


def test_a_cached_fetch_checks_a_named_search_provider_without_building_any(
    tmp_path: Path,
) -> None:
    """A search provider named in the settings, and its own settings, are checked (a bad value
    still stops the fetch), but only its module loads for that, and no HTTP client library."""
    modules = _cached_fetch_modules(
        tmp_path,
        WEBREACH_SEARCH_PROVIDER="exa",
        EXA_API_KEY="test-key",
        EXA_BASE_URL="http://127.0.0.1:9",
    )
    package = "webreach.providers.search."
    public = [n for n in modules if n.startswith(package) and not n.split(".")[-1].startswith("_")]
    assert public == ["webreach.providers.search.exa"]
    assert [name for name in modules if name.split(".")[0] == "httpx"] == []
    assert [name for name in modules if name.startswith("webreach.providers.image_search.")] == []
