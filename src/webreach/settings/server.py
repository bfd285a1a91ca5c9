"""The server's settings, declared once: what ``create_app`` needs besides the runtime.

A plain pydantic model that reads nothing by itself: :class:`webreach.settings.Settings` extends
it, so ``webreach serve`` reads every field from ``WEBREACH_<FIELD>`` or ``webreach.toml`` and
hands the object over whole, while a program or a test builds one from its arguments alone.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationInfo,
    field_validator,
    model_validator,
)

__all__ = ["KeyLimits", "ServerSettings", "cors_origins", "named_keys"]

PositiveInt = Annotated[int, Field(gt=0)]
Seconds = Annotated[float, Field(gt=0)]
MIN_SIGNING_KEY_BYTES = 32
"""The key material a signing key must carry (UTF-8 bytes): a short one is guessed offline."""
MAKE_SIGNING_KEY = 'python -c "import secrets; print(secrets.token_urlsafe(32))"'


KEY_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
"""What a key's name may be: it is shown in logs, usage and Redis keys."""


class KeyLimits(BaseModel):
    """What one inbound key may spend (``[server_key_limits.<name>]``); unset is unlimited.
    Days are UTC days."""

    model_config = ConfigDict(extra="forbid")

    requests_per_minute: PositiveInt | None = None
    searches_per_day: PositiveInt | None = None
    fetches_per_day: PositiveInt | None = None


def named_keys(raw: str) -> tuple[tuple[str, str], ...]:
    """``name:key`` entries as (name, key); a plain ``key`` is named ``key-<position>`` (from
    1), so its name never shows any of the secret."""
    named: list[tuple[str, str]] = []
    for position, part in enumerate((p.strip() for p in raw.split(",") if p.strip()), 1):
        name, colon, key = part.partition(":")
        if colon and KEY_NAME.fullmatch(name) and key.strip():
            named.append((name, key.strip()))
        else:
            named.append((f"key-{position}", part))
    return tuple(named)


_DEFAULT_PORTS = {"http": 80, "https": 443}


def cors_origins(raw: str) -> tuple[str, ...]:
    """Comma-separated origins, each as a browser serialises it (lower case, no default port);
    raises ValueError naming an entry that is not an origin."""
    found: list[str] = []
    for entry in (part.strip() for part in raw.split(",") if part.strip()):
        if entry == "*":
            raise ValueError(
                "must list origins (e.g. http://localhost:3000); * would let every web page "
                "the server's users open call it"
            )
        try:
            parts = urlsplit(entry)
            port = parts.port
        except ValueError:
            parts, port = None, None
        if (
            parts is None
            or parts.scheme not in _DEFAULT_PORTS
            or not parts.hostname
            or "@" in parts.netloc
            or parts.path not in ("", "/")
            or parts.query
            or parts.fragment
        ):
            raise ValueError(
                f"{entry!r} is not an origin: write scheme://host[:port] (http or https, no "
                "path), e.g. http://localhost:3000"
            )
        host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
        shown_port = "" if port in (None, _DEFAULT_PORTS[parts.scheme]) else f":{port}"
        found.append(f"{parts.scheme}://{host}{shown_port}")
    return tuple(dict.fromkeys(found))


