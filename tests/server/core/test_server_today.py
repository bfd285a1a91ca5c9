"""The model that may search is told today's date (UTC), so "the latest" means something; every
protocol's request with a web search gets the note, computed per request."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any

import httpx
import pytest

from scripted_upstream import ScriptedUpstream
from sdk_clients import anthropic_client, openai_client
from webreach.server.core.loop.conversation import with_web_note
from webreach.server.core.turn.shape import SearchSpec

QUESTION = "What is the latest Python release?"
SPEC = SearchSpec("web_search", "deepseek_web_search")


def test_the_note_names_the_day_after_the_system_messages() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": QUESTION},
    ]
    noted = with_web_note(messages, SPEC, date(2026, 12, 1))
    assert noted == [
        messages[0],
        {
            "role": "system",
            "content": "Today is 2026-12-01 (UTC). Search results and pages show their "
            "publication dates where known.",
        },
        messages[1],
    ]
    assert with_web_note(messages, None, date(2026, 12, 1)) == messages


def test_the_location_joins_the_same_note() -> None:
    spec = SearchSpec("web_search", "web_search", location="Oslo, NO")
    (note, _) = with_web_note([{"role": "user", "content": QUESTION}], spec, date(2026, 1, 2))
    assert note["content"] == (
        "Today is 2026-01-02 (UTC). Search results and pages show their publication dates "
        "where known. The user's approximate location: Oslo, NO. Use it when a search depends "
        "on where the user is."
    )


def _days() -> set[str]:
    """Today in UTC, and tomorrow too should the request cross midnight."""
    now = datetime.now(UTC)
    return {now.date().isoformat(), (now + timedelta(minutes=5)).date().isoformat()}


def _ask(protocol: str, url: str) -> None:
    if protocol == "chat":
        openai_client(url).chat.completions.create(
            model="m",
            messages=[{"role": "user", "content": QUESTION}],
            tools=[{"type": "deepseek_web_search"}],  # type: ignore[list-item]
        )
    elif protocol == "responses":
        openai_client(url).responses.create(
            model="m", input=QUESTION, tools=[{"type": "web_search"}]
        )
    else:
        anthropic_client(url.removesuffix("/v1")).messages.create(
            model="m",
            max_tokens=64,
            messages=[{"role": "user", "content": QUESTION}],
            tools=[{"type": "web_search_20250305", "name": "web_search"}],
        )


@pytest.mark.parametrize("protocol", ["chat", "responses", "messages"])
def test_every_protocol_tells_the_date_when_the_model_may_search(
    upstream: ScriptedUpstream, webreach_url: str, protocol: str
) -> None:
    days = _days()
    _ask(protocol, webreach_url)
    first = upstream.requests[0]["messages"]
    told = [m["content"] for m in first if m["role"] == "system"]
    assert any(t.startswith(tuple(f"Today is {d} (UTC)." for d in days)) for t in told), told
    assert first[-1]["role"] == "user"


def test_no_web_search_no_date(upstream: ScriptedUpstream, webreach_url: str) -> None:
    httpx.post(
        webreach_url + "/chat/completions",
        json={"model": "m", "messages": [{"role": "user", "content": QUESTION}]},
    )
    assert upstream.requests[0]["messages"] == [{"role": "user", "content": QUESTION}]
