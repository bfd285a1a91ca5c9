"""What every request goes through before and after its endpoint: the access log, inbound
keys, and timing.

All are plain ASGI middleware: they cost a few attribute reads per request, and the
protocol endpoints stay free of cross-cutting checks.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence

from starlette.datastructures import Headers
from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..seam.hops import HOPS_HEADER, MAX_HOPS, arrived_after, hops_of
from .connections import TIMED_OUT
from .core.state.store import scoped_to_key
from .core.turn.budgets import NO_QUOTA, allowed_for_key
from .core.turn.operator_log import RequestLog, begin_request, end_request, request_log
from .core.turn.shape import JSON
from .core.wire.framing import dumps
from .socket_denial import KEY_NAME, TENANTS, answering_http
from .tenants import Refusal, Tenants

__all__ = ["AccessLog", "HopLimit", "InboundKeys", "ServerTiming"]

access_logger = logging.getLogger("webreach.access")
CLIENT_LEFT = 499
"""nginx's status for a client that closed the connection before the answer was complete."""

ErrorBody = Callable[[str], JSON]
"""The error JSON of the protocol a path speaks, for a given message."""


class ServerTiming:
    """Gives every response a ``Server-Timing`` header; endpoints that split out upstream and
    web time set their own."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()

        async def timed(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", ()))
                if not any(name.lower() == b"server-timing" for name, _ in headers):
                    own = (time.perf_counter() - started) * 1000
                    headers.append((b"server-timing", f"webreach;dur={own:.2f}".encode()))
                    message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, timed)


class AccessLog:
    """One line per request, written when it ends: a stream when its last byte went out or
    its client left (499), so the status, duration and counts are the final ones.

    It also opens the request's :class:`RequestLog`, which the endpoint and the web calls fill
    in; ``protocols`` names the protocol each path speaks.
    """

    def __init__(self, app: ASGIApp, protocols: Mapping[str, str]) -> None:
        self.app = app
        self._protocols = protocols

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = next((v for k, v in scope["headers"] if k == b"x-request-id"), None)
        record, token = begin_request(
            self._protocols.get(scope["path"], "-"),
            given.decode("latin-1") if given is not None else None,
        )
        record.user = end_user(scope["headers"])
        started = time.perf_counter()
        status = 0
        complete = False
        body_read = left = False

        async def watched() -> Message:
            nonlocal body_read, left
            message = await receive()
            if message["type"] == "http.request":
                body_read = not message.get("more_body", False)
            elif message["type"] == "http.disconnect" and not status:
                left = True  # gone before any answer: whatever the app answers goes nowhere
            return message

        async def observed(message: Message) -> None:
            nonlocal status, complete
            if message["type"] == "http.response.start":
                status = message["status"]
                headers = [*message.get("headers", ()), (b"x-request-id", record.id.encode())]
                message = {**message, "headers": headers}
            elif message["type"] == "http.response.body" and not message.get("more_body"):
                complete = True
            await send(message)

        try:
            await self.app(scope, watched, observed)
        except asyncio.CancelledError:
            status, record.note = status or CLIENT_LEFT, record.note or "cancelled"
            raise
        except ClientDisconnect:
            pass  # the client is gone (or was cut off): nobody to answer, nothing failed here
        except BaseException as error:
            status = status or 500  # what the server answers for an error that escaped the app
            record.note = record.note or f"the server failed ({type(error).__name__})"
            raise
        finally:
            end_request(token)
            status, complete = _settled(scope, record, status, complete, left, body_read)
            if access_logger.isEnabledFor(logging.INFO):
                elapsed = time.perf_counter() - started
                _write_access(scope, record, status, complete, elapsed)


def _settled(
    scope: Scope, record: RequestLog, status: int, complete: bool, left: bool, body_read: bool
) -> tuple[int, bool]:
    """The status and completeness the log tells: a body that timed out is a 408 and a client
    gone before the answer a 499, whatever the app sent, each with its reason noted."""
    late = scope.get(TIMED_OUT)
    if late is not None:
        record.note = (
            f"the request body did not arrive within {late:g} s (WEBREACH_SERVER_BODY_TIMEOUT)"
        )
        return 408, True
    if left:
        if not body_read:
            record.note = record.note or "client left before sending the whole body"
        return CLIENT_LEFT, True
    return status, complete


def _write_access(
    scope: Scope, record: RequestLog, status: int, complete: bool, seconds: float
) -> None:
    if not status:
        status = 500  # the app ended without answering; the server says 500
    elif not complete and record.note is None:
        record.note = "client left mid-response"
        status = CLIENT_LEFT
    elif status == CLIENT_LEFT and record.note is None:
        record.note = "client left before the answer"
    searches, fetches = record.counts()
    client = scope.get("client")
    milliseconds = round(seconds * 1000, 1)
    fields = {
        "method": scope["method"],
        "path": scope["path"],
        "status": status,
        "duration_ms": milliseconds,
        "protocol": record.protocol,
        "stream": record.stream,
        "searches": searches,
        "fetches": fetches,
        "web_errors": record.web_errors,
        "client": client[0] if client else None,
        "key": record.key,
        "user": record.user,
        "note": record.note,
    }
    # Made and handled directly: ``info()`` would also look up the calling frame, which
    # would cost more than the rest of the line.
    line = access_logger.makeRecord(
        access_logger.name,
        logging.INFO,
        __file__,
        0,
        "%s %s %d %.1fms",
        (scope["method"], scope["path"], status, milliseconds),
        None,
        extra={"event": "access", "fields": fields, "request_id": record.id},
    )
    access_logger.handle(line)


_USER_HEADERS = (
    b"x-openwebui-user-name",
    b"x-openwebui-user-email",
    b"x-openwebui-user-id",
)
USER_MAX_CHARS = 120
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def end_user(headers: Iterable[tuple[bytes, bytes]]) -> str | None:
    """Who the front end says the request is for (Open WebUI's user headers: name, email,
    id), clipped and without control characters; None when it names nobody."""
    given = dict.fromkeys(_USER_HEADERS, "")
    for name, value in headers:
        if name in given:
            given[name] = _CONTROL.sub("", _decoded(value)).strip()
    user_name, email, user_id = given.values()
    parts = [user_name, f"<{email}>" if email else "", f"#{user_id}" if user_id else ""]
    shown = " ".join(part for part in parts if part)
    return shown[:USER_MAX_CHARS] or None


def _decoded(value: bytes) -> str:
    """A header as its sender most likely meant it: UTF-8, else Latin-1 (so a stray C1 byte
    is seen, and removed, as the control it is)."""
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        return value.decode("latin-1")


def _json_answer(status: int, body: bytes, *extra: tuple[bytes, bytes]) -> list[Message]:
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        *extra,
    ]
    return [
        {"type": "http.response.start", "status": status, "headers": headers},
        {"type": "http.response.body", "body": body},
    ]


class InboundKeys:
    """Refuses requests without one of the server's keys (``Authorization: Bearer`` or
    ``x-api-key``) with a 401 in the protocol's own error shape. ``open_paths`` need none.

    ``keys`` are (name, key): the request's record takes the name. With ``tenants``, a key
    past one of its limits is answered 429 with ``Retry-After`` before anything else runs,
    and a finished request's web calls and tokens count towards its key's usage."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        keys: Sequence[tuple[str, str]],
        error_body: Callable[[str], ErrorBody],
        refused_body: Callable[[str], ErrorBody] | None = None,
        tenants: Tenants | None = None,
        open_paths: frozenset[str] = frozenset(),
    ) -> None:
        self.app = app
        self._keys = [(name, key.encode()) for name, key in keys if key]
        self._error_body = error_body
        self._refused_body = refused_body or error_body
        self._tenants = tenants
        self._open = open_paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind not in ("http", "websocket") or not self._keys or scope["path"] in self._open:
            await self.app(scope, receive, send)
            return
        found = self._authorised(Headers(scope=scope))
        if found is None:
            body = dumps(self._error_body(scope["path"])("invalid or missing API key")).encode()
            answer = answering_http(scope, send)
            for message in _json_answer(401, body):
                await answer(message)
            return
        name, key = found
        if kind == "websocket":
            # A connection carries many turns: each is admitted, and counted, as it starts.
            scope[KEY_NAME], scope[TENANTS] = name, self._tenants
            with scoped_to_key(key):
                await self.app(scope, receive, send)
            return
        record = request_log()
        record.key = name
        tenants = self._tenants
        quota = NO_QUOTA
        if tenants is not None:
            admitted = await tenants.admit(name)
            if isinstance(admitted, Refusal):
                record.note = admitted.message
                body = dumps(self._refused_body(scope["path"])(admitted.message)).encode()
                wait = (b"retry-after", str(admitted.retry_after).encode())
                for message in _json_answer(429, body, wait):
                    await send(message)
                return
            quota = admitted.quota
        try:
            # What the request stores belongs to its key alone; its web calls reserve from the
            # key's day quota before they run.
            with scoped_to_key(key), allowed_for_key(quota):
                await self.app(scope, receive, send)
        finally:
            if tenants is not None:
                await tenants.spent(name, *record.spent(), *record.tokens())

    def _authorised(self, headers: Headers) -> tuple[str, bytes] | None:
        """The name and key the request offers, when the key is one of the server's."""
        offered = headers.get("x-api-key", "")
        authorization = headers.get("authorization", "")
        if authorization[:7].lower() == "bearer ":
            offered = authorization[7:].strip()
        candidate = offered.encode()
        # Compare against every key so the time taken says nothing about which one matched.
        found: tuple[str, bytes] | None = None
        for name, key in self._keys:
            if hmac.compare_digest(candidate, key) and found is None:
                found = (name, key)
        return found


