"""The package's public face, used the way a user would: ``import webreach`` and
``from webreach.testing import …``."""

from __future__ import annotations

import re
import subprocess
import sys
from importlib import import_module
from typing import Any

import pytest

import webreach
from repo_paths import ROOT
from webreach.testing import ScriptedFetch, ScriptedSearch, sources

HEAVY = (
    "httpx",
    "httpcore",
    "httpx2",
    "httpcore2",
    "aiohttp",
    "pydantic",
    "pydantic_settings",
    "selectolax",
)


def test_every_name_in___all___resolves_to_the_object_its_home_module_defines() -> None:
    homes = [import_module(name) for name in ("webreach.seam", "webreach.tools", "webreach.config")]
    for name in webreach.__all__:
        value = getattr(webreach, name)
        if name == "__version__":
            continue
        assert any(getattr(home, name, None) is value for home in homes), name
    assert set(webreach.__all__) <= set(dir(webreach))
    assert len(set(webreach.__all__)) == len(webreach.__all__)


def test_the_stable_names_are_all_there() -> None:
    expected = {
        "build_runtime",
        "load_settings",
        "Settings",
        "WebRuntime",
        "SearchRequest",
        "SearchResult",
        "SearchSource",
        "FetchRequest",
        "FetchResult",
        "FetchBody",
        "HtmlBody",
        "TextBody",
        "PdfBody",
        "SearchProvider",
        "FetchProvider",
        "WebError",
        "WebErrorCode",
        "WebreachError",
        "ConfigError",
        "render_html",
        "WebToolkit",
        "web_search_tool",
        "web_fetch_tool",
        "ToolOptions",
        "ToolResult",
        "ToolError",
    }
    assert expected <= set(webreach.__all__)


def test_star_import_gives_exactly___all__() -> None:
    namespace: dict[str, object] = {}
    exec("from webreach import *", namespace)
    assert set(namespace) - {"__builtins__"} == set(webreach.__all__)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'WebRuntim'"):
        _ = webreach.WebRuntim  # type: ignore[attr-defined]


def test_every_error_shares_one_root() -> None:
    for error in (webreach.WebError, webreach.ConfigError, webreach.ToolError):
        assert issubclass(error, webreach.WebreachError)
    assert webreach.WebErrorCode.WEB_BLOCKED_URL == "WEB_BLOCKED_URL"


def _fresh_python(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    return done.stdout.strip()


@pytest.mark.slow
def test_import_webreach_stays_light() -> None:
    loaded = _fresh_python(
        "import sys, webreach; print(webreach.__version__);"
        f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    )
    assert loaded == webreach.__version__


@pytest.mark.slow
def test_the_seam_names_load_without_an_http_client() -> None:
    loaded = _fresh_python(
        "import sys, webreach; webreach.WebRuntime, webreach.SearchRequest, webreach.WebError;"
        "from webreach.testing import ScriptedSearch;"
        f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    )
    assert loaded == ""


async def test_a_runtime_with_scripted_providers_drives_the_tools() -> None:
    """The manual's webreach.testing example (docs/library/testing.md)."""
    search = ScriptedSearch(
        answers={"python 3.13": webreach.SearchResult(sources("https://a.example/"))}
    )
    page = webreach.FetchResult(
        "https://a.example/", 200, webreach.HtmlBody("<h1>What is new</h1>")
    )
    fetch = ScriptedFetch(pages={"https://a.example/": page})
    async with webreach.WebRuntime() as runtime:
        runtime.register_search_provider(search)
        runtime.register_fetch_provider(fetch)
        result = await webreach.web_search_tool(runtime).execute({"queries": ["python 3.13"]})
        toolkit = webreach.WebToolkit(runtime, webreach.ToolOptions(fetch_max_chars=500))
        text = await toolkit.execute("web_fetch", '{"url": "https://a.example/"}')
    assert "https://a.example/" in result.text
    assert [request.query for request in search.calls] == ["python 3.13"]
    assert "What is new" in text
    # The search read the page for its passages (medium, the default); web_fetch read it again.
    assert fetch.calls == ["https://a.example/", "https://a.example/"]


async def test_scripted_providers_record_and_fail_as_told() -> None:
    blocked = webreach.WebError(webreach.WebErrorCode.WEB_BLOCKED_URL, "private address")
    fetch = ScriptedFetch(pages={"http://10.0.0.1/": blocked})
    async with webreach.WebRuntime() as runtime:
        runtime.register_fetch_provider(fetch)
        with pytest.raises(webreach.WebError) as refused:
            await runtime.fetch(webreach.FetchRequest("http://10.0.0.1/"))
        with pytest.raises(webreach.WebError) as unknown:
            await runtime.fetch(webreach.FetchRequest("https://nowhere.example/"))
    assert refused.value.code == webreach.WebErrorCode.WEB_BLOCKED_URL
    assert unknown.value.code == webreach.WebErrorCode.WEB_PROVIDER_ERROR
    assert "no scripted page for https://nowhere.example/" in unknown.value.message
    assert fetch.calls == ["http://10.0.0.1/", "https://nowhere.example/"]

    asleep = ScriptedSearch(is_available=False)
    assert not asleep.available()


async def test_build_runtime_from_settings_takes_a_scripted_provider() -> None:
    settings = webreach.load_settings(search_provider="scripted", cache="none")
    assert isinstance(settings, webreach.Settings)
    search = ScriptedSearch(answers={"q": webreach.SearchResult(sources("https://b.example/"))})
    async with webreach.build_runtime(settings) as runtime:
        assert isinstance(runtime, webreach.WebRuntime)
        runtime.register_search_provider(search)
        result = await runtime.search(webreach.SearchRequest("q", max_results=1))
    assert [source.url for source in result.sources] == ["https://b.example/"]
    assert result.provider == "scripted"


def test_render_html_is_the_renderer() -> None:
    markdown = webreach.render_html(
        "<h1>Title</h1><p>Text with a <a href='/x'>link</a>.</p>", base_url="https://a.example/"
    )
    assert "https://a.example/x" in markdown


TESTING_PAGE = ROOT / "docs" / "library" / "testing.md"


async def test_the_manuals_testing_example_runs() -> None:
    blocks = re.findall(r"```python\n(.*?)```", TESTING_PAGE.read_text(), flags=re.DOTALL)
    (example,) = [block for block in blocks if "from webreach.testing import" in block]
    namespace: dict[str, Any] = {}
    exec(example, namespace)
    await namespace["test_my_agent_reads_the_web"]()
