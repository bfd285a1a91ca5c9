"""What a provider declares about itself: its id, its own settings, and how to build it.

Every public module of ``webreach.providers.search`` and ``webreach.providers.fetch`` that defines
a module-level ``PROVIDER`` (a :class:`ProviderSpec`) is a built-in provider: ``webreach.config``
finds it by listing the package when it builds a runtime, so adding a provider is one new module.
An installed package may point an entry point of the ``webreach.search_providers`` or
``webreach.fetch_providers`` group at a ``ProviderSpec`` of its own, which is then built the same
way.

A provider's settings class (a :class:`ProviderSettings`) holds only that provider's settings and
reads them like the shared ones: from the environment and from the same TOML file, under field
names that are the variables' names in lower case (``exa_api_key`` ← ``EXA_API_KEY``). The
factory receives those settings and a :class:`ProviderContext` of what every provider may share
(timeouts, proxy, HTTP clients); it never sees another provider's settings, nor any other secret.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Generic, TypeVar
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    BeforeValidator,
    PositiveFloat,
    SecretStr,
    StringConstraints,
)
from pydantic_settings import BaseSettings, SettingsConfigDict

from ..settings_base import FileSettings

if TYPE_CHECKING:
    import httpx

__all__ = [
    "BaseUrl",
    "NoSettings",
    "NonEmpty",
    "ProviderContext",
    "ProviderSettings",
    "ProviderSpec",
    "RequestsPerSecond",
    "Secret",
    "secret",
]


def _blank_is_none(value: object) -> object:
    """An empty variable (``EXA_BASE_URL=``) means unset, as it does in a shell."""
    return None if isinstance(value, str) and not value.strip() else value


def _http_url(value: str | None) -> str | None:
    if value is None:
        return None
    parts = urlsplit(value.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError("must be an http(s) URL with a host, e.g. https://api.example.com")
    if "@" in parts.netloc:
        raise ValueError(
            "must not contain credentials (user:password@); keys have their own setting"
        )
    return value.strip()


BaseUrl = Annotated[str | None, BeforeValidator(_blank_is_none), AfterValidator(_http_url)]
"""An endpoint override: unset means the provider's official one."""

Secret = Annotated[SecretStr | None, BeforeValidator(_blank_is_none)]
"""A key, never shown in a repr or a message."""

NonEmpty = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
"""A name that must say something, such as a model."""

RequestsPerSecond = Annotated[PositiveFloat | None, BeforeValidator(_blank_is_none)]
"""The pace of one provider (``BRAVE_REQUESTS_PER_SECOND=1``): its searches start at least
``1 / value`` seconds apart across the process; unset is unpaced. Name the field
``<id>_requests_per_second`` and the runtime paces the provider of that id."""


def secret(value: SecretStr | None) -> str | None:
    """The key itself, for the one place that sends it."""
    return value.get_secret_value() or None if value is not None else None


class ProviderSettings(FileSettings):
    """The base of a provider's own settings: the environment, then the TOML file.

    Name each field after its variable in lower case (``exa_api_key``): the environment is read
    case-insensitively under that name, and the TOML file under the same key as the shared
    settings' keys. An empty variable counts as unset; unknown keys are ignored.
    """

    model_config = SettingsConfigDict(env_ignore_empty=True)


class NoSettings(ProviderSettings):
    """For a provider that needs nothing beyond the :class:`ProviderContext`."""


ClientPair = tuple["httpx.AsyncClient", "httpx.AsyncClient"]
"""The providers' two clients: for index lookups, and for searches a model answers."""


class ProviderContext:
    """What every provider may use besides its own settings. No secret is ever part of it.

    The clients belong to the runtime, which closes them; a provider that opens resources of its
    own defines ``aclose()`` and the runtime closes it too. They are given, or made by
    ``open_clients`` when a provider first asks for one: a runtime that only fetches never
    loads httpx. Immutable; one runtime has one, and it is compared by identity.
    """

    _clients: ClientPair | None
    _open_clients: Callable[[], ClientPair] | None
    search_timeout: float
    proxy: str | None
    fetch_timeout: float
    fetch_max_bytes: int
    fetch_allow: str | None
    fetch_max_body_chars: int
    """``WEBREACH_FETCH_MAX_BODY_CHARS``: characters of decoded document a fetch keeps."""
    fetch_user_agent: str | None
    """``WEBREACH_FETCH_USER_AGENT``: the fetcher's own product name; None is webreach's."""
    fetch_proxy: str | None
    """``WEBREACH_FETCH_PROXY``: the proxy page fetches go through."""
    draws_pages: bool
    """Whether a browser may be started to draw a page. False in a page reader process: a page
    it would draw goes back, saying why, to the process that asked, which has the browser."""

    def __init__(
        self,
        *,
        client: httpx.AsyncClient | None = None,
        model_client: httpx.AsyncClient | None = None,
        search_timeout: float,
        proxy: str | None,
        fetch_timeout: float,
        fetch_max_bytes: int,
        fetch_allow: str | None,
        fetch_max_body_chars: int = 2_000_000,
        fetch_user_agent: str | None = None,
        fetch_proxy: str | None = None,
        draws_pages: bool = True,
        open_clients: Callable[[], ClientPair] | None = None,
    ) -> None:
        given = None if client is None else (client, model_client or client)
        if given is None and open_clients is None:
            raise TypeError("ProviderContext needs client= (and model_client=) or open_clients=")
        values = {
            "_clients": given,
            "_open_clients": open_clients,
            "search_timeout": search_timeout,
            "proxy": proxy,
            "fetch_timeout": fetch_timeout,
            "fetch_max_bytes": fetch_max_bytes,
            "fetch_allow": fetch_allow,
            "fetch_max_body_chars": fetch_max_body_chars,
            "fetch_user_agent": fetch_user_agent,
            "fetch_proxy": fetch_proxy,
            "draws_pages": draws_pages,
        }
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"ProviderContext is immutable; {name!r} cannot be set")

    def _pair(self) -> ClientPair:
        if self._clients is None:
            assert self._open_clients is not None
            object.__setattr__(self, "_clients", self._open_clients())
        assert self._clients is not None
        return self._clients

    @property
    def client(self) -> httpx.AsyncClient:
        """For index lookups: ``WEBREACH_SEARCH_TIMEOUT`` per request, through
        ``WEBREACH_PROXY``."""
        return self._pair()[0]

    @property
    def model_client(self) -> httpx.AsyncClient:
        """For searches a model answers, which take far longer: a longer timeout, the same
        proxy."""
        return self._pair()[1]


S = TypeVar("S", bound=BaseSettings)
P = TypeVar("P")


@dataclass(frozen=True)
class ProviderSpec(Generic[S, P]):
    """One provider: its id, its settings class, and a factory.

    ``create`` receives the settings, read and validated, and the shared context; it returns the
    provider, or ``None`` when it cannot be built at all (an installed plugin left unconfigured).
    A built-in provider is always returned and reports through ``available()`` whether its
    settings suffice.
    """

    id: str
    settings: type[S]
    create: Callable[[S, ProviderContext], P | None]
