"""Files attached to a message: Responses ``input_file`` parts and Messages ``document``
blocks, read as text for the upstream by the real HTTP fetcher (PDF text by page, plain
text), within its byte limit; ``file_id`` is refused."""

from __future__ import annotations

import base64
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import anthropic
import openai
import pytest

from _servers import make_pdf
from providers_for_tests import ScriptedSearch
from scripted_upstream import ScriptedUpstream, Step
from sdk_clients import anthropic_client, openai_client
from server_harness import LiveServer
from webreach.cache import MemoryStore
from webreach.providers.fetch.http import HttpFetchProvider
from webreach.seam import WebRuntime
from webreach.server.app import ServerSettings, create_app
from webreach.tools import ToolOptions

LIMIT = 20_000
"""The fetcher's byte limit here (``WEBREACH_FETCH_MAX_BYTES``)."""
PDF = make_pdf(["Reykjavik has about 140,000 people.", "Page two says hello."])
PDF_DATA = base64.b64encode(PDF).decode()
NOTES = "Plain notes: the meeting is on Tuesday."


class _Files(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body, kind = (PDF, "application/pdf") if self.path == "/doc.pdf" else (NOTES.encode(), "")
        self.send_response(200)
        self.send_header("Content-Type", kind or "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def files_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Files)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def webreach_url(
    server_config: ServerSettings, search: ScriptedSearch, upstream: ScriptedUpstream
) -> Iterator[str]:
    runtime = WebRuntime(fetch_provider="http")
    runtime.register_search_provider(search)
    fetcher = HttpFetchProvider(allow=["127.0.0.1"], max_bytes=LIMIT)
    runtime.register_fetch_provider(fetcher)
    runtime.own(fetcher)  # closed with the runtime, by the app's lifespan, in the server's loop
    app = create_app(server_config, runtime, ToolOptions(), store=MemoryStore())
    with LiveServer(app) as server:
        yield server.url + "/v1"


def claude_client(url: str) -> anthropic.Anthropic:
    return anthropic_client(url.removesuffix("/v1"))


def user_text(upstream: ScriptedUpstream) -> str:
    """The text of the last user message the upstream was given, its parts joined."""
    (sent,) = upstream.requests
    user = [m for m in sent["messages"] if m["role"] == "user"][-1]
    content = user["content"]
    return content if isinstance(content, str) else "\n".join(p["text"] for p in content)


def responses_file(url: str, part: dict[str, Any]) -> Any:
    content = [{"type": "input_text", "text": "Summarise the file."}, part]
    return openai_client(url).responses.create(
        model="m",
        input=[{"role": "user", "content": content}],  # type: ignore[list-item, misc]
    )


def test_responses_pdf_file_data_is_read_as_text(
    upstream: ScriptedUpstream, webreach_url: str
) -> None:
    upstream.queue(Step(content="About 140,000."))
    part = {
        "type": "input_file",
        "filename": "iceland.pdf",
        "file_data": f"data:application/pdf;base64,{PDF_DATA}",
    }
    response = responses_file(webreach_url, part)
    assert response.output_text == "About 140,000."
    text = user_text(upstream)
    assert text.startswith("Summarise the file.")
    assert '<file name="iceland.pdf">' in text
    assert "--- page 1 of 2 ---\nReykjavik has about 140,000 people." in text
    assert "Page two says hello." in text


@pytest.mark.parametrize(
    ("path", "expected"), [("/doc.pdf", "Page two says hello."), ("/notes.txt", NOTES)]
)
def test_responses_file_url_is_fetched(
    upstream: ScriptedUpstream, webreach_url: str, files_url: str, path: str, expected: str
) -> None:
    upstream.queue(Step(content="Done."))
    responses_file(webreach_url, {"type": "input_file", "file_url": files_url + path})
    assert expected in user_text(upstream)


@pytest.mark.parametrize(
    ("part", "message"),
    [
        ({"type": "input_file", "file_id": "file-123"}, "`file_id` is not supported"),
        (
            {
                "type": "input_file",
                "filename": "big.txt",
                "file_data": base64.b64encode(b"a" * (LIMIT + 1)).decode(),
            },
            f"the file big.txt is larger than the fetch limit (WEBREACH_FETCH_MAX_BYTES): "
            f"big.txt is {LIMIT + 1} bytes; the limit is {LIMIT}",
        ),
        ({"type": "input_file", "file_data": "not base64!"}, "is not valid base64"),
        ({"type": "input_file", "filename": "x"}, "needs `file_data` or `file_url`"),
    ],
)
def test_responses_files_refused_with_a_400(
    upstream: ScriptedUpstream, webreach_url: str, part: dict[str, Any], message: str
) -> None:
    with pytest.raises(openai.BadRequestError) as raised:
        responses_file(webreach_url, part)
    assert message in str(raised.value)
    assert upstream.requests == []


def messages_document(url: str, source: dict[str, Any]) -> Any:
    document = {"type": "document", "source": source, "title": "notes"}
    return claude_client(url).messages.create(
        model="m",
        max_tokens=100,
        messages=[
            {"role": "user", "content": [document, {"type": "text", "text": "Summarise it."}]}  # type: ignore[list-item]
        ],
    )


def test_messages_documents_are_read_as_text(
    upstream: ScriptedUpstream, webreach_url: str, files_url: str
) -> None:
    sources: list[tuple[dict[str, Any], str]] = [
        ({"type": "base64", "media_type": "application/pdf", "data": PDF_DATA}, "Reykjavik"),
        ({"type": "text", "media_type": "text/plain", "data": NOTES}, NOTES),
        ({"type": "url", "url": files_url + "/doc.pdf"}, "Page two says hello."),
        ({"type": "content", "content": [{"type": "text", "text": "Inline."}]}, "Inline."),
    ]
    for source, expected in sources:
        upstream.requests.clear()
        upstream.queue(Step(content="Done."))
        reply = messages_document(webreach_url, source)
        assert reply.content[0].text == "Done."  # type: ignore[union-attr]
        text = user_text(upstream)
        assert expected in text and text.endswith("Summarise it.")


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ({"type": "file", "file_id": "file_1"}, "a `file` source (`file_id`) is not supported"),
        (
            {"type": "text", "media_type": "text/plain", "data": "a" * (LIMIT + 1)},
            "messages.0.content.0.source: the file notes is larger than the fetch limit "
            "(WEBREACH_FETCH_MAX_BYTES)",
        ),
    ],
)
def test_messages_documents_refused_with_a_400(
    upstream: ScriptedUpstream, webreach_url: str, source: dict[str, Any], message: str
) -> None:
    with pytest.raises(anthropic.BadRequestError) as raised:
        messages_document(webreach_url, source)
    assert message in str(raised.value)
    assert upstream.requests == []
