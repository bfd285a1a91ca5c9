"""A scripted OpenAI-compatible ``/v1/moderations`` endpoint on 127.0.0.1, for ``safety_check``.

A piece of text scores by the words in it: ``FORBIDDEN`` 0.95 in ``violence``, ``BORDERLINE``
0.5 in ``harassment`` (over ``high``'s threshold, under ``low``'s), anything else 0.01. Requests
and their ``Authorization`` headers are recorded; ``status`` makes every answer an error.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from server_harness import LiveServer

CATEGORIES = ("harassment", "hate", "self-harm", "sexual", "violence")


def scores_for(text: str) -> dict[str, float]:
    scores = dict.fromkeys(CATEGORIES, 0.01)
    if "BORDERLINE" in text:
        scores["harassment"] = 0.5
    if "FORBIDDEN" in text:
        scores["violence"] = 0.95
    return scores


class ScriptedModeration:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.keys: list[str | None] = []
        self.status = 200
        self.fail_after: int | None = None
        """Answer this many requests, then fail every later one with a 503."""
        self.app = Starlette(routes=[Route("/v1/moderations", self._moderate, methods=["POST"])])

    async def _moderate(self, request: Request) -> JSONResponse:
        body = await request.json()
        self.requests.append(body)
        self.keys.append(request.headers.get("authorization"))
        if self.fail_after is not None and len(self.requests) > self.fail_after:
            return JSONResponse({"error": {"message": "moderation down"}}, 503)
        if self.status != 200:
            return JSONResponse({"error": {"message": "moderation down"}}, self.status)
        pieces = body["input"] if isinstance(body["input"], list) else [body["input"]]
        results = []
        for piece in pieces:
            scores = scores_for(piece)
            results.append(
                {
                    "flagged": max(scores.values()) >= 0.7,
                    "categories": {name: score >= 0.7 for name, score in scores.items()},
                    "category_scores": scores,
                }
            )
        return JSONResponse({"id": "modr-1", "model": body.get("model"), "results": results})

    @contextmanager
    def running(self) -> Iterator[str]:
        """The endpoint's base URL while it runs."""
        with LiveServer(self.app) as server:
            yield server.url + "/v1"
