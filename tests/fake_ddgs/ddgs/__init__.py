"""A stand-in for the ``ddgs`` library, put first on ``PYTHONPATH`` of a subprocess under test.

It replays rows from the JSON file in ``FAKE_DDGS_ROWS`` ({query: rows}) and appends each
call to ``FAKE_DDGS_LOG``, so the real command line runs offline down to the library boundary.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

from .exceptions import DDGSException

__all__ = ["DDGS"]


class DDGS:
    def __init__(self, proxy: str | None = None, timeout: int | None = 5, **_: Any) -> None:
        self.timeout = timeout

    def text(self, query: str, **kwargs: Any) -> list[dict[str, Any]]:
        with open(os.environ["FAKE_DDGS_LOG"], "a", encoding="utf-8") as log:
            log.write(json.dumps({"query": query, **kwargs, "at": time.time()}) + "\n")
        time.sleep(float(os.environ.get("FAKE_DDGS_DELAY", "0")))
        with open(os.environ["FAKE_DDGS_ROWS"], encoding="utf-8") as rows:
            table: dict[str, Any] = json.load(rows)
        if query not in table:
            raise DDGSException("No results found.")
        answer = table[query]
        if isinstance(answer, str):
            raise DDGSException(answer)
        return list(answer)[: kwargs.get("max_results") or None]