class ServerSettings(BaseModel):
    """The API server's settings, with their defaults, each read from ``WEBREACH_<FIELD>``.
    Secrets are ``SecretStr``: no repr, log line or message shows them."""

    model_config = ConfigDict(extra="forbid", validate_default=True, hide_input_in_errors=True)
    """A misspelt field is an error; a refused value (a URL with a password, say) is never
    echoed in the exception's text."""

    upstream_base_url: str | None = Field(default=None, examples=["http://localhost:11434/v1"])
    """The OpenAI-compatible endpoint the server fronts, with its ``/v1``; ``create_app`` needs
    it. A URL with ``user:password@`` is refused at start."""
    upstream_api_key: SecretStr | None = None
    """The upstream's API key."""
    upstream_model: str | None = None
    """The model every request is sent to; unset, the one the client names."""
    upstream_timeout: Seconds = 600.0
    """Seconds the server waits for the upstream's next bytes, its first answer included."""
    upstream_connect_timeout: Seconds = 10.0
    """Seconds the server waits for a connection to the upstream."""
    upstream_dialect: Literal["openai", "deepseek"] = "openai"
    """How thinking reaches the upstream: ``openai`` (``reasoning_effort``) or ``deepseek``
    (``thinking``)."""
    server_api_keys: SecretStr | None = None
    """Inbound keys, comma-separated, each ``name:key`` or a plain ``key`` (named ``key-1``,
    ``key-2`` … by position); the name is what logs and usage show. Unset, the server takes
    requests without one."""
    server_key_limits: dict[str, KeyLimits] = Field(default_factory=dict)
    """Limits per key name: ``requests_per_minute``, ``searches_per_day``, ``fetches_per_day``
    (UTC days); ``[server_key_limits.<name>]`` in webreach.toml, JSON in the environment
    (``{"alice": {"requests_per_minute": 60}}``). A key without an entry is unlimited."""
    admin_api_key: SecretStr | None = None
    """Guards ``GET /admin/usage`` (usage per key name) and then ``GET /metrics``; unset, the
    usage endpoint is not served."""
    server_max_body_bytes: PositiveInt = 32 * 1024 * 1024
    """The largest request body the API server reads; over it, a 413 in the protocol's error
    shape."""
    server_cors_origins: str | None = Field(default=None, examples=["http://localhost:3000"])
    """Web origins, comma-separated (``scheme://host[:port]``), whose pages may call the server
    from a browser: their CORS preflights are answered. Without inbound keys, any other
    page's request is refused (403)."""
    store_ttl: Annotated[float, Field(ge=0)] = 3600.0
    """Seconds responses (Responses ``store: true``) and read pages are kept, in the cache store;
    0 keeps none."""
    store_max_mb: PositiveInt = 256
    """The bound of the in-memory response store, in MB of stored keys and values (the least
    recently used go first); with inbound keys, what a key stored is that key's."""
    max_steps: PositiveInt = 24
    """Upstream calls per request; the last one is made without tools, and a model still calling
    tools ends the request with the protocol's error naming the cap."""
    turn_timeout: Seconds = 900.0
    """Seconds for one request's whole turn, relay included; past it the protocol's error event
    (streamed) or a 504 in the protocol's shape."""
    shutdown_timeout: Seconds = 10.0
    """``webreach serve`` and ``webreach mcp --http``: seconds running requests have after the
    first Ctrl-C or SIGTERM (the listener closes at once, and the log says how many it waits
    for); past it each turn ends with the protocol's error event (streamed) or a 503 error
    body, and each MCP tool call with a JSON-RPC error (-32000, the server is stopping). A
    second Ctrl-C stops at once."""
    ready_window: Seconds = 60.0
    """``/readyz`` is 200 while the upstream answered within this many seconds; it is asked
    (``GET /models``) every half window when no request had an answer."""
    server_max_connections: PositiveInt | None = None
    """Connections served at once; beyond it a 503 (``server_busy``, ``Retry-After: 1``). Unset,
    1000, lowered to what the open-file limit holds."""
    server_header_timeout: Seconds = 10.0
    """Seconds a client has to send its request headers, from connecting; past it a 408 and the
    connection closed."""
    server_body_timeout: Seconds = 60.0
    """Seconds a client has to send its body, after the headers; past it a 408 and the
    connection closed."""
    citations: Literal["annotations", "markdown"] = "annotations"
    """``annotations`` (each protocol's citations only), or ``markdown``: annotations kept and
    the cited sources also linked inline in the text. A request overrides it with the
    ``X-Webreach-Citations`` header."""
    upstream_system: Literal["anywhere", "first"] = "anywhere"
    """Where the upstream takes system messages: ``anywhere`` (as the client placed them) or
    ``first`` (folded into one leading message, for chat templates that refuse any other)."""
    upstream_continue: Literal["auto", "prefix", "continue_final_message", "prefill", "off"] = (
        "auto"
    )
    """How a partial reply is continued upstream: ``prefix`` (DeepSeek), ``continue_final_message``
    (vLLM, SGLang), ``prefill`` (the message sent as it is), ``off`` (refused); ``auto`` is
    ``prefix`` for the deepseek dialect, else ``prefill``."""
    moderation_base_url: str | None = None
    """An OpenAI-compatible ``/moderations`` endpoint for ``safety_check``; without one the
    upstream model gives the verdict."""
    moderation_api_key: SecretStr | None = None
    """The key of the ``/moderations`` endpoint."""
    moderation_model: str = "omni-moderation-latest"
    """The model the ``/moderations`` endpoint reviews with."""
    signing_key: SecretStr | None = None
    """The key that encrypts read pages (AES-GCM): at least 32 bytes, refused otherwise (exit
    2); make one with ``python -c "import secrets; print(secrets.token_urlsafe(32))"``.
    Unset, a random key that lasts as long as the process."""
    metrics: bool = True
    """Prometheus metrics at ``GET /metrics`` (behind the inbound keys when there are some);
    off, there is no route and no per-request cost."""
    playground: bool | None = None
    """The playground page at ``GET /``; unset, ``webreach serve`` shows it when bound to a
    loopback address (and ``create_app`` always); its calls need a key when the server has keys."""
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    """``webreach serve``'s log: ``debug``, ``info`` (access lines), ``warning`` or ``error``;
    ``--log-level`` wins."""
    log_format: Literal["text", "json"] = "text"
    """``text``, or ``json`` for one object per line; ``--log-format`` wins."""

    @field_validator("log_level", "log_format", mode="before")
    @classmethod
    def _any_case(cls, value: object) -> object:
        """``INFO`` means ``info``: operators write levels as their other tools do."""
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("upstream_base_url", "moderation_base_url")
    @classmethod
    def _no_credentials_in_url(cls, value: str | None, info: ValidationInfo) -> str | None:
        """A password in the URL would end up in logs and error texts; keys have their own
        setting. The URL must be http(s), as the SDK that calls it needs."""
        if not value:
            return value
        parts = urlsplit(value)
        key = "WEBREACH_UPSTREAM_API_KEY"
        if info.field_name == "moderation_base_url":
            key = "WEBREACH_MODERATION_API_KEY"
        if "@" in parts.netloc:
            raise ValueError(f"must not contain credentials (user:password@); put the key in {key}")
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("must be an http(s) URL with a host, e.g. https://api.openai.com/v1")
        return value

    @field_validator("server_cors_origins")
    @classmethod
    def _origins(cls, value: str | None) -> str | None:
        """Checked when read: a listed URL with a path, or ``*``, would never match (or match
        every page), and the operator would not learn why until a browser refused."""
        if value is not None:
            cors_origins(value)
        return value

    @field_validator("signing_key")
    @classmethod
    def _long_enough(cls, value: SecretStr | None) -> SecretStr | None:
        """A short key lets anyone who holds an encrypted page guess it; empty means unset. The
        message never holds the value."""
        if value is None or not value.get_secret_value():
            return value
        if len(value.get_secret_value().encode()) < MIN_SIGNING_KEY_BYTES:
            raise ValueError(
                f"is too short: a signing key needs at least {MIN_SIGNING_KEY_BYTES} bytes; "
                f"make one with: {MAKE_SIGNING_KEY}"
            )
        return value

    @model_validator(mode="after")
    def _limits_name_keys(self) -> ServerSettings:
        """A limit for a name no key has would limit nobody: most likely a misspelt name."""
        names = {name for name, _ in self.named_api_keys()}
        unknown = sorted(set(self.server_key_limits) - names)
        if unknown:
            raise ValueError(
                f"server_key_limits names {', '.join(unknown)}, which no key in "
                "WEBREACH_SERVER_API_KEYS has (name:key entries; plain keys are key-1, key-2 …)"
            )
        return self

    def upstream_url(self) -> str:
        """``upstream_base_url``, which the server cannot do without."""
        if not self.upstream_base_url:
            raise ValueError("upstream_base_url (WEBREACH_UPSTREAM_BASE_URL) is not set")
        return self.upstream_base_url

    def api_keys(self) -> tuple[str, ...]:
        """The inbound keys (their secrets alone), one per comma-separated part of
        ``server_api_keys``."""
        return tuple(key for _, key in self.named_api_keys())

    def named_api_keys(self) -> tuple[tuple[str, str], ...]:
        """The inbound keys with their names, as :func:`named_keys` reads them."""
        if self.server_api_keys is None:
            return ()
        return named_keys(self.server_api_keys.get_secret_value())

    def cors_origins(self) -> tuple[str, ...]:
        """The origins of ``server_cors_origins``, each as a browser writes it in ``Origin``."""
        return cors_origins(self.server_cors_origins or "")

    def secrets(self) -> list[str]:
        """Every secret these settings hold, none of which an upstream text may carry onwards."""
        held = (
            self.upstream_api_key,
            self.moderation_api_key,
            self.signing_key,
            self.admin_api_key,
        )
        return [s.get_secret_value() for s in held if s is not None] + list(self.api_keys())
