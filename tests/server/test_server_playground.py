"""The playground at ``/``, driven in headless Chromium (Playwright) against the real server in
front of the scripted upstream, with the real Exa provider searching a replay server.

A question shows its search while the search still runs, then the answer with its cited span
linked to a page that opens, and the usage; the search tab lists the sources and the fetch tab
shows a page; a server with inbound keys serves the page but its calls need the key the page
asks for. A second question carries the first turn; a stream cut midway shows its error and
leaves the box usable; bad input to the tabs shows the server's structured error.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from browser_harness import CHROMIUM, needs_browser
from replay_server import Recorded, ReplayServer, Reply
from scripted_upstream import Call, ScriptedUpstream, Step
from server_harness import LiveServer, exa_and_http_runtime
from webreach.cache import MemoryStore
from webreach.server.app import ServerSettings, create_app
from webreach.server.playground import CONTENT_SECURITY_POLICY
from webreach.tools import ToolOptions

pytestmark = needs_browser
KEY = "inbound-key-of-the-page-test"
"""Not a piece of the page's own text: the server redacts its keys from every body it sends."""
WAIT_MS = 60_000
"""How long an element may take to appear on a busy machine, not a measurement."""


def tree_page(_request: Request) -> Response:
    return HTMLResponse("<!doctype html><title>Hyperion, the tallest tree</title><p>116 m.</p>")


@pytest.fixture
def pages() -> Iterator[str]:
    """The cited pages: a site of its own on 127.0.0.1, so a clicked citation really opens."""
    with LiveServer(Starlette(routes=[Route("/tree", tree_page)])) as site:
        yield site.url


def exa_results(pages: str, gate: threading.Event | None = None) -> Any:
    def answer(request: Recorded) -> Reply:
        query = request.json()["query"]
        results = [
            {
                "url": f"{pages}/tree",
                "title": "Hyperion, the tallest tree",
                "highlights": ["116 m"],
            },
            *(
                {"url": f"{pages}/other/{n}", "title": f"{query} {n}", "highlights": [f"On {n}."]}
                for n in (2, 3)
            ),
        ]
        return Reply(json={"results": results}, hold=gate)

    return answer


def serve(upstream: ScriptedUpstream, replay: ReplayServer, **settings: Any) -> LiveServer:
    config = ServerSettings(upstream_base_url=upstream.url, **settings)
    runtime = exa_and_http_runtime(replay.url)
    options = ToolOptions(search_context_size="low")
    return LiveServer(create_app(config, runtime, options, store=MemoryStore()))


@pytest.fixture
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, chromium_sandbox=False
        )
        try:
            yield launched
        finally:
            launched.close()


def new_page(browser: Any, **options: Any) -> Any:
    """A tab whose every wait (a click, a text read) has the loaded machine's minute."""
    page = browser.new_page(**options)
    page.set_default_timeout(WAIT_MS)
    return page


def test_a_question_shows_its_live_search_then_the_cited_answer_and_usage(
    browser: Any, replay: ReplayServer, pages: str, tmp_path: Path
) -> None:
    gate = threading.Event()
    replay.route("POST", "/search", exa_results(pages, gate))
    with ScriptedUpstream() as upstream, serve(upstream, replay) as server:
        upstream.queue(
            Step(calls=[Call("web_search", {"queries": ["tallest tree"]})]),
            Step(content=["Hyperion is ", "the tallest tree【1】", "."]),
        )
        page = new_page(browser, viewport={"width": 900, "height": 640})
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto(server.url + "/")
        page.fill("#question", "Which tree is the tallest?")
        page.click("#send")

        # The step is on the page while the search is still held at the provider.
        running = page.locator(".steps li.running")
        running.wait_for(timeout=WAIT_MS)
        assert running.inner_text() == "Searching the web: tallest tree …"
        gate.set()

        done = page.locator(".steps li.done")
        done.wait_for(timeout=WAIT_MS)
        assert done.inner_text() == "Searched: tallest tree (3 sources)"
        usage = page.locator(".usage")
        usage.filter(has_text="Usage").wait_for(timeout=WAIT_MS)
        assert usage.inner_text() == "Usage: 20 input · 10 output tokens · 1 web search"
        assert page.locator(".answer").inner_text() == "Hyperion is the tallest tree[1]."
        cited = page.locator(".answer > a")
        assert cited.inner_text() == "Hyperion is the tallest tree"
        assert cited.get_attribute("href") == f"{pages}/tree"
        assert page.locator(".sources li a").count() == 3
        page.screenshot(path=str(tmp_path / "playground.png"))

        with page.expect_popup() as opened:
            cited.click()
        popup = opened.value
        popup.wait_for_load_state()
        assert popup.title() == "Hyperion, the tallest tree"
        assert errors == []
        # The model was offered web search, as the page declared it.
        first = upstream.requests[0]
        assert "web_search" in [t["function"]["name"] for t in first["tools"]]


