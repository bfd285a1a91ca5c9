"""When does a streamed Messages client see its first byte, ``message_start`` and first content?

``message_start`` carries the first model step's usage, so it may wait for it; this measures
what that costs a client. A scripted upstream (in process) streams each answer in paced chunks;
webreach fronts it (one uvicorn server, in process); one client at a time, for three rounds:

* ``answer``: the model writes at once (text chunks every ``--pace`` seconds);
* ``thinking``: reasoning first, then text;
* ``search``: a tool call first (one chunk per ``--pace``), a search, then the answer.

For each: p50 and p90 of time to the response headers, the first body byte, ``message_start``
and the first ``content_block_start``, and ``message_start``'s input tokens.

    python bench/messages_first_event.py [--requests 30] [--pace 0.05]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from scripted_upstream import Call, ScriptedUpstream, Step  # noqa: E402
from server_harness import LiveServer, default_search  # noqa: E402
from webreach.cache import MemoryStore  # noqa: E402
from webreach.seam import WebRuntime  # noqa: E402
from webreach.server import ServerSettings, create_app  # noqa: E402
from webreach.tools import ToolOptions  # noqa: E402

WORDS = [
    "Iceland ",
    "has ",
    "about ",
    "390,000 ",
    "people ",
    "in ",
    "2025, ",
    "most ",
    "near ",
    "Reykjavik.",
]


def respond_for(round_kind: str, pace: float) -> Any:
    def respond(body: dict[str, Any]) -> Step:
        last = body["messages"][-1]
        if round_kind == "search" and last.get("role") == "user":
            arguments = json.dumps({"queries": ["iceland population"]})
            return Step(calls=[Call("web_search", arguments)], pace=pace, usage=(900, 30))
        if round_kind == "thinking":
            return Step(reasoning=["Let ", "me ", "think."], content=WORDS, pace=pace)
        return Step(content=WORDS, pace=pace, usage=(900, 40))

    return respond


def one(base: str, round_kind: str) -> dict[str, float]:
    body: dict[str, Any] = {
        "model": "m",
        "max_tokens": 256,
        "stream": True,
        "messages": [{"role": "user", "content": "How many people live in Iceland?"}],
    }
    if round_kind == "search":
        body["tools"] = [{"type": "deepseek_web_search", "name": "web_search"}]
    if round_kind == "thinking":
        body["thinking"] = {"type": "enabled", "budget_tokens": 2048}
    seen: dict[str, float] = {}
    started = time.perf_counter()
    with httpx.stream("POST", base + "/v1/messages", json=body, timeout=60) as reply:
        seen["headers"] = time.perf_counter() - started
        text = ""
        for piece in reply.iter_text():
            now = time.perf_counter() - started
            seen.setdefault("first_byte", now)
            text += piece
            if "message_start" not in seen and "event: message_start" in text:
                seen["message_start"] = now
                start = text[text.index("event: message_start") :].split("\n")[1]
                seen["start_input_tokens"] = json.loads(start[6:])["message"]["usage"][
                    "input_tokens"
                ]
            if "content" not in seen and "event: content_block_start" in text:
                seen["content"] = now
    return seen


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=30)
    parser.add_argument("--pace", type=float, default=0.05)
    args = parser.parse_args()
    import webreach

    print(f"webreach from {webreach.__file__}; {args.requests} requests per round")
    with ScriptedUpstream() as upstream:
        runtime = WebRuntime()
        runtime.register_search_provider(default_search())
        settings = ServerSettings(upstream_base_url=upstream.url, signing_key="bench")
        app = create_app(settings, runtime, ToolOptions(), store=MemoryStore())
        with LiveServer(app) as server:
            for round_kind in ("answer", "thinking", "search"):
                upstream.respond = respond_for(round_kind, args.pace)
                upstream.record = False
                one(server.url, round_kind)
                runs = [one(server.url, round_kind) for _ in range(args.requests)]
                cells = []
                for key in ("headers", "first_byte", "message_start", "content"):
                    values = sorted(run[key] * 1000 for run in runs)
                    p50 = statistics.median(values)
                    p90 = values[int(0.9 * (len(values) - 1))]
                    cells.append(f"{key} {p50:6.1f}/{p90:6.1f}")
                tokens = statistics.median(run["start_input_tokens"] for run in runs)
                print(f"{round_kind:9} ms p50/p90: " + "  ".join(cells), f" start.input={tokens:g}")


if __name__ == "__main__":
    main()
