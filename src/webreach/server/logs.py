"""The server's log on stderr: the access line, failures and the server's own messages, as
text for people or one JSON object per line for log pipelines.

Only ``webreach`` and ``uvicorn`` loggers write here, at the chosen level; every other library
stays at ``warning``, so an HTTP client's debug lines (URLs with a key in the query, say) never
reach the log.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import time
from typing import Any, Literal, TextIO

from .core.turn.operator_log import current_id

__all__ = [
    "LOG_FORMATS",
    "LOG_LEVELS",
    "JsonFormatter",
    "TextFormatter",
    "announce",
    "configure_logging",
    "escape_controls",
]

LogLevel = Literal["debug", "info", "warning", "error"]
LogFormat = Literal["text", "json"]
LOG_LEVELS: tuple[LogLevel, ...] = ("debug", "info", "warning", "error")
LOG_FORMATS: tuple[LogFormat, ...] = ("text", "json")

_OWN = ("webreach", "uvicorn")
_IN_MESSAGE = {
    "access": frozenset({"method", "path", "status", "duration_ms"}),
    "listening": frozenset({"url"}),
    "turn_step": frozenset(
        {"step", "web_tools", "client_tools", "no_web_tools", "tool_choice", "nudge"}
    ),
    "turn_calls": frozenset({"step", "calls", "searches_left", "reads_left"}),
    "turn_stopped": frozenset({"steps"}),
}
"""Fields the text line already shows in its message, by event."""


_CONTROLS = r"\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
"""Beyond C0: DEL, C1 (its CSI, 0x9b, starts a terminal escape as ESC [ does), the Unicode line
and paragraph separators, and the bidirectional controls that make a line read other than it
is."""
_UNSAFE = re.compile(rf"[\x00-\x1f{_CONTROLS}]")
_UNSAFE_IN_JSON = re.compile(rf"[{_CONTROLS}]")
"""What ``json.dumps`` leaves raw (it escapes C0 itself)."""
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escaped(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    return _NAMED.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def escape_controls(text: str) -> str:
    """``text`` with every control character written as an escape (``\\n``, ``\\x1b``,
    ``\\u2028``): a client's bytes (a decoded path, a header) can neither start a forged
    line nor drive the operator's terminal."""
    return _UNSAFE.sub(_escaped, text) if _UNSAFE.search(text) else text


def _json_safe(line: str) -> str:
    if _UNSAFE_IN_JSON.search(line) is None:
        return line
    return _UNSAFE_IN_JSON.sub(lambda match: f"\\u{ord(match.group()):04x}", line)


_second: list[Any] = [-1, ""]
"""The last whole second formatted, and its text: lines come many to a second."""


def _timestamp(record: logging.LogRecord) -> str:
    """UTC, to the millisecond: ``2026-01-02T03:04:05.678Z``."""
    whole = int(record.created)
    if whole != _second[0]:
        _second[:] = [whole, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole))]
    return f"{_second[1]}.{int(record.msecs):03d}Z"


def _fields(record: logging.LogRecord) -> dict[str, Any]:
    fields = getattr(record, "fields", None)
    return fields if isinstance(fields, dict) else {}


class _RequestId(logging.Filter):
    """Stamps each line written during a request with the request's id."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):
            record.request_id = current_id()
        return True


class TextFormatter(logging.Formatter):
    """``<time> <LEVEL> <message> [key=value …]``: the message for people, the fields (values
    with spaces quoted) for grep."""

    def format(self, record: logging.LogRecord) -> str:
        shown = _IN_MESSAGE.get(getattr(record, "event", ""), frozenset())
        pairs = [
            f"{name}={_text_value(value)}"
            for name, value in _fields(record).items()
            if value is not None and name not in shown
        ]
        request_id = getattr(record, "request_id", None)
        if request_id is not None:
            pairs.append(f"id={escape_controls(str(request_id))}")
        message = escape_controls(record.getMessage())
        line = f"{_timestamp(record)} {record.levelname} {message}"
        if pairs:
            line = f"{line} [{' '.join(pairs)}]"
        if record.exc_info:
            # Indented, so that only a record's first line starts at the margin.
            trace = self.formatException(record.exc_info).split("\n")
            line = "\n  ".join([line, *map(escape_controls, trace)])
        return line


def _text_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    text = str(value)
    if not text or " " in text:
        return _json_safe(json.dumps(text, ensure_ascii=False))
    return escape_controls(text)


class JsonFormatter(logging.Formatter):
    """One JSON object per line. Every line has ``time``, ``level``, ``event``, ``id`` (the
    request's, or null) and ``message``; each event adds its own fields, always all of them
    (null when they do not apply), so the keys of an event never vary."""

    def format(self, record: logging.LogRecord) -> str:
        data: dict[str, Any] = {
            "time": _timestamp(record),
            "level": record.levelname.lower(),
            "event": getattr(record, "event", "log"),
            "id": getattr(record, "request_id", None),
            "message": record.getMessage(),
        }
        if data["event"] == "log":
            data["logger"] = record.name
        data.update(_fields(record))
        if record.exc_info:
            data["exception"] = self.formatException(record.exc_info)
        return _json_safe(json.dumps(data, ensure_ascii=False, default=str))


def configure_logging(
    level: str = "info", format: str = "text", stream: TextIO | None = None
) -> logging.Handler:
    """Send the server's log to ``stream`` (stderr) at ``level`` (one of :data:`LOG_LEVELS`)
    as ``format`` (:data:`LOG_FORMATS`); returns the handler."""
    # No line shows the thread or process, so records need not look them up.
    logging.logThreads = logging.logProcesses = logging.logMultiprocessing = False
    handler = logging.StreamHandler(stream if stream is not None else sys.stderr)
    handler.setFormatter(JsonFormatter() if format == "json" else TextFormatter())
    handler.addFilter(_RequestId())
    numeric = logging.getLevelName(level.upper())
    for name in _OWN:
        own = logging.getLogger(name)
        own.handlers[:] = [handler]
        own.propagate = False
        own.setLevel(numeric)
    # uvicorn's own notices (startup, shutdown) repeat what webreach says, except at debug.
    quiet = numeric if numeric <= logging.DEBUG else max(numeric, logging.WARNING)
    logging.getLogger("uvicorn").setLevel(quiet)
    # The event loop's errors (a task that failed unawaited) in the same format, not raw.
    loop = logging.getLogger("asyncio")
    loop.handlers[:] = [handler]
    loop.propagate = False
    loop.setLevel(max(numeric, logging.WARNING))
    logging.getLogger("uvicorn.access").disabled = True
    return handler


def announce(message: str, **fields: Any) -> None:
    """A line the operator sees whatever the level (``serving on …``), in the log's format."""
    record = logging.LogRecord("webreach.server", logging.INFO, __file__, 0, message, (), None)
    record.event = "listening"
    record.fields = fields
    for handler in logging.getLogger("webreach").handlers:
        handler.handle(record)
