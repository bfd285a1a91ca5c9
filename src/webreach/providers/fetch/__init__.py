"""The built-in fetch providers, one module each: ``http`` (the page as served), ``browser``
(drawn by a headless browser) and ``auto``, the default, which uses the browser only for app
shells."""
