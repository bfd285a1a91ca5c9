"""A started process's stderr, read line by line as it comes, so a test waits for what the
process says (a start-up line, a stopping line) instead of a fixed time."""

from __future__ import annotations

import queue
import subprocess
import threading
import time
from typing import IO, Any

import pytest

__all__ = ["WAIT", "StderrLines"]

WAIT = 60.0
"""Seconds a wait for a line or an exit lasts at most; it ends as soon as the line comes."""


class StderrLines:
    """The lines ``process`` writes to stderr (a pipe), text or bytes, as they come."""

    def __init__(self, process: subprocess.Popen[Any]) -> None:
        self.process = process
        self.seen: list[str] = []
        self._lines: queue.Queue[str | None] = queue.Queue()
        assert process.stderr is not None
        threading.Thread(target=self._read, args=(process.stderr,), daemon=True).start()

    def _read(self, stream: IO[Any]) -> None:
        """Read to the end, then close the pipe: this thread is its only reader, and the
        process object never closes it for us."""
        with stream:
            for line in stream:
                self._lines.put(line.decode(errors="replace") if isinstance(line, bytes) else line)
        self._lines.put(None)

    def wait_for(self, text: str) -> str:
        """The first line from now on that holds ``text``."""
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            line = self._lines.get(timeout=WAIT)
            if line is None:
                pytest.fail(f"the server ended before saying {text!r}: {''.join(self.seen)}")
            self.seen.append(line)
            if text in line:
                return line
        pytest.fail(f"the server never said {text!r}: {''.join(self.seen)}")

    def ended(self) -> tuple[int, str]:
        """The exit status, and everything the process wrote to stderr."""
        code = self.process.wait(timeout=WAIT)
        while (line := self._lines.get(timeout=WAIT)) is not None:
            self.seen.append(line)
        return code, "".join(self.seen)
