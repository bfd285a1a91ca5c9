"""A real browser (headless Chromium) on a page served from another loopback port calls the
server with ``fetch``, as any page the user opens could.

Without inbound keys the server refuses the page's ``text/plain`` POST, which needs no preflight
(before, it reached the model and spent the operator's tokens), and its JSON POST never leaves
the browser because the preflight is refused. With ``WEBREACH_SERVER_CORS_ORIGINS`` naming the
page's origin, the same ``fetch`` succeeds and reads the answer.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import signal
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from scripted_upstream import ScriptedUpstream
from server_harness import LiveServer
from webreach.seam import WebRuntime
from webreach.server.app import ServerSettings, create_app
from webreach.tools import ToolOptions

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="chromium is not installed (.ci/run installs Debian's chromium package)",
)
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
)
REPORT_WAIT_S = 120.0
"""How long the page may take to report (a busy machine starting a browser), not a measurement."""

PAGE = """<!doctype html><title>another page</title><script>
const attempts = %s;
(async () => {
  const report = {};
  for (const {name, url, init} of attempts) {
    try {
      const response = await fetch(url, init);
      report[name] = {status: response.status, body: await response.text()};
    } catch (error) {
      report[name] = {blocked: String(error)};
    }
  }
  await fetch("/report", {method: "POST", headers: {"Content-Type": "application/json"},
                          body: JSON.stringify(report)});
})();
</script>"""
"""Makes each ``fetch`` in turn, then posts what each gave back to its own server."""
CHAT = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]})
MESSAGES = json.dumps(
    {"model": "m", "max_tokens": 16, "messages": [{"role": "user", "content": "hi"}]}
)
PLAIN = {"method": "POST", "headers": {"Content-Type": "text/plain"}, "body": CHAT}


class PageServer:
    """Serves the page and takes its report back (same origin, so nothing stops that)."""

    def __init__(self) -> None:
        self.html = ""
        self.report: dict[str, Any] = {}
        self.reported = threading.Event()

        async def page(_request: Request) -> Response:
            return HTMLResponse(self.html, headers={"Cache-Control": "no-store"})

        async def report(request: Request) -> Response:
            self.report = json.loads(await request.body())
            self.reported.set()
            return Response(status_code=204)

        routes = [Route("/", page), Route("/report", report, methods=["POST"])]
        self.app = Starlette(routes=routes)


@pytest.fixture
def page_server() -> Iterator[tuple[PageServer, str]]:
    served = PageServer()
    with LiveServer(served.app) as server:
        yield served, server.url


def webreach(upstream: ScriptedUpstream, **settings: Any) -> LiveServer:
    config = ServerSettings(upstream_base_url=upstream.url, **settings)
    return LiveServer(create_app(config, WebRuntime(), ToolOptions()))


def open_in_chromium(url: str, profile: Path, until: threading.Event) -> None:
    """Open ``url`` in a fresh headless Chromium until ``until`` is set, then end it (and the
    processes it started, which share its process group)."""
    assert CHROMIUM is not None
    log = profile.parent / "chromium.log"
    with log.open("w") as errors:
        browser = subprocess.Popen(
            [CHROMIUM, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", url],
            stdin=subprocess.DEVNULL,
            stdout=errors,
            stderr=errors,
            start_new_session=True,
        )
    try:
        if not until.wait(REPORT_WAIT_S):
            exited = browser.poll()
            raise AssertionError(
                f"the page never reported (chromium exit {exited}):\n{log.read_text()}"
            )
    finally:
        # Started in a session of its own: its group is the browser and its helpers alone.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(browser.pid, signal.SIGTERM)
        try:
            browser.wait(timeout=20)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(browser.pid, signal.SIGKILL)
            browser.wait()


def run_page(page: PageServer, page_url: str, profile: Path, *attempts: dict[str, Any]) -> Any:
    page.html = PAGE % json.dumps(list(attempts))
    open_in_chromium(page_url + "/", profile, page.reported)
    return page.report


def access_lines(caplog: pytest.LogCaptureFixture) -> list[tuple[str, str, int]]:
    return [
        (r.fields["method"], r.fields["path"], r.fields["status"])  # type: ignore[attr-defined]
        for r in caplog.records
        if r.name == "webreach.access"
    ]


def test_a_page_on_another_port_cannot_spend_a_keyless_servers_tokens(
    page_server: tuple[PageServer, str], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    page, page_url = page_server
    with (
        ScriptedUpstream() as upstream,
        webreach(upstream) as server,
        caplog.at_level(logging.INFO, logger="webreach.access"),
    ):
        chat = server.url + "/v1/chat/completions"
        json_post = {
            "method": "POST",
            "headers": {
                "Content-Type": "application/json",
                "x-api-key": "unused",
                "anthropic-version": "2023-06-01",
            },
            "body": MESSAGES,
        }
        report = run_page(
            page,
            page_url,
            tmp_path / "profile",
            {"name": "plain", "url": chat, "init": PLAIN},
            {"name": "opaque", "url": chat, "init": {**PLAIN, "mode": "no-cors"}},
            {"name": "json", "url": server.url + "/v1/messages", "init": json_post},
        )
        access = access_lines(caplog)

    # The simple POSTs went out (no preflight) and were refused before any model call.
    assert "blocked" in report["plain"], report
    assert report["opaque"] == {"status": 0, "body": ""}, report
    assert access.count(("POST", "/v1/chat/completions", 403)) == 2, access
    # The JSON POST needed a preflight, which was refused, so the POST itself never came.
    assert "blocked" in report["json"], report
    assert ("OPTIONS", "/v1/messages", 403) in access, access
    assert not [line for line in access if line[:2] == ("POST", "/v1/messages")], access
    assert upstream.requests == []


def test_a_listed_origins_page_calls_the_server_and_reads_its_answers(
    page_server: tuple[PageServer, str], tmp_path: Path
) -> None:
    page, page_url = page_server
    with ScriptedUpstream() as upstream, webreach(upstream, server_cors_origins=page_url) as server:
        chat = server.url + "/v1/chat/completions"
        json_post = {
            "method": "POST",
            "headers": {"Content-Type": "application/json", "Authorization": "Bearer unused"},
            "body": CHAT,
        }
        report = run_page(
            page,
            page_url,
            tmp_path / "profile",
            {"name": "listed", "url": chat, "init": json_post},
            {"name": "plain", "url": chat, "init": PLAIN},
        )

    assert report["listed"]["status"] == 200, report
    answer = json.loads(report["listed"]["body"])
    assert answer["choices"][0]["message"]["content"] == "Hello from the scripted upstream."
    # Its page may read the server's refusals too, which name what to change.
    assert report["plain"]["status"] == 415, report
    assert "must be JSON" in json.loads(report["plain"]["body"])["error"]["message"]
    assert len(upstream.requests) == 1
