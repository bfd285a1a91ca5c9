"""What the server keeps between requests, when asked to: responses, their items, read pages.

A Responses request with ``store: true`` (that API's default) keeps its output items and its
whole conversation, so later requests may name them (``item_reference``,
``previous_response_id``); a page read from a link is kept by its tool-use id, for clients
that send the call back without its ``signature``. Everything lives in the configured cache
store (memory, SQLite or Redis, so replicas share it) for ``WEBREACH_STORE_TTL`` seconds. The
sealed ``signature`` stays the stateless path: it needs no store at all.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable

from ...seam import CacheStore
from .turn import JSON

__all__ = ["ResponseStore"]

logger = logging.getLogger("webreach.server")

_PREFIX = "webreach:store:"


class ResponseStore:
    """Typed access to the keys of the store; a store that fails answers nothing (with a
    warning) rather than failing the request."""

    def __init__(self, store: CacheStore, ttl: float) -> None:
        self._store = store
        self.ttl = ttl

    async def _get(self, key: str) -> bytes | None:
        try:
            return await self._store.get(_PREFIX + key)
        except Exception as error:
            logger.warning("the response store failed to read: %s", type(error).__name__)
            return None

    async def _set(self, key: str, value: bytes) -> None:
        try:
            await self._store.set(_PREFIX + key, value, self.ttl)
        except Exception as error:
            logger.warning("the response store failed to write: %s", type(error).__name__)

    async def _json(self, key: str) -> object:
        raw = await self._get(key)
        if raw is None:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            return None

    async def save_page(self, call_id: str, signature: str) -> None:
        await self._set(f"page:{call_id}", signature.encode())

    async def page(self, call_id: str) -> str | None:
        raw = await self._get(f"page:{call_id}")
        return raw.decode() if raw is not None else None

    async def save_response(self, response_id: str, conversation: list[JSON]) -> None:
        """The response's whole conversation (its input, then its output items), and each item
        under its own id."""
        await self._set(f"response:{response_id}", _dumps(conversation))
        for item in conversation:
            item_id = item.get("id")
            if isinstance(item_id, str) and item_id:
                await self._set(f"item:{item_id}", _dumps(item))

    async def conversation(self, response_id: str) -> list[JSON] | None:
        found = await self._json(f"response:{response_id}")
        return _objects(found)

    async def items(self, item_ids: Iterable[str]) -> dict[str, JSON]:
        found: dict[str, JSON] = {}
        for item_id in dict.fromkeys(item_ids):
            item = await self._json(f"item:{item_id}")
            if isinstance(item, dict):
                found[item_id] = item
        return found


def _dumps(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def _objects(value: object) -> list[JSON] | None:
    if not isinstance(value, list):
        return None
    return [item for item in value if isinstance(item, dict)]
