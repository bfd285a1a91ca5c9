"""The log's formatters, fed what a client controls: nothing it sends may start a line of its
own or reach the operator's terminal as a control sequence (the process-level checks are in
test_server_connections.py)."""

from __future__ import annotations

import json
import logging
import sys

import pytest

from webreach.server.logs import JsonFormatter, TextFormatter, escape_controls

FORGED = "\n2026-01-01T00:00:00.000Z INFO GET /healthz 200 0.1ms"
HOSTILE = FORGED + "\r\x1b[31m\x9b2J\x7f\u2028\u2029\u202e\x00"


def record(message: str, *, exc: bool = False, **fields: object) -> logging.LogRecord:
    info = None
    if exc:
        try:
            raise ValueError(message)
        except ValueError:
            info = sys.exc_info()
    made = logging.LogRecord("webreach.test", logging.ERROR, __file__, 1, message, (), info)
    made.fields = fields
    made.request_id = "id" + HOSTILE
    return made


def assert_clean(text: str) -> None:
    for char in ("\r", "\x1b", "\x9b", "\x7f", "\u2028", "\u2029", "\u202e", "\x00"):
        assert char not in text, f"{char!r} reached the line"


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("a\nb", "a\\nb"),
        ("\x1b[31m", "\\x1b[31m"),
        ("\x9b", "\\x9b"),
        ("\u2028", "\\u2028"),
        ("plain é ü 字", "plain é ü 字"),
    ],
)
def test_escape_controls(raw: str, shown: str) -> None:
    assert escape_controls(raw) == shown


def test_text_lines_escape_message_fields_and_id() -> None:
    line = TextFormatter().format(record("path " + HOSTILE, client="x" + HOSTILE, note=HOSTILE))
    assert "\n" not in line
    assert_clean(line)
    assert line.count("\\n2026-01-01") == 4


def test_a_traceback_cannot_start_a_line_of_its_own() -> None:
    """Only a record's first line starts at the margin; the traceback, exception message
    included, is indented below it."""
    line = TextFormatter().format(record("failed" + HOSTILE, exc=True))
    rest = line.split("\n")[1:]
    assert rest and all(part.startswith("  ") for part in rest)
    assert "ValueError" in line
    assert_clean(line)


def test_json_lines_escape_what_json_leaves_raw() -> None:
    line = JsonFormatter().format(record("m" + HOSTILE, exc=True, path="/v1" + HOSTILE))
    assert "\n" not in line
    assert_clean(line)
    data = json.loads(line)
    assert data["path"] == "/v1" + HOSTILE
    assert data["message"] == "m" + HOSTILE
