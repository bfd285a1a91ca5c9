"""Calling a JSON API, shared by every HTTP provider (search, image search): one request with one
error vocabulary and no leaked keys, a keyed endpoint to send it to, and the checked reading of
the answer's fields."""

from __future__ import annotations

import email.utils
import json
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from ..seam import WebError, WebErrorCode
from ..seam.causes import network_cause

if TYPE_CHECKING:
    import httpx

__all__ = [
    "KeyedEndpoint",
    "field",
    "optional_field",
    "optional_str",
    "redact",
    "request_json",
    "retry_after_seconds",
]


def redact(text: str, secrets: Iterable[str | None]) -> str:
    for hidden in secrets:
        if hidden:
            text = text.replace(hidden, "***")
    return text


def _host(url: str) -> str | None:
    """``host`` or ``host:port`` of a request URL, for a message (never its query: SerpApi's
    key is a query parameter)."""
    import httpx

    try:
        parts = httpx.URL(url)
    except httpx.InvalidURL:
        return None
    return f"{parts.host}:{parts.port}" if parts.port else parts.host


def retry_after_seconds(value: str | None) -> float | None:
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


def _status_error(
    pid: str, response: httpx.Response, key_refused: Callable[[httpx.Response], bool] | None
) -> WebError:
    status = response.status_code
    if status in (401, 403) or (key_refused is not None and key_refused(response)):
        return WebError(
            WebErrorCode.WEB_PROVIDER_ERROR,
            f"{pid}: authorization failed (HTTP {status}); check the API key",
            provider=pid,
            status=status,
        )
    if status == 429:
        retry_after = retry_after_seconds(response.headers.get("retry-after"))
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
    params: Mapping[str, str | int | Sequence[str]] | None = None,
    json_body: Any = None,
    key_refused: Callable[[httpx.Response], bool] | None = None,
) -> Any:
    """Send one request and return its JSON, or raise ``WEB_PROVIDER_ERROR`` naming ``pid``.

    ``key_refused`` tells an error answer that means "bad key" under another status than
    401/403 (Google answers 400 ``API_KEY_INVALID``), so the message says to check the key.
    """
    import httpx  # loaded with the client that calls this, not with each provider's settings

    secrets = tuple(secrets)
    try:
        response = await client.request(method, url, headers=headers, params=params, json=json_body)
    except httpx.TimeoutException:
        raise WebError(
            WebErrorCode.WEB_PROVIDER_ERROR, f"{pid}: the request timed out", provider=pid
        ) from None
    except httpx.HTTPError as error:
        cause = network_cause(error)
        if cause is not None:
            detail = cause.describe(_host(url))
        else:
            detail = (
                f"{type(error).__name__}: {redact(str(error) or type(error).__name__, secrets)}"
            )
        raise WebError(
            WebErrorCode.WEB_PROVIDER_ERROR,
            f"{pid}: request failed ({detail})",
            provider=pid,
        ) from None
    if not response.is_success:
        raise _status_error(pid, response, key_refused)
    try:
        return json.loads(response.content)
    except ValueError:
        raise WebError(
            WebErrorCode.WEB_PROVIDER_ERROR,
            f"{pid}: the response is not valid JSON (HTTP {response.status_code})",
            provider=pid,
            status=response.status_code,
        ) from None


class KeyedEndpoint:
    """A keyed JSON API at one endpoint, and the one way to call it.

    The key lives only in the instance; ``repr`` shows the endpoint and never the key.
    """

    id: ClassVar[str]
    default_base_url: ClassVar[str]

    def __init__(
        self, *, api_key: str | None, client: httpx.AsyncClient, base_url: str | None = None
    ) -> None:
        self._api_key = api_key or None
        self._client = client
        self._base_url = (base_url or self.default_base_url).rstrip("/")

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={self._base_url!r})"

    def available(self) -> bool:
        return self._api_key is not None

    def cache_scope(self) -> str:
        """The endpoint, so cached answers never cross base URLs (see ``seam.CacheScoped``).

        A replay server's answers never reach callers of the real service, nor the reverse.
        The key is no part of it: another key of the same service finds the same answers.
        """
        return json.dumps({"base_url": self._base_url}, separators=(",", ":"))

    async def _call(
        self,
        method: str,
        path: str,
        *,
        headers: Mapping[str, str],
        params: Mapping[str, str | int | Sequence[str]] | None = None,
        json_body: Any = None,
        key_refused: Callable[[httpx.Response], bool] | None = None,
    ) -> Any:
        """:func:`request_json` to ``path`` below the endpoint, the key redacted from errors."""
        return await request_json(
            self._client,
            self.id,
            method,
            f"{self._base_url}{path}",
            secrets=[self._api_key],
            headers=headers,
            params=params,
            json_body=json_body,
            key_refused=key_refused,
        )


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


def optional_field(pid: str, data: Mapping[str, Any], key: str, kind: type, default: Any) -> Any:
    """``data[key]`` when present, ``default`` when absent (some APIs leave out empty lists);
    present but not of ``kind`` is a provider error, as in :func:`field`."""
    if key not in data:
        return default
    return field(pid, data, key, kind)


def optional_str(item: Mapping[str, Any], key: str) -> str | None:
    value = item.get(key)
    return value.strip() or None if isinstance(value, str) else None
