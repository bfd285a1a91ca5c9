"""What the client matrix scripts, and how it runs the Node clients.

Every case drives a real client against the running server (``webreach_url`` of
``server_harness``) in front of the scripted upstream: the model searches first, then answers
citing 【1】, which the server turns into the client's own citations. The plans below are the
upstream's side of each conversation; the constants are what a user of the client then sees.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from scripted_upstream import Call, Step
from webreach.seam import FetchResult, HtmlBody

__all__ = [
    "ANSWER",
    "ARTICLE",
    "ARTICLE_URL",
    "CITED_URL",
    "FOLLOW_UP_ANSWER",
    "PAGE_TEXT",
    "QUESTION",
    "QUOTE",
    "READ_ANSWER",
    "REASONING",
    "WEATHER",
    "WEATHER_ANSWER",
    "WEATHER_CITED_URL",
    "follow_up",
    "function_tool_round",
    "node_case",
    "quote",
    "read_round",
    "reasoning_round",
    "search_round",
    "search_then_function_tool_round",
]

HERE = Path(__file__).resolve().parent

QUESTION = "How many people live in Iceland?"
ANSWER = "About 390,000 people."
CITED_URL = "https://iceland-population.example/1"
"""The first source of the scripted search for ``iceland population``: what 【1】 cites."""
FOLLOW_UP_ANSWER = "Reykjavík."

WEATHER = "5 °C and windy in Reykjavík"
WEATHER_ANSWER = "It is 5 °C."
WEATHER_CITED_URL = "https://reykjavik-weather.example/1"

REASONING = ("I should search for it.", "The first result says so.")

ARTICLE_URL = "https://example.com/article"
PAGE_TEXT = "JIT compiler"
"""A phrase of the article's body: in the upstream's context exactly when the page is."""
ARTICLE = FetchResult(
    ARTICLE_URL,
    200,
    HtmlBody(
        "<html><head><title>Release notes</title></head><body><article><h1>Notes</h1>"
        "<p>The new interpreter is faster, with a JIT compiler, better error messages, "
        "and colour in the interactive prompt. Many small things improved as well.</p>"
        "</article></body></html>"
    ),
)
READ_ANSWER = "A faster interpreter."
QUOTE = "The new interpreter is faster."


def search_round() -> list[Step]:
    """The model searches once, then answers citing the first source."""
    return [
        Step(calls=[Call("web_search", {"queries": ["iceland population"]})]),
        Step(content=["About 390,000 people", "【1】", "."]),
    ]


def follow_up() -> list[Step]:
    return [Step(content=FOLLOW_UP_ANSWER)]


def function_tool_round() -> list[Step]:
    """The model calls the client's ``get_weather``; with its result, searches and answers."""
    return [
        Step(calls=[Call("get_weather", {"city": "Reykjavík"})]),
        Step(calls=[Call("web_search", {"queries": ["reykjavik weather"]})]),
        Step(content="It is 5 °C【1】."),
    ]


def search_then_function_tool_round() -> list[Step]:
    """The model searches, then calls ``get_weather``, then answers from the tool's result."""
    return [
        Step(calls=[Call("web_search", {"queries": ["reykjavik weather"]})]),
        Step(calls=[Call("get_weather", {"city": "Reykjavík"})]),
        Step(content=WEATHER_ANSWER),
    ]


def quote() -> list[Step]:
    """Turn 2 after :func:`read_round`: the model quotes the page (when it has it)."""
    return [Step(content=QUOTE)]


def reasoning_round() -> list[Step]:
    """:func:`search_round` with thinking before each step."""
    first, second = search_round()
    first.reasoning, second.reasoning = REASONING
    return [first, second]


def read_round() -> list[Step]:
    """The model reads the link of the user's message, then answers."""
    return [Step(calls=[Call("read_link", {"url": ARTICLE_URL})]), Step(content=READ_ANSWER)]


# --- Node ------------------------------------------------------------------------------------


def node() -> str:
    """The ``node`` executable; the Node cases skip only when there is none."""
    found = shutil.which("node")
    if found is None:
        pytest.skip("node is not installed (`.ci/run` installs it: apt-get install nodejs npm)")
    return found


def _installed() -> None:
    """``npm ci`` once when tests/clients/node_modules is missing (`.ci/run` does it too)."""
    if (HERE / "node_modules").is_dir():
        return
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail("tests/clients/node_modules is missing and npm is not installed")
    subprocess.run(
        [npm, "ci", "--no-audit", "--no-fund"], cwd=HERE, check=True, capture_output=True
    )


def node_case(script: str, url: str, case: str) -> dict[str, Any]:
    """Run ``node <script> <url> <case>`` from tests/clients and return its JSON output."""
    executable = node()
    _installed()
    env = {**os.environ, "NO_COLOR": "1"}
    done = subprocess.run(
        [executable, script, url, case],
        cwd=HERE,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert lines, f"no output from {script} {case}; stderr: {done.stderr}"
    result: dict[str, Any] = json.loads(lines[-1])
    return result
