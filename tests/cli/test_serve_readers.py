"""``webreach serve`` as a process reads a search's pages in reader processes of its own: its
turns quote the pages either way, and Ctrl-C ends the readers with the server."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from cli_helpers import fake_ddgs_env
from client_sockets import STARTUP_PATIENCE
from process_tree import command_line, descendants
from scripted_upstream import Call, ScriptedUpstream, Step
from sdk_clients import openai_client
from stderr_lines import StderrLines
from test_cli_serve import free_port, start_serving

FACT = "The harbour wall was raised by two metres after the storm of 1953."
PAGE = (
    "<html><head><title>Harbour</title></head><body><article><h1>The harbour wall</h1>"
    + "".join(f"<p>Paragraph {n} about the tides and the gulls of the bay.</p>" for n in range(30))
    + f"<p>{FACT}</p></article></body></html>"
).encode()


class _Page(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        found = self.path == "/harbour"
        self.send_response(200 if found else 404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(PAGE) if found else 0))
        self.end_headers()
        if found:
            self.wfile.write(PAGE)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def site() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def forked(pid: int) -> set[int]:
    """The processes the fork server below ``pid`` forked: its page readers."""
    below = descendants(pid)
    servers = {p for p in below if b"forkserver" in command_line(p)}
    return {p for p in below for s in servers if p in descendants(s)}


def test_a_served_search_reads_pages_in_readers_that_end_with_the_server(
    upstream: ScriptedUpstream, site: str, tmp_path: Path
) -> None:
    rows = {
        "harbour wall": [{"title": "Harbour", "href": f"http://{site}/harbour", "body": "A wall."}]
    }
    env = fake_ddgs_env(
        tmp_path,
        rows,
        snippets_only=False,
        WEBREACH_UPSTREAM_BASE_URL=upstream.url,
        WEBREACH_FETCH_ALLOW=site,
        WEBREACH_READ_PROCESSES="2",
    )
    port = free_port()
    served = StderrLines(start_serving(env, port))
    try:
        client = openai_client(f"http://127.0.0.1:{port}/v1")
        tool_texts = []
        for _ in range(2):  # the first reads in the server while the readers start
            upstream.queue(
                Step(calls=[Call("web_search", {"queries": ["harbour wall"]})]),
                Step(content="Two metres."),
            )
            client.chat.completions.create(
                model="m",
                messages=[{"role": "user", "content": "How high was the wall raised?"}],
                extra_body={"web_search_options": {}},
            )
            tool_texts.append(str(upstream.requests[-1]["messages"][-1]["content"]))
            deadline = time.monotonic() + STARTUP_PATIENCE
            while len(forked(served.process.pid)) < 2:
                assert time.monotonic() < deadline, "the server's page readers never started"
                time.sleep(0.05)
        assert all(FACT in text and "From the page:" in text for text in tool_texts)
        readers = forked(served.process.pid)
        served.process.send_signal(signal.SIGINT)
        code, err = served.ended()
        assert code == 0, err
        assert "Traceback" not in err
        assert not readers & {int(p) for p in os.listdir("/proc") if p.isdigit()}
    finally:
        if served.process.poll() is None:
            served.process.kill()
            served.process.wait()
