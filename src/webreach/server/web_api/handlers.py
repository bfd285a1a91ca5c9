"""The endpoints: each reads a bounded JSON body, runs a tool through the server's runtime, and
answers JSON or the one error shape.

The tools do the work (validation, limits, provider selection, cache, SSRF guard), so these
handlers only translate between HTTP and the tools' structured results.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal, TypeVar
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import Response

from ...seam import WebError, WebErrorCode
from ...tools import SearchToolResult, run_search
from ...tools.fetch import page_piece, read_page
from ..core.loop.context import ServerContext
from ..core.turn.budgets import QuotaKind, key_quota
from ..core.turn.errors import RequestError
from ..core.turn.operator_log import request_log, web_failure
from ..core.wire.fields import JSON
from ..core.wire.inbound import ClientGone, parse_json, read_body, until_disconnected
from ..core.wire.keepalive import server_timing
from .bodies import SearchCall, fetch_call, search_call
from .errors import (
    INTERNAL_ERROR,
    NOT_ENABLED,
    RATE_LIMITED,
    error_body,
    error_response,
    json_response,
    request_error_response,
    web_error_response,
)
from .openapi import openapi_document
from .openwebui_bodies import loader_urls, openwebui_search_call

__all__ = [
    "fetch_endpoint",
    "openapi_endpoint",
    "openwebui_loader_endpoint",
    "openwebui_search_endpoint",
    "search_endpoint",
]

logger = logging.getLogger("webreach.server")

CLIENT_GONE = 499
"""Nobody reads it: the status logged for a client that left before its answer."""

T = TypeVar("T")
Tool = Literal["search", "fetch"]
Handler = Callable[[Request], Awaitable[Response]]


@dataclass(frozen=True, slots=True)
class Answer:
    """A body to send, and how long the tools took, for ``Server-Timing``."""

    body: object
    web_seconds: float


Work = Callable[[ServerContext, JSON], Awaitable[Answer]]


class QuotaSpent(Exception):
    """The key's day has no search (or fetch) left for this call."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.message = message
        self.retry_after = retry_after


async def _take(kind: QuotaKind, units: int) -> int:
    """Reserves the call's units from the key's day quota before it runs (each one is spent
    once the call starts, so none is given back); none left is a :class:`QuotaSpent`."""
    quota = key_quota()
    granted = await quota.take(kind, units)
    if granted <= 0:
        raise QuotaSpent(*quota.refusal(kind))
    return granted


async def timed(awaitable: Awaitable[T]) -> tuple[T, float]:
    started = time.perf_counter()
    result = await awaitable
    return result, time.perf_counter() - started


def _enabled(context: ServerContext, tool: Tool) -> bool:
    options = context.options
    return options.search_enabled if tool == "search" else options.fetch_enabled


def _turned_off(tool: Tool) -> Response:
    variable = "WEBREACH_SEARCH_ENABLED" if tool == "search" else "WEBREACH_FETCH_ENABLED"
    return error_response(404, NOT_ENABLED, f"web {tool} is turned off on this server ({variable})")


def endpoint(tool: Tool, work: Work) -> Handler:
    """One ``POST`` endpoint: bounded body, strict JSON, the work, then JSON or an error; a
    client that leaves cancels the searches and fetches in flight."""

    async def handle(request: Request) -> Response:
        started = time.perf_counter()
        context: ServerContext = request.app.state.context
        if not _enabled(context, tool):
            return _turned_off(tool)
        try:
            body = parse_json(await read_body(request, context.settings.server_max_body_bytes))
            answer = await until_disconnected(request, work(context, body))
        except RequestError as error:
            request_log().note = error.message
            return request_error_response(error)
        except WebError as error:
            web_failure(tool, error)
            request_log().note = error.message
            return web_error_response(error)
        except QuotaSpent as spent:
            request_log().note = spent.message
            body = error_body(RATE_LIMITED, spent.message, retry_after=spent.retry_after)
            return json_response(429, body, {"Retry-After": str(spent.retry_after)})
        except ClientGone:
            return Response(status_code=CLIENT_GONE)
        except Exception:
            logger.exception("%s failed unexpectedly", request.url.path)
            return error_response(500, INTERNAL_ERROR, "the server failed; the error was logged")
        timing = server_timing(time.perf_counter() - started, 0.0, answer.web_seconds)
        return json_response(200, answer.body, {"Server-Timing": timing})

    return handle


async def _search(context: ServerContext, call: SearchCall) -> tuple[SearchToolResult, float]:
    await _take("searches", 1)
    request_log().searches += 1
    return await timed(
        run_search(
            context.runtime,
            call.queries,
            max_results=call.max_results,
            filters=call.filters,
            tuning=call.tuning,
        )
    )


