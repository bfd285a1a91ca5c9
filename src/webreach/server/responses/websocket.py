"""The WebSocket mode of ``/v1/responses``: a client sends ``response.create`` messages (the
request body plus ``type``) and gets, for each, the events a streamed response sends over SSE,
each as one message.

Turns run one at a time per connection, in the order they were sent. The last response of the
connection is kept in its memory, so ``previous_response_id`` continues it even with
``store: false``; an older or ``store: false`` id from elsewhere is ``previous_response_not_found``,
a stored one is read from the store as over HTTP. A continuation that fails forgets the
response it continued. A client that leaves mid-turn ends the turn and its upstream request.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field

from starlette.types import Scope
from starlette.websockets import WebSocket, WebSocketDisconnect

from ...seam import cancel_and_wait
from ..core.loop.context import ServerContext
from ..core.loop.runner import TurnRunner
from ..core.turn.budgets import NO_QUOTA, KeyQuota, allowed_for_key
from ..core.turn.errors import RequestError, ServerFailure
from ..core.turn.limits import Stopping, TurnLimits
from ..core.turn.operator_log import RequestLog, begin_request, end_request
from ..core.turn.shape import JSON, Turn
from ..core.wire.codec import INTERNAL, Reply, stream_frames
from ..core.wire.framing import dumps, error_type
from ..core.wire.inbound import parse_json
from ..endpoints import CANNOT_CONTINUE_HERE, _citation_style
from ..middleware import CLIENT_LEFT, _write_access, access_logger
from ..socket_denial import KEY_NAME, TENANTS
from ..tenants import Refusal, Tenants
from .socket_codec import LineCodec, messages_of

__all__ = ["CONNECTION_LIMIT_SECONDS", "LIMIT_REACHED", "responses_socket"]

logger = logging.getLogger("webreach.server")

CONNECTION_LIMIT_SECONDS = 3600.0
"""How long one connection may last (60 minutes, as the Open Responses specification says)."""
LIMIT_REACHED = "websocket_connection_limit_reached"
PENDING_TURNS = 4
"""``response.create`` messages read ahead of the running turn; past them the socket is not
read until a turn ends, so a client cannot queue unbounded work."""
_TRANSPORT_FIELDS = ("stream", "stream_options", "background")
_CODEC = LineCodec()
_LIMIT = object()
"""Queued when the connection's time is up: the turn before it still ends first."""


def _refused(
    status: int, message: str, *, code: str | None = None, param: str | None = None
) -> JSON:
    """The WebSocket error envelope: an HTTP-style ``status`` and an ``error`` with a code."""
    kind = error_type(status, server="server_error")
    error = {"type": kind, "code": code or kind, "message": message, "param": param}
    return {"type": "error", "status": status, "error": error}


def _conversation(body: JSON, reply: Reply) -> list[JSON]:
    """The items a continuation of ``reply`` starts from: its whole input, then its output."""
    given = body.get("input")
    items: list[object] = [{"role": "user", "content": given}] if isinstance(given, str) else []
    if isinstance(given, list):
        items = list(given)
    output = reply.get("output")
    if isinstance(output, list):
        items += output
    return [item for item in items if isinstance(item, dict)]


@dataclass
class _Last:
    """The connection's last response: its id and the conversation it ended."""

    id: str
    items: list[JSON] = field(default_factory=list)