def test_the_search_and_fetch_tabs_answer_after_the_key_the_page_asks_for(
    browser: Any, replay: ReplayServer, pages: str
) -> None:
    replay.route("POST", "/search", exa_results(pages))
    with ScriptedUpstream() as upstream, serve(upstream, replay, server_api_keys=KEY) as server:
        page = new_page(browser)
        page.goto(server.url + "/")
        page.locator("#key-needed").wait_for(timeout=WAIT_MS)
        page.click("#tab-search")
        page.fill("#search-query", "tallest tree")
        page.click("#search-form button")
        error = page.locator("#error")
        error.wait_for(timeout=WAIT_MS)
        assert error.inner_text().startswith("HTTP 401 UNAUTHORIZED: ")
        assert replay.requests == []

        page.fill("#key", KEY)
        page.dispatch_event("#key", "change")
        page.click("#search-form button")
        page.locator("#search-results li").nth(2).wait_for(timeout=WAIT_MS)
        links = page.locator("#search-results li a")
        assert links.all_inner_texts() == [
            "Hyperion, the tallest tree",
            "tallest tree 2",
            "tallest tree 3",
        ]
        assert page.locator("#error").is_hidden()
        assert [r.path for r in replay.requests] == ["/search"]

        page.click("#tab-fetch")
        assert page.locator("#panel-search").is_hidden()
        page.fill("#fetch-url", f"{pages}/tree")
        page.click("#fetch-form button")
        meta = page.locator("#fetch-meta")
        meta.filter(has_text="HTTP").wait_for(timeout=WAIT_MS)
        assert meta.inner_text() == "HTTP 200 · Hyperion, the tallest tree"
        assert "116 m." in page.locator("#fetch-content").inner_text()


def test_the_page_is_served_under_a_strict_policy_and_not_at_all_when_turned_off(
    replay: ReplayServer,
) -> None:
    with ScriptedUpstream() as upstream:
        with serve(upstream, replay, server_api_keys=KEY) as server:
            page = httpx.get(server.url + "/")
            script = httpx.get(server.url + "/playground/playground.js")
        with serve(upstream, replay, playground=False) as off:
            gone = httpx.get(off.url + "/")

    assert page.status_code == 200
    assert page.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert "default-src 'none'" in CONTENT_SECURITY_POLICY
    assert '<script src="/playground/playground.js"' in page.text
    assert script.headers["content-type"].startswith("text/javascript")
    assert gone.status_code == 404


def conversation_of(body: dict[str, Any]) -> list[tuple[str, str]]:
    """The (role, text) of each message the upstream was sent, the server's own system ones out."""
    return [
        (message["role"], message["content"])
        for message in body["messages"]
        if message["role"] in ("user", "assistant") and isinstance(message["content"], str)
    ]


def test_a_second_question_carries_the_first_turn_as_context(
    browser: Any, replay: ReplayServer
) -> None:
    with ScriptedUpstream() as upstream, serve(upstream, replay) as server:
        upstream.queue(
            Step(content=["Hyperion is ", "the tallest tree."]),
            Step(content="It is 116 m tall."),
        )
        page = new_page(browser)
        page.goto(server.url + "/")
        page.fill("#question", "Which tree is the tallest?")
        page.click("#send")
        page.locator(".usage").filter(has_text="Usage").wait_for(timeout=WAIT_MS)
        page.fill("#question", "How tall is it?")
        page.click("#send")
        page.locator(".usage").nth(1).filter(has_text="Usage").wait_for(timeout=WAIT_MS)

        assert page.locator(".turn .question").all_inner_texts() == [
            "Which tree is the tallest?",
            "How tall is it?",
        ]
        assert page.locator(".answer").all_inner_texts() == [
            "Hyperion is the tallest tree.",
            "It is 116 m tall.",
        ]
        assert len(upstream.requests) == 2
        assert conversation_of(upstream.requests[1]) == [
            ("user", "Which tree is the tallest?"),
            ("assistant", "Hyperion is the tallest tree."),
            ("user", "How tall is it?"),
        ]