async def search_work(context: ServerContext, body: JSON) -> Answer:
    """``/v1/search``: the ``web_search`` tool's structured result."""
    result, seconds = await _search(context, search_call(body, context.options))
    return Answer(result.to_json(), seconds)


async def fetch_work(context: ServerContext, body: JSON) -> Answer:
    """``/v1/fetch``: the ``web_fetch`` tool's structured result, the piece of the page in the
    asked format from ``start``, at most ``WEBREACH_FETCH_MAX_CHARS`` characters."""
    call = fetch_call(body)
    await _take("fetches", 1)
    request_log().fetches += 1
    (result, rendered), seconds = await timed(
        read_page(context.runtime, call.url, call.format, max_age=call.max_age)
    )
    piece = page_piece(result, rendered, call.start, context.options.fetch_max_chars)
    return Answer({**piece.to_json(), "format": call.format}, seconds)


def _label(url: str, title: str | None) -> str:
    return title or urlsplit(url).hostname or url


async def openwebui_search_work(context: ServerContext, body: JSON) -> Answer:
    """Open WebUI's external web search: ``[{"link", "title", "snippet"}]``, strings only."""
    result, seconds = await _search(context, openwebui_search_call(body, context.options))
    results = [
        {"link": s.url, "title": _label(s.url, s.title), "snippet": s.snippet or ""}
        for s in result.sources
    ]
    return Answer(results, seconds)


class _ErrorPage(WebError):
    """A page that answered HTTP ≥ 400: the site's error page, never a document to index.

    The error itself carries no ``status``, so when it is the answer it is a 502: a site's 429
    or 401 is not passed on as if this server had said it."""

    def __init__(self, url: str, site_status: int, provider: str | None) -> None:
        message = f"{url} answered HTTP {site_status}"
        super().__init__(WebErrorCode.WEB_PROVIDER_ERROR, message, provider=provider)
        self.site_status = site_status


async def _document(context: ServerContext, url: str) -> JSON | WebError:
    """One whole page as Open WebUI's document (it splits and embeds pages itself, so a page cut
    at the tool's piece size would lose the rest), or the failure that left it out; a page that
    answered HTTP ≥ 400 is left out as ``read_url`` leaves it out, so no error page is indexed."""
    try:
        result, rendered = await read_page(context.runtime, url)
    except WebError as error:
        return error
    if result.status_code >= 400:
        return _ErrorPage(url, result.status_code, result.provider)
    metadata = {"source": url, "title": _label(result.url, rendered.title)}
    return {"page_content": rendered.text, "metadata": metadata}


def _log_failure(url: str, failure: WebError) -> None:
    if isinstance(failure, _ErrorPage):
        web_failure("fetch", url=url, status=failure.site_status, provider=failure.provider)
    else:
        web_failure("fetch", failure, url=url)


async def openwebui_loader_work(context: ServerContext, body: JSON) -> Answer:
    """Open WebUI's external web loader: the pages that could be read, concurrently; a page
    that failed is left out (logged), as Open WebUI's own loader does, unless all failed. With
    fewer fetches left of the key's day than URLs, the first ones are read and the rest left
    out (noted in the access line)."""
    urls = loader_urls(body)
    granted = await _take("fetches", len(urls)) if urls else 0
    if granted < len(urls):
        request_log().note = f"{len(urls) - granted} URLs left out: the key's day quota is spent"
        urls = urls[:granted]
    request_log().fetches += len(urls)
    started = time.perf_counter()
    async with asyncio.TaskGroup() as group:
        tasks = [group.create_task(_document(context, url)) for url in urls]
    seconds = time.perf_counter() - started
    outcomes = [task.result() for task in tasks]
    documents = [outcome for outcome in outcomes if not isinstance(outcome, WebError)]
    failures = [(u, o) for u, o in zip(urls, outcomes, strict=True) if isinstance(o, WebError)]
    # When every page failed, the first failure is the answer (and the endpoint logs it).
    for url, failure in failures if documents else failures[1:]:
        _log_failure(url, failure)
    if failures and not documents:
        raise failures[0][1]
    return Answer(documents, seconds)


search_endpoint = endpoint("search", search_work)
fetch_endpoint = endpoint("fetch", fetch_work)
openwebui_search_endpoint = endpoint("search", openwebui_search_work)
openwebui_loader_endpoint = endpoint("fetch", openwebui_loader_work)


async def openapi_endpoint(request: Request) -> Response:
    """``GET /v1/openapi.json``, with this server's own bounds and whether it needs a key."""
    context: ServerContext = request.app.state.context
    keyed = bool(context.settings.api_keys())
    return json_response(200, openapi_document(context.options, keyed=keyed))
