"""The Open Responses compliance suite (``bin/compliance-test.ts`` of the Open Responses
specification's repository), run with bun against the live server's ``/v1/responses`` in front
of a scripted upstream that answers each of its tests plausibly; and every event of streams the
suite does not make (reasoning, web search, function calls) read with the spec's own schemas.

The suite is found beside the repository (``../shared/reference/openresponses``, or where
``OPENRESPONSES_DIR`` says); bun and the suite's packages are the ones pinned in
tests/openresponses (``npm ci`` there, as `.ci/run` does). Every test must pass but those of
:data:`NOT_YET`, which need what the server does not serve yet.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from providers_for_tests import ScriptedFetch, ScriptedSearch
from repo_paths import ROOT, TESTS
from scripted_upstream import Call, ScriptedUpstream, Step
from server_harness import LiveServer, default_search
from webreach.cache import MemoryStore
from webreach.seam import WebRuntime
from webreach.server.app import ServerSettings, create_app
from webreach.tools import ToolOptions

PACKAGES = TESTS / "openresponses"
SUITE = Path(
    os.environ.get("OPENRESPONSES_DIR") or ROOT.parent / "shared" / "reference" / "openresponses"
)

NOT_YET: dict[str, str] = {}
"""The suite's tests that may fail, each with why."""

_EXACTLY = re.compile(r"[Rr]eply with exactly:\s*(\S+?)\.?$")


def _last_user_text(body: dict[str, Any]) -> str:
    for message in reversed(body.get("messages", [])):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            return " ".join(str(p.get("text", "")) for p in content if p.get("type") == "text")
    return ""


def _tool_names(body: dict[str, Any]) -> list[str]:
    return [str(tool.get("function", {}).get("name")) for tool in body.get("tools") or []]


def plausible(body: dict[str, Any]) -> Step:
    """What a model would answer to each of the suite's requests."""
    asked = _last_user_text(body)
    last = (body.get("messages") or [{}])[-1]
    if "get_weather" in _tool_names(body) and last.get("role") == "user":
        return Step(calls=[Call("get_weather", {"location": "San Francisco, CA"})])
    exactly = _EXACTLY.search(asked.strip())
    if exactly:
        return Step(content=exactly.group(1))
    if "Reply with OK" in asked:
        return Step(content="OK")
    if "Count from 1 to" in asked:
        return Step(content=["1, ", "2, ", "3, ", "4, ", "5."])
    if "What is my name" in asked:
        return Step(content=["Your name ", "is Alice."])
    if "image" in asked:
        return Step(content=["A red heart ", "on a white background."])
    system = (body.get("messages") or [{}])[0]
    if system.get("role") == "system" and "pirate" in str(system.get("content")):
        return Step(content=["Ahoy, ", "matey!"])
    return Step(content=["Hello ", "there, ", "friend."])


