"""HTML to Markdown in reader mode: the page's main content, with links kept and made absolute.

Pure: no I/O and nothing else of webreach, so any layer may call it.
"""

from .page import RenderedPage, plain_page, render_html, render_page

__all__ = ["RenderedPage", "plain_page", "render_html", "render_page"]
