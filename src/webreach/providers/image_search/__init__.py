"""Reverse image search providers: an image by URL or bytes → the pages that show it.

One module per service; each defines a ``PROVIDER`` spec that ``webreach.config`` finds.
"""

SETTING_PREFIXES: dict[str, tuple[str, ...]] = {
    "google_lens": ("SERPAPI_",),
    "google_vision": ("GOOGLE_VISION_",),
}
"""How each module's settings variables begin (see ``webreach.providers.search``)."""