def _bun() -> Path:
    bun = PACKAGES / "node_modules" / ".bin" / "bun"
    if bun.exists():
        return bun
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("bun is not installed: `npm ci` in tests/openresponses needs npm")
    subprocess.run(
        [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
        cwd=PACKAGES,
        check=True,
        capture_output=True,
        timeout=300,
    )
    return bun


@pytest.fixture
def suite() -> Path:
    if not (SUITE / "bin" / "compliance-test.ts").is_file():
        pytest.skip(f"the Open Responses compliance suite is not at {SUITE}")
    return SUITE


@pytest.fixture
def server() -> Iterator[tuple[str, ScriptedUpstream]]:
    with ScriptedUpstream() as upstream:
        upstream.respond = plausible
        settings = ServerSettings(
            upstream_base_url=upstream.url,
            upstream_api_key="upstream-key",
            signing_key="test-signing-key-of-32-bytes-or-more",
        )
        runtime = WebRuntime()
        search: ScriptedSearch = default_search()
        runtime.register_search_provider(search)
        runtime.register_fetch_provider(ScriptedFetch())
        app = create_app(settings, runtime, ToolOptions(), store=MemoryStore())
        with LiveServer(app) as live:
            yield live.url + "/v1", upstream


def run_suite(suite: Path, url: str) -> list[dict[str, Any]]:
    """Every test's result as the suite reports it (``--json``): id, status, errors."""
    env = {
        **os.environ,
        "NODE_PATH": str(PACKAGES / "node_modules"),
        "NO_COLOR": "1",
    }
    command = [str(_bun()), "--no-install", "run", "bin/compliance-test.ts"]
    done = subprocess.run(
        [*command, "--base-url", url, "--api-key", "test-key", "--json"],
        cwd=suite,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    start = done.stdout.find("{")
    assert start >= 0, f"no report from the suite; stderr: {done.stderr[-2000:]}"
    report = json.loads(done.stdout[start:])
    results: list[dict[str, Any]] = report["results"]
    return results


def test_the_open_responses_suite_passes_but_for_what_is_not_served(
    suite: Path, server: tuple[str, ScriptedUpstream]
) -> None:
    url, _ = server
    results = run_suite(suite, url)
    assert len(results) >= 13
    failed = {r["id"]: r.get("errors") for r in results if r["status"] == "failed"}
    unexpected = {name: errors for name, errors in failed.items() if name not in NOT_YET}
    assert not unexpected, json.dumps(unexpected, indent=1)
    passed = {r["id"] for r in results if r["status"] == "passed"}
    now_passing = sorted(passed & NOT_YET.keys())
    assert not now_passing, f"these pass now; take them out of NOT_YET: {now_passing}"


# --- every event, by the spec's schemas ----------------------------------------------------

SDK_NAMED = {
    "response.reasoning_text.delta": "response.reasoning.delta",
    "response.reasoning_text.done": "response.reasoning.done",
}
"""Events the official SDKs parse under another name than the spec's: the SDKs' is kept."""
WEB_SEARCH = ("web_search_call", "web_search")
"""The hosted web search's items, tool and events, as OpenAI's SDKs know them; the spec has no
hosted tools (a provider's own items and tools are outside its unions)."""


def _is_web_search(value: object) -> bool:
    return isinstance(value, dict) and str(value.get("type", "")).startswith(WEB_SEARCH)


def _outside_the_spec(data: dict[str, Any], issue: str) -> bool:
    """An issue of a web search item, tool or tool choice: OpenAI's, not the spec's."""
    path = issue.split(":", 1)[0].split(".")
    if path[0] == "item":
        return _is_web_search(data.get("item"))
    if path[0] == "response":
        data, path = data.get("response") or {}, path[1:]
    if path[0] == "tool_choice":
        return _is_web_search(data.get("tool_choice"))
    if path[0] in ("output", "tools") and len(path) > 1 and path[1].isdigit():
        return _is_web_search(data.get(path[0], [])[int(path[1])])
    return False


def spec_issues(suite: Path, objects: list[dict[str, Any]]) -> list[tuple[str, list[str]]]:
    """What the spec's schema of each object's type finds wrong with it."""
    env = {**os.environ, "NODE_PATH": str(PACKAGES / "node_modules")}
    done = subprocess.run(
        [str(_bun()), "--no-install", "run", "validate-events.ts", str(suite)],
        cwd=PACKAGES,
        env=env,
        input="\n".join(json.dumps(o) for o in objects),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert len(rows) == len(objects), done.stderr
    return [(row["type"], row["issues"]) for row in rows]


def _stream(url: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    with httpx.stream(
        "POST", f"{url}/responses", json={"model": "m", **body, "stream": True}, timeout=60
    ) as answer:
        assert answer.status_code == 200
        return [json.loads(line[6:]) for line in answer.iter_lines() if line.startswith("data: ")]


def test_every_event_and_response_conforms_but_for_the_named_deviations(
    suite: Path, server: tuple[str, ScriptedUpstream]
) -> None:
    url, upstream = server
    upstream.respond = None
    search = Step(
        reasoning="I should look it up.",
        calls=[Call("web_search", {"queries": ["iceland population"]})],
    )
    answer = Step(reasoning="The first source says so.", content=["About 390,000 ", "【1】."])
    weather = Step(calls=[Call("get_weather", {"location": "Reykjavík"})])
    web = {"input": "How many live in Iceland?", "tools": [{"type": "web_search"}]}
    function = {
        "input": "Weather in Reykjavík?",
        "tools": [
            {
                "type": "function",
                "name": "get_weather",
                "description": None,
                "parameters": {"type": "object", "properties": {"location": {"type": "string"}}},
                "strict": None,
            }
        ],
        "reasoning": {"effort": "low"},
    }
    upstream.queue(search, answer, weather, search, answer)
    objects = [*_stream(url, web), *_stream(url, function)]
    body = httpx.post(f"{url}/responses", json={"model": "m", **web}, timeout=60)
    objects.append(body.json())
    kinds = {str(o.get("type")) for o in objects}
    assert {"response.function_call_arguments.delta", "response.reasoning_text.delta"} <= kinds
    assert "response.output_text.annotation.added" in kinds
    wrong = {}
    for data, (kind, issues) in zip(objects, spec_issues(suite, objects), strict=True):
        if kind in SDK_NAMED or kind.startswith("response.web_search_call."):
            continue
        left = [issue for issue in issues if not _outside_the_spec(data, issue)]
        if left:
            wrong[kind] = left
    assert not wrong, json.dumps(wrong, indent=1)
