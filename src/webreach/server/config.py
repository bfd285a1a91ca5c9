"""How the server is set up: its upstream, its keys, its limits."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

__all__ = ["CITATION_STYLES", "CONTINUE_MODES", "DEFAULT_MAX_BODY_BYTES", "ServerConfig"]

CITATION_STYLES = ("annotations", "markdown")
CONTINUE_MODES = ("auto", "prefix", "continue_final_message", "prefill", "off")
DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """Everything ``create_app`` needs besides the runtime; ``webreach serve`` fills it from
    the settings (SPEC §9 names the variables)."""

    upstream_base_url: str
    upstream_api_key: str | None = None
    upstream_model: str | None = None
    api_keys: Sequence[str] = ()
    signing_key: str | None = None
    keepalive_seconds: float = 10.0
    upstream_timeout: float = 600.0
    upstream_connect_timeout: float = 10.0
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    upstream_dialect: str = "openai"
    """How thinking reaches the upstream: ``openai`` (``reasoning_effort``) or ``deepseek``."""
    store_ttl: float = 3600.0
    """Seconds responses (Responses ``store: true``) and read pages are kept; 0 keeps none."""
    max_steps: int = 24
    """Upstream calls per request: at the cap one forced answer, then the protocol's error."""
    turn_timeout: float = 900.0
    """Seconds for one request's whole turn; past it the protocol's error (504-class)."""
    citations: str = "annotations"
    """The citation style when a request names none (``X-Webreach-Citations``)."""
    upstream_system: str = "anywhere"
    """Where the upstream takes system messages: ``anywhere`` (as the client placed them) or
    ``first`` (folded into one leading message, for chat templates that refuse any other)."""
    upstream_continue: str = "auto"
    """How a partial reply is continued upstream: ``prefix`` (DeepSeek), ``continue_final_message``
    (vLLM, SGLang), ``prefill`` (the message sent as it is), ``off`` (refused); ``auto`` is
    ``prefix`` for the deepseek dialect, else ``prefill``."""
    moderation_base_url: str | None = None
    """An OpenAI-compatible ``/moderations`` endpoint for ``safety_check``; without one the
    upstream model gives the verdict."""
    moderation_api_key: str | None = None
    moderation_model: str = "omni-moderation-latest"

    def __post_init__(self) -> None:
        if self.citations not in CITATION_STYLES:
            raise ValueError("WEBREACH_CITATIONS must be `annotations` or `markdown`")
        if self.upstream_system not in ("anywhere", "first"):
            raise ValueError("WEBREACH_UPSTREAM_SYSTEM must be `anywhere` or `first`")
        if self.upstream_continue not in CONTINUE_MODES:
            modes = ", ".join(f"`{mode}`" for mode in CONTINUE_MODES)
            raise ValueError(f"WEBREACH_UPSTREAM_CONTINUE must be one of {modes}")
        if self.upstream_dialect not in ("openai", "deepseek"):
            raise ValueError("WEBREACH_UPSTREAM_DIALECT must be `openai` or `deepseek`")
        parts = urlsplit(self.upstream_base_url)
        if parts.username is not None or parts.password is not None:
            raise ValueError(
                "WEBREACH_UPSTREAM_BASE_URL must not contain credentials (user:password@); "
                "put the upstream's key in WEBREACH_UPSTREAM_API_KEY"
            )
