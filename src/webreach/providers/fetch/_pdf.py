"""PDF text extraction with PDFium (pypdfium2).

Chosen by measurement over pypdf: about 4x faster on the same text-layer PDF with equal text,
and its work runs in C without holding the GIL, so extraction in a worker thread does not
starve the event loop. PDFium is not thread-safe, so one lock serialises all use of it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from ...seam import WebError, WebErrorCode

__all__ = ["PAGE_SEPARATOR", "PdfText", "extract_pdf_text"]

PAGE_SEPARATOR = "\f"
"""Between pages, as pdftotext does, so a reader can mark page boundaries."""

_PDFIUM_LOCK = threading.Lock()


@dataclass(frozen=True, slots=True)
class PdfText:
    content: str
    page_count: int
    truncated: bool


def _unreadable(why: str) -> WebError:
    return WebError(WebErrorCode.WEB_UNSUPPORTED_CONTENT_TYPE, f"the PDF {why}")


def extract_pdf_text(data: bytes, max_chars: int) -> PdfText:
    """Text of every page, joined by form feeds, cut at ``max_chars``. Blocking: run in a thread.

    PDFium loads here, with the first PDF: most fetches read none."""
    import pypdfium2  # type: ignore[import-untyped]

    with _PDFIUM_LOCK:
        try:
            document = pypdfium2.PdfDocument(data)
        except pypdfium2.PdfiumError as error:
            raise _unreadable(f"could not be opened ({error})") from None
        try:
            page_count = len(document)
            pages: list[str] = []
            used = 0
            truncated = False
            for index in range(page_count):
                if used >= max_chars:
                    truncated = True
                    break
                page = document[index]
                try:
                    textpage = page.get_textpage()
                    try:
                        text = str(textpage.get_text_bounded())
                    finally:
                        textpage.close()
                finally:
                    page.close()
                text = text.replace("\r\n", "\n").replace("\r", "\n")
                pages.append(text)
                used += len(text) + len(PAGE_SEPARATOR)
        finally:
            document.close()
    if not any(page.strip() for page in pages):
        raise _unreadable("has no text layer (a scanned document?); it cannot be read as text")
    content = PAGE_SEPARATOR.join(pages)
    if len(content) > max_chars:
        content, truncated = content[:max_chars], True
    return PdfText(content, page_count, truncated)