def test_a_stream_that_fails_midway_shows_the_error_and_the_box_works_again(
    browser: Any, replay: ReplayServer
) -> None:
    with ScriptedUpstream() as upstream, serve(upstream, replay) as server:
        upstream.queue(
            Step(content=["Hyperion ", "is ", "the ", "tallest."], break_after=3),
            Step(content="Hyperion, 116 m."),
        )
        page = new_page(browser)
        page.goto(server.url + "/")
        page.fill("#question", "Which tree is the tallest?")
        page.click("#send")
        error = page.locator("#error")
        error.wait_for(timeout=WAIT_MS)
        page.locator("#send:enabled").wait_for(timeout=WAIT_MS)
        assert error.inner_text() == "upstream: the stream was cut (connection closed)"
        # What reached the page before the cut stays; how much did depends on whether the
        # upstream's words were read before the cut was (on a loaded machine, often not).
        shown = page.locator(".turn.failed .answer").inner_text()
        assert "Hyperion is".startswith(shown), shown
        assert page.locator(".usage").inner_text() == ""

        # The box is usable again, and the failed turn is no context for the next one.
        page.fill("#question", "Which tree is the tallest, again?")
        page.click("#send")
        page.locator(".usage").filter(has_text="Usage").wait_for(timeout=WAIT_MS)
        assert error.is_hidden()
        assert page.locator(".answer").nth(1).inner_text() == "Hyperion, 116 m."
        assert conversation_of(upstream.requests[1]) == [
            ("user", "Which tree is the tallest, again?")
        ]


def test_bad_input_to_the_search_and_fetch_tabs_shows_the_structured_error(
    browser: Any, replay: ReplayServer, pages: str
) -> None:
    replay.route("POST", "/search", exa_results(pages))
    with ScriptedUpstream() as upstream, serve(upstream, replay) as server:
        page = new_page(browser)
        page.goto(server.url + "/")
        page.click("#tab-search")
        page.fill("#search-query", "tallest tree")
        page.click("#search-form button")
        page.locator("#search-results li").nth(2).wait_for(timeout=WAIT_MS)

        page.fill("#search-query", "   ")  # the field is filled, but with nothing to search
        page.click("#search-form button")
        error = page.locator("#error")
        error.wait_for(timeout=WAIT_MS)
        assert error.inner_text() == (
            "HTTP 400 INVALID_ARGUMENTS (queries): queries: every query must be a non-empty string"
        )
        assert page.locator("#search-results li").count() == 0, "no stale results under it"
        assert [r.path for r in replay.requests] == ["/search"]

        page.click("#tab-fetch")
        assert error.is_hidden(), "a tab's error stays with its tab"
        page.fill("#fetch-url", f"{pages}/tree")
        page.click("#fetch-form button")
        page.locator("#fetch-meta").filter(has_text="HTTP 200").wait_for(timeout=WAIT_MS)
        page.fill("#fetch-url", "file:///etc/passwd")  # a URL to the browser, not to the server
        page.click("#fetch-form button")
        error.wait_for(timeout=WAIT_MS)
        assert error.inner_text() == (
            "HTTP 400 WEB_INVALID_URL (url): URL scheme 'file' is not supported; use http or https"
        )
        assert page.locator("#fetch-meta").inner_text() == ""
        assert page.locator("#fetch-content").inner_text() == ""


def test_with_inbound_keys_the_chat_asks_for_the_key_and_keeps_the_question(
    browser: Any, replay: ReplayServer
) -> None:
    with ScriptedUpstream() as upstream, serve(upstream, replay, server_api_keys=KEY) as server:
        upstream.queue(Step(content="Hyperion."))
        page = new_page(browser)
        page.goto(server.url + "/")
        page.locator("#key-needed").wait_for(timeout=WAIT_MS)
        assert page.locator("#model").input_value() == "", "the model list needs the key too"
        page.fill("#question", "Which tree is the tallest?")
        page.click("#send")
        error = page.locator("#error")
        error.wait_for(timeout=WAIT_MS)
        assert error.inner_text().startswith("HTTP 401")
        assert upstream.requests == []
        assert page.locator("#question").input_value() == "Which tree is the tallest?"
        assert page.locator(".turn").count() == 0

        page.fill("#key", KEY)
        page.dispatch_event("#key", "change")
        page.locator("#key-needed").wait_for(state="hidden", timeout=WAIT_MS)
        page.wait_for_function(
            "() => document.querySelector('#model').value !== ''", timeout=WAIT_MS
        )
        page.click("#send")
        page.locator(".usage").filter(has_text="Usage").wait_for(timeout=WAIT_MS)
        assert page.locator(".answer").inner_text() == "Hyperion."
        assert error.is_hidden()
        assert page.evaluate("sessionStorage.getItem('webreach-playground-key')") == KEY
        page.reload()
        assert page.locator("#key").input_value() == KEY, "the tab keeps it across a reload"
        assert page.locator("#key-needed").is_hidden()
