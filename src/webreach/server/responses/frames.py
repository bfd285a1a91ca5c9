"""The frames of a Responses stream: numbered SSE events, and the output items they announce.

The renderer behind both the stream and the non-streaming body emits every event; only a
stream writes them out (the ``sequence_number`` counts them either way).
"""

from __future__ import annotations

from ..core.protocol_common import dumps, sse_frame
from ..core.turn import JSON

__all__ = ["Frames"]


class Frames:
    """The output items of a response, and the stream's frames as they are emitted."""

    def __init__(self, *, streaming: bool) -> None:
        self._frames = streaming
        self._out: list[str] = []
        self._seq = 0
        self._items: list[JSON | None] = []
        """Each output item once done; None while it is still being written."""

    def _emit(self, kind: str, payload: JSON) -> None:
        if self._frames:
            data = {"type": kind, "sequence_number": self._seq, **payload}
            self._out.append(sse_frame(dumps(data), kind))
        self._seq += 1

    def _emit_delta(
        self,
        kind: str,
        item_id: str,
        index: int,
        text: str,
        tail: str,
        position: str = "content_index",
    ) -> None:
        """Hot path: text and reasoning deltas are formatted without building a dict."""
        if self._frames:
            self._out.append(
                f'event: {kind}\ndata: {{"type":"{kind}","sequence_number":{self._seq},'
                f'"item_id":"{item_id}","output_index":{index},"{position}":0,'
                f'"delta":{dumps(text)}{tail}}}\n\n'
            )
        self._seq += 1

    def _take(self) -> str:
        out = "".join(self._out)
        self._out.clear()
        return out

    def _add_item(self, item: JSON) -> int:
        index = len(self._items)
        self._items.append(None)
        self._emit("response.output_item.added", {"output_index": index, "item": item})
        return index

    def _done_item(self, index: int, item: JSON) -> None:
        self._items[index] = item
        self._emit("response.output_item.done", {"output_index": index, "item": item})

    def _emit_part(self, kind: str, item_id: str, index: int, part: JSON) -> None:
        payload = {"item_id": item_id, "output_index": index, "content_index": 0, "part": part}
        self._emit(kind, payload)
