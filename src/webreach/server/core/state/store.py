"""What the server keeps between requests, when asked to: responses, their items, read pages.

A Responses request with ``store: true`` (that API's default) keeps its output items and its
whole conversation, so later requests may name them (``item_reference``,
``previous_response_id``); a page read from a link is kept by its tool-use id, for clients
that send the call back without its ``signature``. Everything lives in the configured cache
store (memory, SQLite or Redis, so replicas share it) for ``WEBREACH_STORE_TTL`` seconds. The
encrypted ``signature`` stays the stateless path: it needs no store at all.

When the server has inbound keys, everything is kept under the key that made it (a hash of
it, never the key): another key's ids are not found, and reusing one stores a separate copy.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections.abc import Awaitable, Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import partial
from typing import TypeVar

from ....seam import CacheStore
from ....seam.cache import Backoff
from ..turn.errors import ServerFailure
from ..turn.shape import JSON

__all__ = ["ResponseStore", "StoreUnavailable", "key_scope", "scoped_to_key"]

logger = logging.getLogger("webreach.server")

_PREFIX = "webreach:store:"
_CONCURRENCY = 16
"""Store operations of one batch in flight at once: enough that a turn's writes take about
one round trip, few enough that a long conversation does not open a connection per item."""

T = TypeVar("T")

_scope: ContextVar[str] = ContextVar("webreach_store_scope", default="")


def key_scope(key: str | bytes) -> str:
    """The store scope of an inbound key: a hash, so neither store keys nor logs hold the key,
    and every replica derives the same one."""
    raw = key.encode() if isinstance(key, str) else key
    return hashlib.sha256(b"webreach store scope\0" + raw).hexdigest()[:32]


@contextmanager
def scoped_to_key(key: str | bytes) -> Iterator[None]:
    """Everything the store keeps or finds within this block belongs to ``key``'s scope; the
    inbound-key middleware wraps each authorised request in it."""
    token = _scope.set(key_scope(key))
    try:
        yield
    finally:
        _scope.reset(token)


class StoreUnavailable(ServerFailure):
    """The store did not answer a read the request depends on: a 503, worth retrying."""

    def __init__(self, what: str) -> None:
        super().__init__(
            503,
            f"{what}: the response store is not answering; try again shortly, or send the "
            "whole conversation in `input`",
        )


class ResponseStore:
    """Typed access to the keys of the store.

    A store that fails answers nothing rather than failing the turn: writes are dropped and a
    read the request needs is a 503, with one warning per outage; after a failure the store is
    left alone for a :class:`Backoff` (1 s doubling to 30 s) so each later operation does not
    wait for it again. Each batch of operations (a response's items, the references of a
    request) runs concurrently under one ``timeout``, so a store that hangs costs a turn
    about one timeout, not one per item.
    """

    def __init__(
        self,
        store: CacheStore,
        ttl: float,
        *,
        timeout: float = 2.0,
        retry_first: float = 1.0,
        retry_most: float = 30.0,
    ) -> None:
        self._store = store
        self.ttl = ttl
        self.timeout = timeout
        self._backoff = Backoff(retry_first, retry_most)

    def _key(self, key: str) -> str:
        scope = _scope.get()
        return f"{_PREFIX}{scope}:{key}" if scope else _PREFIX + key

    async def _batch(self, work: list[Callable[[], Awaitable[T]]], doing: str) -> list[T] | None:
        """The results of ``work``, run concurrently under one deadline; None when the store
        is backing off or failed."""
        if not self._backoff.ready():
            return None
        limit = asyncio.Semaphore(_CONCURRENCY)

        async def limited(operation: Callable[[], Awaitable[T]]) -> T:
            async with limit:
                return await operation()

        try:
            async with asyncio.timeout(self.timeout), asyncio.TaskGroup() as group:
                tasks = [group.create_task(limited(step)) for step in work]
        except Exception as error:
            if self._backoff.failed():
                logger.warning(
                    "the response store failed to %s (%s); responses are neither kept nor found "
                    "until it answers, tried again in %g s",
                    doing,
                    _cause(error),
                    self._backoff.delay,
                )
            return None
        results = [task.result() for task in tasks]
        outage = self._backoff.succeeded()
        if outage is not None:
            logger.info("the response store answers again after %.0f s", outage)
        return results

    async def _get_many(self, keys: list[str], what: str) -> list[bytes | None]:
        store = self._store
        found = await self._batch([partial(store.get, self._key(key)) for key in keys], "read")
        if found is None:
            raise StoreUnavailable(what)
        return found

    async def _set_many(self, entries: dict[str, bytes]) -> None:
        store, ttl = self._store, self.ttl
        await self._batch(
            [partial(store.set, self._key(key), value, ttl) for key, value in entries.items()],
            "write",
        )

    async def save_page(self, call_id: str, signature: str) -> None:
        await self._set_many({f"page:{call_id}": signature.encode()})

    async def page(self, call_id: str) -> str | None:
        """The encrypted page kept for ``call_id``; None when it is not (or the store fails:
        the page is then simply not restored)."""
        try:
            (raw,) = await self._get_many([f"page:{call_id}"], "page")
        except StoreUnavailable:
            return None
        return raw.decode() if raw is not None else None

    async def save_response(self, response_id: str, conversation: list[JSON]) -> None:
        """The response's whole conversation (its input, then its output items), and each item
        under its own id."""
        entries = {f"response:{response_id}": _dumps(conversation)}
        for item in conversation:
            item_id = item.get("id")
            if isinstance(item_id, str) and item_id:
                entries[f"item:{item_id}"] = _dumps(item)
        await self._set_many(entries)

    async def conversation(self, response_id: str) -> list[JSON] | None:
        """The conversation kept for ``response_id``; None when there is none.

        Raises :class:`StoreUnavailable` when the store does not answer.
        """
        (raw,) = await self._get_many([f"response:{response_id}"], "previous_response_id")
        return _objects(_loads(raw))

    async def items(self, item_ids: Iterable[str]) -> dict[str, JSON]:
        """The kept items of ``item_ids`` that are found.

        Raises :class:`StoreUnavailable` when the store does not answer.
        """
        wanted = list(dict.fromkeys(item_ids))
        if not wanted:
            return {}
        raws = await self._get_many([f"item:{item_id}" for item_id in wanted], "input")
        found: dict[str, JSON] = {}
        for item_id, raw in zip(wanted, raws, strict=True):
            item = _loads(raw)
            if isinstance(item, dict):
                found[item_id] = item
        return found


def _cause(error: BaseException) -> str:
    """The name of what failed, from inside the task group's exception group."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return type(error).__name__


def _dumps(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def _loads(raw: bytes | None) -> object:
    if raw is None:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return None


def _objects(value: object) -> list[JSON] | None:
    if not isinstance(value, list):
        return None
    return [item for item in value if isinstance(item, dict)]
