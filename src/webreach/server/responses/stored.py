"""Responses requests that name what an earlier response produced (``previous_response_id``,
``item_reference``), and keeping a response so a later one can.

DeepSeek's web-tools API refuses both; clients with ``store: true`` defaults (the Vercel AI SDK,
Codex-style agents) send them on every second turn, so the server resolves them from its store
when it still holds them, and answers 400 naming the id when it does not.
"""

from __future__ import annotations

from ..core.state.store import ResponseStore
from ..core.turn.errors import RequestError
from ..core.turn.shape import JSON
from ..core.wire.codec import Reply
from ..core.wire.fields import NonEmptyString, Request, when_missing
from .shapes_in import ItemHead, read

__all__ = ["NOT_FOUND", "expand", "remember"]

NOT_FOUND = "previous_response_not_found"
"""The ``error.code`` of a ``previous_response_id`` the server does not hold, as OpenAI's."""


class _Chained(Request):
    """What the store reads of a request, before the request itself is checked."""

    input: object = None
    previous_response_id: object = None
    store: object = None

    @property
    def items(self) -> list[object]:
        """The input as items (a string is one user message)."""
        if isinstance(self.input, str):
            return [{"role": "user", "content": self.input}]
        return list(self.input) if isinstance(self.input, list) else []


class _Reference(Request):
    id: NonEmptyString = when_missing()


class _Previous(Request):
    previous_response_id: NonEmptyString


def _references(items: list[object]) -> dict[int, str]:
    """The id each ``item_reference`` names, by its place in ``items``."""
    ids: dict[int, str] = {}
    for i, item in enumerate(items):
        head = _peek(item)
        if head is not None and head.type == "item_reference":
            reference = read(_Reference, item, "input: an `item_reference` needs an `id`")
            ids[i] = reference.id
    return ids


def _peek(item: object) -> ItemHead | None:
    """The item's head, or None for an item that is not an object (refused when parsed)."""
    try:
        return read(ItemHead, item, "")
    except RequestError:
        return None


async def expand(body: JSON, store: ResponseStore | None) -> JSON:
    """``body`` with the conversation of ``previous_response_id`` before its input, and each
    ``item_reference`` replaced by the item it names."""
    chained = _Chained.model_validate(body)
    previous = chained.previous_response_id
    items = chained.items
    referenced = _references(items)
    if previous is None and not referenced:
        return body
    if store is None:
        what = "previous_response_id" if previous is not None else "input"
        raise RequestError(
            f"{what}: this server keeps no responses (WEBREACH_STORE_TTL is 0); send the whole "
            "conversation in `input`",
            param=what,
            code=NOT_FOUND if previous is not None else None,
        )
    before: list[JSON] = []
    if previous is not None:
        previous_id = read(
            _Previous,
            body,
            "previous_response_id: must be a non-empty string",
            "previous_response_id",
        ).previous_response_id
        found = await store.conversation(previous_id)
        if found is None:
            raise RequestError(
                f"previous_response_id: response `{previous_id}` {_gone(store)}",
                param="previous_response_id",
                code=NOT_FOUND,
            )
        before = found
    kept = await store.items(list(referenced.values()))
    for item_id in referenced.values():
        if item_id not in kept:
            raise RequestError(f"input: item `{item_id}` {_gone(store)}", param="input")
    expanded = [kept[referenced[i]] if i in referenced else item for i, item in enumerate(items)]
    return {**body, "input": [*before, *expanded]}


def _gone(store: ResponseStore) -> str:
    """Why a kept id is not found: the store cannot tell expired, evicted and never kept (or
    kept for another API key) apart, so it names them all, and the limits behind the first two."""
    return (
        "is unknown or has expired: it was never stored here (or was stored for another API "
        f"key), or it has expired (WEBREACH_STORE_TTL is {store.ttl:g} s) or was evicted to keep "
        "the store within its size (WEBREACH_STORE_MAX_MB); send the whole conversation in "
        "`input` instead"
    )


async def remember(body: JSON, response: Reply, store: ResponseStore | None) -> None:
    """Keep a finished response (its input and output) unless the client said ``store: false``."""
    chained = _Chained.model_validate(body)
    if store is None or chained.store is False:
        return
    kept = _Kept.model_validate(response)
    conversation = [item for item in (*chained.items, *kept.output) if isinstance(item, dict)]
    await store.save_response(kept.id, conversation)


class _Kept(Request):
    """What is kept of a response the renderer made: its id and output items."""

    id: str
    output: list[object]
