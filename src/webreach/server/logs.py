"""The server's log on stderr: the access line, failures and the server's own messages, as
text for people or one JSON object per line for log pipelines.

Only ``webreach`` and ``uvicorn`` loggers write here, at the chosen level; every other library
stays at ``warning``, so an HTTP client's debug lines (URLs with a key in the query, say) never
reach the log.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Any, Literal, TextIO

from .core.journal import current_id

__all__ = [
    "LOG_FORMATS",
    "LOG_LEVELS",
    "JsonFormatter",
    "TextFormatter",
    "announce",
    "configure_logging",
]

LogLevel = Literal["debug", "info", "warning", "error"]
LogFormat = Literal["text", "json"]
LOG_LEVELS: tuple[LogLevel, ...] = ("debug", "info", "warning", "error")
LOG_FORMATS: tuple[LogFormat, ...] = ("text", "json")

_OWN = ("webreach", "uvicorn")
_IN_MESSAGE = {
    "access": frozenset({"method", "path", "status", "duration_ms"}),
    "listening": frozenset({"url"}),
}
"""Fields the text line already shows in its message, by event."""


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
            pairs.append(f"id={request_id}")
        line = f"{_timestamp(record)} {record.levelname} {record.getMessage()}"
        if pairs:
            line = f"{line} [{' '.join(pairs)}]"
        if record.exc_info:
            line = f"{line}\n{self.formatException(record.exc_info)}"
        return line


def _text_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    text = str(value)
    return json.dumps(text, ensure_ascii=False) if not text or " " in text else text


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
        return json.dumps(data, ensure_ascii=False, default=str)


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
    logging.getLogger("uvicorn.access").disabled = True
    return handler


def announce(message: str, **fields: Any) -> None:
    """A line the operator sees whatever the level (``serving on …``), in the log's format."""
    record = logging.LogRecord("webreach.server", logging.INFO, __file__, 0, message, (), None)
    record.event = "listening"
    record.fields = fields
    for handler in logging.getLogger("webreach").handlers:
        handler.handle(record)
