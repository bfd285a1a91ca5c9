"""Request helpers shared by the HTTP search providers: one error vocabulary, no leaked keys."""

from __future__ import annotations

import email.utils
import json
import time
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar, TypeVar

import httpx

from ...seam import SearchProvider, SearchRequest, SearchResult, WebError, WebErrorCode
from ..spec import ProviderContext, ProviderSettings, ProviderSpec, secret

__all__ = [
    "KeyedProvider",
    "ModelProvider",
    "field",
    "keyed_spec",
    "optional_str",
    "redact",
    "request_json",
]


def redact(text: str, secrets: Iterable[str | None]) -> str:
    for hidden in secrets:
        if hidden:
            text = text.replace(hidden, "***")
    return text


def _retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header, which may be a number or an HTTP date."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, moment.timestamp() - time.time())


def _status_error(pid: str, response: httpx.Response) -> WebError:
    status = response.status_code
    if status in (401, 403):
        return WebError(
            WebErrorCode.WEB_PROVIDER_ERROR,
            f"{pid}: authorization failed (HTTP {status}); check the API key",
            provider=pid,
            status=status,
        )
    if status == 429:
        retry_after = _retry_after(response.headers.get("retry-after"))
        hint = f", retry after {retry_after:g} s" if retry_after is not None else ""
        return WebError(
            WebErrorCode.WEB_PROVIDER_ERROR,
            f"{pid}: rate limited (HTTP 429){hint}",
            provider=pid,
            status=status,
            retry_after=retry_after,
        )
    kind = "server error" if status >= 500 else "request rejected"
    return WebError(
        WebErrorCode.WEB_PROVIDER_ERROR,
        f"{pid}: {kind} (HTTP {status})",
        provider=pid,
        status=status,
    )


async def request_json(
    client: httpx.AsyncClient,
    pid: str,
    method: str,
    url: str,
    *,
    secrets: Iterable[str | None],
    headers: Mapping[str, str] | None = None,
    params: Mapping[str, str | int] | None = None,
    json_body: Any = None,
) -> Any:
    """Send one request and return its JSON, or raise ``WEB_PROVIDER_ERROR`` naming ``pid``."""
    secrets = tuple(secrets)
    try:
        response = await client.request(method, url, headers=headers, params=params, json=json_body)
    except httpx.TimeoutException:
        raise WebError(
            WebErrorCode.WEB_PROVIDER_ERROR, f"{pid}: the request timed out", provider=pid
        ) from None
    except httpx.HTTPError as error:
        detail = redact(str(error) or type(error).__name__, secrets)
        raise WebError(
            WebErrorCode.WEB_PROVIDER_ERROR,
            f"{pid}: request failed ({type(error).__name__}: {detail})",
            provider=pid,
        ) from None
    if not response.is_success:
        raise _status_error(pid, response)
    try:
        return json.loads(response.content)
    except ValueError:
        raise WebError(
            WebErrorCode.WEB_PROVIDER_ERROR,
            f"{pid}: the response is not valid JSON (HTTP {response.status_code})",
            provider=pid,
            status=response.status_code,
        ) from None


def field(pid: str, data: Any, key: str, kind: type | tuple[type, ...]) -> Any:
    """``data[key]`` checked to be of ``kind``; a missing or mistyped field is a provider error."""
    value = data.get(key) if isinstance(data, dict) else None
    if not isinstance(value, kind):
        raise WebError(
            WebErrorCode.WEB_PROVIDER_ERROR,
            f"{pid}: unexpected response shape (no valid {key!r})",
            provider=pid,
        )
    return value


def optional_str(item: Mapping[str, Any], key: str) -> str | None:
    value = item.get(key)
    return value.strip() or None if isinstance(value, str) else None


class KeyedProvider(ABC):
    """What the HTTP search providers share: a key, a client, an endpoint, and one way to call it.

    The key lives only in the instance; ``repr`` shows the endpoint and never the key.
    """

    id: ClassVar[str]
    default_base_url: ClassVar[str]

    def __init__(
        self,
        *,
        api_key: str | None,
        client: httpx.AsyncClient,
        base_url: str | None = None,
    ) -> None:
        self._api_key = api_key or None
        self._client = client
        self._base_url = (base_url or self.default_base_url).rstrip("/")

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={self._base_url!r})"

    def available(self) -> bool:
        return self._api_key is not None

    @abstractmethod
    async def search(self, request: SearchRequest) -> SearchResult: ...

    def cache_scope(self) -> str:
        """The endpoint, so cached results never cross base URLs (see ``seam.CacheScoped``).

        A replay server's answers never reach callers of the real service, nor the reverse.
        The key is no part of it: another key of the same service finds the same results.
        """
        return json.dumps({"base_url": self._base_url}, separators=(",", ":"))

    async def _call(
        self,
        method: str,
        path: str,
        *,
        headers: Mapping[str, str],
        params: Mapping[str, str | int] | None = None,
        json_body: Any = None,
    ) -> Any:
        return await request_json(
            self._client,
            self.id,
            method,
            f"{self._base_url}{path}",
            secrets=[self._api_key],
            headers=headers,
            params=params,
            json_body=json_body,
        )


class ModelProvider(KeyedProvider):
    """A provider whose searches a model runs and answers; ``model`` picks it."""

    default_model: ClassVar[str]
    model_setting: ClassVar[str]
    """The settings field that names the model (``perplexity_model``, say)."""

    def __init__(
        self,
        *,
        api_key: str | None,
        client: httpx.AsyncClient,
        base_url: str | None = None,
        model: str | None = None,
    ) -> None:
        super().__init__(api_key=api_key, client=client, base_url=base_url)
        self._model = model or self.default_model

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={self._base_url!r}, model={self._model!r})"

    def cache_scope(self) -> str:
        """The endpoint and the model: another model writes another answer."""
        return json.dumps(
            {"base_url": self._base_url, "model": self._model},
            sort_keys=True,
            separators=(",", ":"),
        )


S = TypeVar("S", bound=ProviderSettings)


def keyed_spec(provider: type[KeyedProvider], settings: type[S]) -> ProviderSpec[S, SearchProvider]:
    """The spec of a provider whose settings are named after it: ``<id>_api_key``,
    ``<id>_base_url``, and for a model-backed one the field its ``model_setting`` names."""
    pid = provider.id

    def create(values: S, context: ProviderContext) -> KeyedProvider:
        key = secret(getattr(values, f"{pid}_api_key"))
        base_url = getattr(values, f"{pid}_base_url")
        if issubclass(provider, ModelProvider):
            model = getattr(values, provider.model_setting)
            return provider(
                api_key=key, client=context.model_client, base_url=base_url, model=model
            )
        return provider(api_key=key, client=context.client, base_url=base_url)

    return ProviderSpec(pid, settings, create)