class _Connection:
    def __init__(self, websocket: WebSocket) -> None:
        self.socket = websocket
        state = websocket.app.state
        self.context: ServerContext = state.context
        self.stopping: Stopping | None = getattr(state, "stopping", None)
        self.tenants: Tenants | None = websocket.scope.get(TENANTS)
        self.key_name: str | None = websocket.scope.get(KEY_NAME)
        self.last: _Last | None = None
        self.pending: asyncio.Queue[object] = asyncio.Queue(PENDING_TURNS)
        scope = websocket.scope
        self.access_scope = {"method": "WEBSOCKET", "path": scope["path"], **_client(scope)}

    async def serve(self) -> None:
        reader = asyncio.create_task(self._read(), name="webreach-socket-read")
        worker = asyncio.create_task(self._work(), name="webreach-socket-turns")
        try:
            await asyncio.wait({reader, worker}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            await cancel_and_wait([reader, worker])
        for task in (reader, worker):
            if not task.cancelled() and task.exception() is not None:
                error = task.exception()
                if not isinstance(error, WebSocketDisconnect):
                    logger.error("the WebSocket connection failed", exc_info=error)

    async def _read(self) -> None:
        """Messages into :attr:`pending` until the client leaves; the time limit once."""
        loop = asyncio.get_running_loop()
        ends = loop.time() + CONNECTION_LIMIT_SECONDS
        limited = False
        while True:
            try:
                async with asyncio.timeout(None if limited else max(0.0, ends - loop.time())):
                    message = await self.socket.receive()
            except TimeoutError:
                limited = True
                await self.pending.put(_LIMIT)
                continue
            if message["type"] == "websocket.disconnect":
                return
            text, data = message.get("text"), message.get("bytes")
            raw = text.encode() if isinstance(text, str) else data
            if isinstance(raw, bytes) and not limited:
                await self.pending.put(raw)

    async def _work(self) -> None:
        while True:
            raw = await self.pending.get()
            if raw is _LIMIT:
                message = "this connection reached its 60-minute limit; open a new WebSocket"
                await self._send(_refused(400, message, code=LIMIT_REACHED))
                await self.socket.close(1000)
                return
            if isinstance(raw, bytes):
                await self._turn(raw)

    async def _send(self, event: JSON) -> None:
        await self.socket.send_text(dumps(event))

    async def _turn(self, raw: bytes) -> None:
        """One ``response.create``: admitted, counted against the key and logged (one access
        line, method ``WEBSOCKET``) like a request."""
        record, token = begin_request("responses")
        record.key, record.stream = self.key_name, True
        tenants, name = self.tenants, self.key_name
        started = time.perf_counter()
        status = CLIENT_LEFT
        try:
            quota = NO_QUOTA
            if tenants is not None and name is not None:
                admitted = await tenants.admit(name)
                if isinstance(admitted, Refusal):
                    record.note = admitted.message
                    status = 429
                    await self._send(_refused(429, admitted.message))
                    return
                quota = admitted.quota
            status = await self._answer(raw, quota, record)
        except asyncio.CancelledError:
            record.note = record.note or "client left mid-turn"
            raise
        finally:
            end_request(token)
            if tenants is not None and name is not None:
                await tenants.spent(name, *record.spent(), *record.tokens())
            if access_logger.isEnabledFor(logging.INFO):
                elapsed = time.perf_counter() - started
                _write_access(self.access_scope, record, status, True, elapsed)

    async def _answer(self, raw: bytes, quota: KeyQuota, record: RequestLog) -> int:
        """The turn, and the status its access line shows (200 once it streams, as over SSE)."""
        previous: str | None = None
        try:
            body = self._request(raw)
            previous = _previous_id(body)
            body = await self._expanded(body, previous)
            turn = self._parse(body)
            with allowed_for_key(quota):
                reply = await self._run(turn, body, record)
        except (RequestError, ServerFailure) as failure:
            record.note = failure.message
            self._forget(previous)
            code = failure.code if isinstance(failure, RequestError) else None
            param = failure.param if isinstance(failure, RequestError) else None
            await self._send(_refused(failure.status, failure.message, code=code, param=param))
            return failure.status
        except WebSocketDisconnect:
            raise
        except Exception:
            # What HTTP answers 500 for: this turn fails, the connection and its next turns go on.
            logger.exception("a WebSocket turn failed")
            record.note = INTERNAL
            self._forget(previous)
            await self._send(_refused(500, INTERNAL))
            return 500
        if reply is None:
            self._forget(previous)
            return 200
        identity = reply.get("id")
        if isinstance(identity, str):
            self.last = _Last(identity, _conversation(body, reply))
        return 200

    def _request(self, raw: bytes) -> JSON:
        settings = self.context.settings
        if len(raw) > settings.server_max_body_bytes:
            raise RequestError(
                f"the message is larger than this server accepts "
                f"({settings.server_max_body_bytes:,} bytes; WEBREACH_SERVER_MAX_BODY_BYTES)",
                status=413,
            )
        message = parse_json(raw)
        if message.get("type") != "response.create":
            raise RequestError(
                "type: every message must be a `response.create` event", param="type"
            )
        for name in _TRANSPORT_FIELDS:
            if name in message:
                raise RequestError(
                    f"{name}: not sent in WebSocket mode (every response streams here)",
                    param=name,
                )
        body = {key: value for key, value in message.items() if key != "type"}
        body["stream"] = True
        return body

    async def _expanded(self, body: JSON, previous: str | None) -> JSON:
        """The body with the conversation it continues: from the connection's last response,
        else from the store, as over HTTP."""
        last = self.last
        store = self.context.store
        if previous is None or last is None or last.id != previous:
            return await _CODEC.prepare(body, store)
        rest = {key: value for key, value in body.items() if key != "previous_response_id"}
        given = rest.get("input")
        items = [{"role": "user", "content": given}] if isinstance(given, str) else given
        rest["input"] = [*last.items, *(items if isinstance(items, list) else [])]
        prepared = await _CODEC.prepare(rest, store)
        return {**prepared, "previous_response_id": previous}

    def _parse(self, body: JSON) -> Turn:
        try:
            turn = _CODEC.parse(body)
        except RequestError:
            raise
        except Exception:
            logger.exception("an unexpected request shape reached the responses parser")
            raise RequestError("the request has a shape this server cannot read") from None
        context = self.context
        if turn.continued and context.upstream.continuation == "off":
            raise RequestError(CANNOT_CONTINUE_HERE, param="messages")
        turn.store = turn.store and context.store is not None
        turn.citations = _citation_style(self.socket, context.settings)
        return turn

    async def _run(self, turn: Turn, body: JSON, record: RequestLog) -> Reply | None:
        """The turn's events as messages; its reply when it finished well, else None."""
        context = self.context
        settings = context.settings
        limits = TurnLimits.starting_now(settings.max_steps, settings.turn_timeout, self.stopping)
        runner = TurnRunner(turn, context, limits)
        record.usage = runner.usage
        finished: list[Reply] = []

        async def keep(reply: Reply) -> None:
            finished.append(reply)
            await _CODEC.remember(body, reply, context.store)

        try:
            await runner.start()
            async for frames in stream_frames(_CODEC, turn, runner.events(), keep):
                for message in messages_of(frames):
                    await self.socket.send_text(message)
        finally:
            await runner.aclose()
        return finished[0] if finished else None

    def _forget(self, previous: str | None) -> None:
        """A continuation that failed evicts the response it named."""
        if previous is not None and self.last is not None and self.last.id == previous:
            self.last = None


def _client(scope: Scope) -> dict[str, object]:
    client = scope.get("client")
    return {"client": client} if client else {}


def _previous_id(body: JSON) -> str | None:
    previous = body.get("previous_response_id")
    return previous if isinstance(previous, str) and previous else None


async def responses_socket(websocket: WebSocket) -> None:
    """``/v1/responses`` over a WebSocket (the middleware checked its key and origin)."""
    await websocket.accept()
    await _Connection(websocket).serve()
