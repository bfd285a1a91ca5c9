"""Responses requests that name what an earlier response produced (``previous_response_id``,
``item_reference``), and keeping a response so a later one can.

The reference API refuses both; clients with ``store: true`` defaults (the Vercel AI SDK,
Codex-style agents) send them on every second turn, so the server resolves them from its store
when it still holds them, and answers 400 naming the id when it does not.
"""

from __future__ import annotations

from ..core.errors import RequestError
from ..core.store import ResponseStore
from ..core.turn import JSON

__all__ = ["expand", "remember"]


def _references(items: list[object]) -> list[str]:
    ids: list[str] = []
    for item in items:
        if isinstance(item, dict) and item.get("type") == "item_reference":
            item_id = item.get("id")
            if not isinstance(item_id, str) or not item_id:
                raise RequestError("input: an `item_reference` needs an `id`", param="input")
            ids.append(item_id)
    return ids


def _items(body: JSON) -> list[object]:
    raw = body.get("input")
    if isinstance(raw, str):
        return [{"role": "user", "content": raw}]
    return list(raw) if isinstance(raw, list) else []


async def expand(body: JSON, store: ResponseStore | None) -> JSON:
    """``body`` with the conversation of ``previous_response_id`` before its input, and each
    ``item_reference`` replaced by the item it names."""
    previous = body.get("previous_response_id")
    items = _items(body) if isinstance(body.get("input"), list | str) else []
    referenced = _references(items)
    if previous is None and not referenced:
        return body
    if store is None:
        what = "previous_response_id" if previous is not None else "input"
        raise RequestError(
            f"{what}: this server keeps no responses (WEBREACH_STORE_TTL is 0); send the whole "
            "conversation in `input`",
            param=what,
        )
    before: list[JSON] = []
    if previous is not None:
        if not isinstance(previous, str) or not previous:
            raise RequestError(
                "previous_response_id: must be a non-empty string", param="previous_response_id"
            )
        found = await store.conversation(previous)
        if found is None:
            raise RequestError(
                f"previous_response_id: response `{previous}` {_gone(store)}",
                param="previous_response_id",
            )
        before = found
    kept = await store.items(referenced)
    for item_id in referenced:
        if item_id not in kept:
            raise RequestError(f"input: item `{item_id}` {_gone(store)}", param="input")
    expanded = [_resolved(item, kept) for item in items]
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


def _resolved(item: object, kept: dict[str, JSON]) -> object:
    if isinstance(item, dict) and item.get("type") == "item_reference":
        return kept[str(item["id"])]
    return item


async def remember(body: JSON, response: JSON, store: ResponseStore | None) -> None:
    """Keep a finished response (its input and output) unless the client said ``store: false``."""
    if store is None or body.get("store") is False:
        return
    response_id = response.get("id")
    output = response.get("output")
    if not isinstance(response_id, str) or not isinstance(output, list):
        return
    conversation = [item for item in (*_items(body), *output) if isinstance(item, dict)]
    await store.save_response(response_id, conversation)
