"""The built-in search providers, one module each, and the order ``auto`` tries them in."""

AUTO_ORDER: tuple[str, ...] = (
    "perplexity",
    "gemini",
    "anthropic",
    "openai",
    "zai",
    "exa",
    "jina",
    "kagi",
    "tavily",
    "brave",
    "kimi",
    "parallel",
    "synthetic",
    "searxng",
    "*",
    "deepseek",
    "duckduckgo",
)
"""``WEBREACH_SEARCH_PROVIDER=auto``: answer engines first, then indexes, then a
self-hosted SearXNG), then the installed plugins by id (``*``), then deepseek (a model that
searches, slow) and the keyless duckduckgo last. Ids not installed are skipped."""

__all__ = ["AUTO_ORDER"]
