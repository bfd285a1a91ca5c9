"""The built-in fetch providers, one module each: ``http`` (the page as served), ``browser``
(drawn by a headless browser) and ``auto``, the default, which uses the browser only for app
shells."""

SETTING_PREFIXES: dict[str, tuple[str, ...]] = {
    "auto": (),
    "browser": ("WEBREACH_BROWSER_",),
    "http": (),
}
"""How each module's settings variables begin (see ``webreach.providers.search``)."""
