"""Content-Encoding removal with bounded output per step.

httpx's own decoders inflate a whole network chunk at once (64 KiB of gzip can become 64 MiB),
so the body is read raw and inflated here in slices no larger than ``SLICE`` bytes. That keeps
memory bounded by the byte cap whatever the compression ratio.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Sequence

from ...seam import WebError, WebErrorCode

__all__ = ["ACCEPT_ENCODING", "SLICE", "BodyDecoder"]

ACCEPT_ENCODING = "gzip, deflate"
SLICE = 64 * 1024

_GZIP_WBITS = zlib.MAX_WBITS | 16


class _Inflater:
    """One gzip or deflate layer; gzip may hold several members back to back."""

    def __init__(self, gzip: bool) -> None:
        self._gzip = gzip
        self._raw_fallback = not gzip
        self._obj = zlib.decompressobj(_GZIP_WBITS if gzip else zlib.MAX_WBITS)
        self._done = False

    def feed(self, data: bytes) -> Iterator[bytes]:
        while not self._done:
            try:
                out = self._obj.decompress(data, SLICE)
            except zlib.error:
                if not self._raw_fallback:
                    raise
                # Some servers send raw deflate without the zlib header; accept both as httpx does.
                self._obj = zlib.decompressobj(-zlib.MAX_WBITS)
                self._raw_fallback = False
                continue
            if data:
                self._raw_fallback = False
            if out:
                yield out
            if self._obj.eof:
                rest = self._obj.unused_data
                if self._gzip and rest.startswith(b"\x1f\x8b"):
                    self._obj = zlib.decompressobj(_GZIP_WBITS)
                    data = rest
                    continue
                self._done = True
                return
            data = self._obj.unconsumed_tail
            if not data and len(out) < SLICE:
                return


def _layers(content_encoding: str | None) -> list[_Inflater]:
    names = [n.strip().lower() for n in (content_encoding or "").split(",") if n.strip()]
    layers: list[_Inflater] = []
    for name in reversed(names):
        if name in ("gzip", "x-gzip"):
            layers.append(_Inflater(gzip=True))
        elif name == "deflate":
            layers.append(_Inflater(gzip=False))
        elif name != "identity":
            raise WebError(
                WebErrorCode.WEB_UNSUPPORTED_CONTENT_TYPE,
                f"the response uses content encoding {name!r}, which is not supported "
                f"(only {ACCEPT_ENCODING} were asked for)",
            )
    return layers


class BodyDecoder:
    """Turns raw body chunks into decoded slices, undoing every listed encoding in order."""

    def __init__(self, content_encoding: str | None) -> None:
        self._layers = _layers(content_encoding)

    def feed(self, chunk: bytes) -> Iterator[bytes]:
        try:
            yield from self._through(self._layers, chunk)
        except zlib.error as error:
            raise WebError(
                WebErrorCode.WEB_PROVIDER_ERROR,
                f"the compressed response body is corrupt ({error})",
            ) from None

    def _through(self, layers: Sequence[_Inflater], data: bytes) -> Iterator[bytes]:
        if not layers:
            if data:
                yield data
            return
        for piece in layers[0].feed(data):
            yield from self._through(layers[1:], piece)