LOOP_DETECTED = 508


class HopLimit:
    """Takes the webreach servers a request has passed through (``X-Webreach-Hops``, sent by
    webreach's own search providers) as the count its searches carry on, and refuses a request
    past :data:`~webreach.seam.hops.MAX_HOPS` with a 508 in the protocol's error shape: a
    provider pointed back at this server would otherwise search forever."""

    def __init__(self, app: ASGIApp, *, error_body: Callable[[str], ErrorBody]) -> None:
        self.app = app
        self._error_body = error_body
        self._header = HOPS_HEADER.lower().encode("latin-1")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = next((v for k, v in scope["headers"] if k == self._header), None)
        hops = hops_of(given.decode("latin-1")) if given is not None else 0
        if hops < MAX_HOPS:
            with arrived_after(hops):
                await self.app(scope, receive, send)
            return
        message = (
            f"this request has passed through {hops} webreach servers ({HOPS_HEADER}); a "
            "search provider points back at a webreach server (ANTHROPIC_BASE_URL or "
            "OPENAI_BASE_URL?): set its search-only base URL or exclude it "
            "(WEBREACH_SEARCH_EXCLUDE)"
        )
        body = dumps(self._error_body(scope["path"])(message)).encode()
        await send(
            {
                "type": "http.response.start",
                "status": LOOP_DETECTED,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
