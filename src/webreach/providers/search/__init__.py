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

SETTING_PREFIXES: dict[str, tuple[str, ...]] = {
    "anthropic": ("ANTHROPIC_",),
    "brave": ("BRAVE_",),
    "deepseek": ("DEEPSEEK_",),
    "duckduckgo": ("DUCKDUCKGO_",),
    "exa": ("EXA_",),
    "gemini": ("GEMINI_", "GOOGLE_API_KEY"),
    "jina": ("JINA_",),
    "kagi": ("KAGI_",),
    "kimi": ("KIMI_", "MOONSHOT_"),
    "openai": ("OPENAI_",),
    "parallel": ("PARALLEL_",),
    "perplexity": ("PERPLEXITY_",),
    "searxng": ("SEARXNG_",),
    "synthetic": ("SYNTHETIC_",),
    "tavily": ("TAVILY_",),
    "zai": ("ZAI_",),
}
"""How each module's settings variables begin (its file keys are the same in lower case): a
command that does not search imports a module only to check a setting one of these names, so
a bad ``EXA_BASE_URL`` still stops ``webreach fetch``. A module missing here is always imported;
a test holds every setting to its module's prefixes."""

__all__ = ["AUTO_ORDER", "SETTING_PREFIXES"]
