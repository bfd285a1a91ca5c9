"""The ``http`` fetch provider: one URL, fetched anonymously and safely (docs/library/fetching.md).

Every hop is vetted before I/O and dialled through an IP-pinning backend; bodies are streamed
raw and inflated in bounded slices so no server can make it hold more than the caps.
"""

from __future__ import annotations

import asyncio
import json
import os
import ssl
from collections.abc import Sequence
from http.cookiejar import CookieJar, DefaultCookiePolicy
from typing import TYPE_CHECKING

import httpx2

from ...net.allow import AllowList
from ...net.guard import check_host, check_url
from ...seam import (
    FetchBody,
    FetchProvider,
    FetchRequest,
    FetchResult,
    HtmlBody,
    PdfBody,
    RedirectRule,
    TextBody,
    WebError,
    WebErrorCode,
    check_bot_wall,
)
from ..spec import NoSettings, ProviderContext, ProviderSpec
from ._content import SNIFF_BYTES, Kind, declared_kind, decode_text, final_kind, media_type
from ._content import media_type as media_type_of
from ._decoding import ACCEPT_ENCODING, BodyDecoder
from ._pdf import extract_pdf_text

if TYPE_CHECKING:
    import httpcore2

    from ...net.pinning import PinningBackend, Resolver

__all__ = ["MAX_REDIRECTS", "PROVIDER", "HttpFetchProvider", "same_site"]

MAX_REDIRECTS = 5
_REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_ACCEPT = (
    "text/html,application/xhtml+xml,application/xml;q=0.9,text/plain;q=0.8,"
    "application/pdf;q=0.8,application/json;q=0.8,*/*;q=0.5"
)


def _origin(url: httpx2.URL) -> tuple[str, str, int | None]:
    return url.scheme, url.host, url.port


def _no_cookies() -> CookieJar:
    """A jar whose policy admits no domain: nothing is stored, so nothing is ever sent."""
    return CookieJar(policy=DefaultCookiePolicy(allowed_domains=[]))


class HttpFetchProvider:
    """Fetch one concrete URL: private networks refused, every hop vetted, bounded; the
    redirects the request's rule admits (same-site, or any origin), bot walls named.

    It implements the seam's optional :class:`~webreach.seam.FetchPrecheck` and
    :class:`~webreach.seam.CacheScoped`, so a runtime cache never serves it a page its guard
    would refuse now (see :meth:`precheck` and :meth:`cache_scope`).
    """

    id = "http"

    def __init__(
        self,
        *,
        timeout: float = 30.0,
        max_bytes: int = 10 * 1024 * 1024,
        max_chars: int = 2_000_000,
        allow: str | Sequence[str] | AllowList = (),
        resolver: Resolver | None = None,
        dialer: httpcore2.AsyncNetworkBackend | None = None,
        verify: ssl.SSLContext | bool = True,
        user_agent: str | None = None,
        proxy: str | None = None,
    ) -> None:
        """``allow`` opens named private destinations; ``user_agent`` replaces
        ``webreach/<version>`` with an operator's own product name; ``proxy`` sends every
        request through an HTTP(S) proxy, each URL vetted first (its name resolved here and
        every address judged), the proxy then resolving and connecting on its own;
        ``resolver`` and ``dialer`` (an ``httpcore2.AsyncNetworkBackend`` that receives the
        vetted IP) are for tests; with a dialer, connections are httpcore2's, not aiohttp's."""
        self._timeout = timeout
        self._max_bytes = max_bytes
        self._max_chars = max_chars
        self._allow = allow if isinstance(allow, AllowList) else AllowList.parse(allow)
        self._connecting = (resolver, dialer, verify, user_agent, proxy)
        self._opened: tuple[httpx2.AsyncClient, PinningBackend | None] | None = None
        self._scope = _scope(
            self._allow, max_bytes, max_chars, resolver, dialer, verify, proxied=bool(proxy)
        )

    def available(self) -> bool:
        return True

    def precheck(self, request: FetchRequest) -> None:
        """Raise, with no I/O, the ``WebError`` :meth:`fetch` would raise from the URL alone.

        ``WEB_INVALID_URL`` for a URL that is not a fetchable web URL; ``WEB_BLOCKED_URL`` for an
        IP literal of a blocked address (in any spelling) or a loopback name, unless the allow
        list opens it. The runtime calls this before it looks in its cache. A host name is not
        resolved here: a cache hit makes no connection, and the cache key's scope means only a
        page fetched (and its name vetted) under this same allow list can be a hit.
        """
        self._vet(request.url)

    def cache_scope(self) -> str:
        """A stable fingerprint of what decides which pages this provider may return.

        The allow list (normalised: the same entries in another order or spelling give the same
        scope), the byte and character caps, and whether the TLS check, resolver or dialer were
        replaced. The runtime puts it in every cache key, so results cached under one policy are
        never read under another, even from a cache file shared across runs.
        """
        return self._scope

    async def aclose(self) -> None:
        if self._opened is not None:
            await self._opened[0].aclose()

    def _open(self) -> tuple[httpx2.AsyncClient, PinningBackend | None]:
        """The client, and the backend that resolves names for a proxied one, made by the first
        request: a page the cache answers needs no connection pool (nor aiohttp loaded)."""
        if self._opened is not None:
            return self._opened
        from ...net.client import create_fetch_client
        from ...net.pinning import PinningBackend

        resolver, dialer, verify, user_agent, proxy = self._connecting
        backend = PinningBackend(self._allow, resolver=resolver, inner=dialer)
        transport: httpx2.AsyncBaseTransport
        if proxy:
            transport = httpx2.AsyncHTTPTransport(proxy=proxy, verify=verify, trust_env=False)
        elif dialer is not None:  # aiohttp has no dialling hook: a dialer keeps httpcore2's pools
            from ...net.pinned_transport import PinnedTransport

            transport = PinnedTransport(backend, verify=verify)
        else:
            from ...net.pinned_aio import PinnedAioTransport

            transport = PinnedAioTransport(backend, verify=verify)
        client = create_fetch_client(
            transport,
            timeout=self._timeout,
            headers={
                "Accept": _ACCEPT,
                "Accept-Encoding": ACCEPT_ENCODING,
                **({"User-Agent": user_agent} if user_agent else {}),
            },
        )
        client.cookies = _no_cookies()
        self._opened = client, backend if proxy else None
        return self._opened

    def _vet(self, url: str) -> httpx2.URL:
        try:
            checked = check_url(url)
            check_host(checked.host, self._allow, _port(checked))
        except WebError as error:
            error.provider = error.provider or self.id
            raise
        return checked

    async def fetch(self, request: FetchRequest) -> FetchResult:
        try:
            url = self._vet(request.url)
            async with asyncio.timeout(self._timeout):
                return await self._follow(url, request.redirects)
        except (TimeoutError, httpx2.TimeoutException) as error:
            _forget_frames(error)
            raise WebError(
                WebErrorCode.WEB_FETCH_TIMEOUT,
                f"fetching {request.url} took longer than {self._timeout:g} s",
                provider=self.id,
            ) from None
        except httpx2.HTTPError as error:
            try:
                failed = error.request.url
            except RuntimeError:
                failed = httpx2.URL(request.url)
            raise _transport_failure(error, failed) from None
        except WebError as error:
            error.provider = error.provider or self.id
            raise

    async def _follow(self, url: httpx2.URL, rule: RedirectRule) -> FetchResult:
        current = url
        client, proxied = self._open()
        for hop in range(MAX_REDIRECTS + 1):
            check_host(current.host, self._allow, _port(current))
            if proxied is not None:
                await proxied.resolve(current.host, _port(current), self._timeout)
            async with client.stream("GET", current) as response:
                target = _redirect_target(response, current, rule)
                if target is None:
                    return await self._read(response, current)
                if hop == MAX_REDIRECTS:
                    raise WebError(
                        WebErrorCode.WEB_REDIRECT_BLOCKED,
                        f"{url} redirected more than {MAX_REDIRECTS} times; the last hop, to "
                        f"{target}, was not followed",
                        status=response.status_code,
                    )
            current = target
        raise AssertionError("unreachable: the loop returns or raises")

    async def _read(self, response: httpx2.Response, url: httpx2.URL) -> FetchResult:
        check_bot_wall(str(url), response.status_code, response.headers, "", self.id)
        declared_length = _content_length(response)
        if declared_length is not None and declared_length > self._max_bytes:
            raise WebError(
                WebErrorCode.WEB_FETCH_TOO_LARGE,
                f"{url} declares {declared_length} bytes; the limit is "
                f"{bytes_limit(self._max_bytes)}",
                status=response.status_code,
            )
        media = media_type(response.headers.get("content-type"))
        declared = declared_kind(media)
        charset = response.charset_encoding
        decoder = BodyDecoder(response.headers.get("content-encoding"))
        body = bytearray()
        kind: Kind | None = None
        cut = False
        async for chunk in response.aiter_raw():
            for piece in decoder.feed(chunk):
                room = self._max_bytes - len(body)
                body += piece[:room]
                if len(piece) > room:
                    cut = True
                    break
            if kind is None and len(body) >= SNIFF_BYTES:
                kind = final_kind(declared, media, bytes(body[:SNIFF_BYTES]), charset)
            if cut:
                break
        if kind is None:
            kind = final_kind(declared, media, bytes(body[:SNIFF_BYTES]), charset)
        if cut and kind is Kind.PDF:
            raise WebError(
                WebErrorCode.WEB_FETCH_TOO_LARGE,
                f"the PDF at {url} is larger than {bytes_limit(self._max_bytes)}; "
                "a part cannot be read",
                status=response.status_code,
            )
        body_value, truncated = await self._represent(bytes(body), kind, charset, complete=not cut)
        if not isinstance(body_value, PdfBody):
            check_bot_wall(
                str(url), response.status_code, response.headers, body_value.content, self.id
            )
        by = chars_limit(self._max_chars) if truncated else bytes_limit(self._max_bytes)
        return FetchResult(
            url=str(url),
            status_code=response.status_code,
            body=body_value,
            truncated=truncated or cut,
            truncated_by=by if truncated or cut else None,
        )

    async def read_document(self, data: bytes, media_type: str | None, name: str) -> FetchResult:
        """A document held in memory, read as a fetched body of ``media_type`` (sniffed when
        missing or wrong), within the same byte and character limits."""
        if len(data) > self._max_bytes:
            raise WebError(
                WebErrorCode.WEB_FETCH_TOO_LARGE,
                f"{name} is {len(data)} bytes; the limit is {self._max_bytes}",
            )
        media = media_type_of(media_type)
        kind = final_kind(declared_kind(media), media, data[:SNIFF_BYTES], None)
        body, truncated = await self._represent(data, kind, None, complete=True)
        return FetchResult(url=name, status_code=200, body=body, truncated=truncated)

    async def _represent(
        self, data: bytes, kind: Kind, charset: str | None, *, complete: bool
    ) -> tuple[FetchBody, bool]:
        if kind is Kind.PDF:
            pdf = await asyncio.to_thread(extract_pdf_text, data, self._max_chars)
            return PdfBody(pdf.content, page_count=pdf.page_count), pdf.truncated
        text, truncated = decode_text(
            data, charset, kind, complete=complete, max_chars=self._max_chars
        )
        return (HtmlBody(text) if kind is Kind.HTML else TextBody(text)), truncated


def bytes_limit(max_bytes: int) -> str:
    """The byte cap named as a truncated result names it: the setting that raises it."""
    return f"{max_bytes:,} bytes (WEBREACH_FETCH_MAX_BYTES)"


def chars_limit(max_chars: int) -> str:
    """The decoded-character cap named as a truncated result names it."""
    return f"{max_chars:,} characters (WEBREACH_FETCH_MAX_BODY_CHARS)"


def _scope(
    allow: AllowList,
    max_bytes: int,
    max_chars: int,
    resolver: Resolver | None,
    dialer: httpcore2.AsyncNetworkBackend | None,
    verify: ssl.SSLContext | bool,
    *,
    proxied: bool = False,
) -> str:
    """The cache scope of one configuration; see :meth:`HttpFetchProvider.cache_scope`. A
    proxy's presence counts (the names it resolves are its own), never its URL."""
    tls = "custom" if isinstance(verify, ssl.SSLContext) else "on" if verify else "off"
    extra = {"proxy": True} if proxied else {}
    return json.dumps(
        {
            **extra,
            "allow": allow.entries(),
            "max_bytes": max_bytes,
            "max_chars": max_chars,
            "tls": tls,
            "resolver": None if resolver is None else _name_of(resolver),
            "dialer": None if dialer is None else _name_of(dialer),
        },
        sort_keys=True,
        separators=(",", ":"),
    )


def _port(url: httpx2.URL) -> int:
    """The port ``url`` connects to; an allow-list entry with a port opens only that one."""
    return url.port or (443 if url.scheme == "https" else 80)


def _name_of(hook: object) -> str:
    """A replaced resolver or dialer, named the same way in every process."""
    named = hook if hasattr(hook, "__qualname__") else type(hook)
    return f"{getattr(named, '__module__', '?')}.{getattr(named, '__qualname__', '?')}"


def _content_length(response: httpx2.Response) -> int | None:
    value = response.headers.get("content-length", "").strip()
    return int(value) if value.isdigit() else None


def _redirect_target(
    response: httpx2.Response, current: httpx2.URL, rule: RedirectRule
) -> httpx2.URL | None:
    """The vetted target of a redirect the rule admits, None if this is no redirect, or raise."""
    location = response.headers.get("location")
    if response.status_code not in _REDIRECT_STATUSES or not location:
        return None
    try:
        target = check_url(str(current.join(location)))
    except (httpx2.InvalidURL, WebError) as error:
        raise WebError(
            WebErrorCode.WEB_REDIRECT_BLOCKED,
            f"{current} redirects to {location!r}, which is not a valid web URL ({error})",
            status=response.status_code,
        ) from None
    if rule == "same_site" and not same_site(current, target):
        raise WebError(
            WebErrorCode.WEB_REDIRECT_BLOCKED,
            f"{current} redirects to {target}, another site, which was not followed; "
            f"fetch {target} in a new call to read it",
            status=response.status_code,
        )
    return target


def _bare(host: str) -> str:
    return host[4:] if host.startswith("www.") and host.count(".") >= 2 else host


def same_site(current: httpx2.URL, target: httpx2.URL) -> bool:
    """Whether a redirect stays on the site a model asked for: the same origin, with ``www.``
    added or removed, and ``http`` → ``https`` from and to the default ports allowed."""
    if current.host != target.host and _bare(current.host) != _bare(target.host):
        return False
    if current.scheme == target.scheme:
        return _port(current) == _port(target)
    return (current.scheme, _port(current), target.scheme, _port(target)) == (
        "http",
        80,
        "https",
        443,
    )


def _transport_failure(error: httpx2.HTTPError, url: httpx2.URL) -> WebError:
    """A ``WEB_PROVIDER_ERROR`` that names the cause (refused, TLS, protocol, reset); the
    cause's frames are dropped once named."""
    chain = _chain(error)
    tls = next((e for e in reversed(chain) if isinstance(e, ssl.SSLError)), None)  # innermost
    if tls is not None:
        what = "TLS handshake failed with"
        detail = (
            f"certificate verify failed: {tls.verify_message}"
            if isinstance(tls, ssl.SSLCertVerificationError)
            else str(tls.reason or tls)
        )
    else:
        if isinstance(error, httpx2.ConnectError):
            what = "could not connect to"
        elif isinstance(error, httpx2.RemoteProtocolError):
            what = "protocol error from"
        elif isinstance(error, httpx2.NetworkError):
            what = "connection lost to"
        else:
            what = "request failed to"
        detail = next(filter(None, (_describe(e) for e in reversed(chain))), type(error).__name__)
    host = url.host if url.port is None else f"{url.host}:{url.port}"
    _forget_frames(error)
    return WebError(
        WebErrorCode.WEB_PROVIDER_ERROR, f"http: {what} {host} ({detail})", provider="http"
    )


def _chain(error: BaseException) -> list[BaseException]:
    found: list[BaseException] = []
    seen: BaseException | None = error
    while seen is not None and seen not in found:
        found.append(seen)
        seen = seen.__cause__ or seen.__context__
    return found


def _forget_frames(error: BaseException) -> None:
    """Drop the tracebacks of a failure the ``WebError`` has already named. aiohttp's connector
    keeps the exception it raises in a local of a frame on that exception's own traceback, a
    cycle only the garbage collector frees: about 150 objects per refused page, which made full
    collections most of a wave's CPU when every page of its searches was unreachable."""
    for link in _chain(error):
        link.__traceback__ = None


def _describe(error: BaseException) -> str:
    """The most specific words for one link of the chain ("Connection refused")."""
    if isinstance(error, OSError) and error.errno:
        return os.strerror(error.errno)
    return str(error)


def _create(_settings: NoSettings, context: ProviderContext) -> HttpFetchProvider:
    """Its limits are the shared ``WEBREACH_FETCH_*`` settings; its client is its own."""
    return HttpFetchProvider(
        timeout=context.fetch_timeout,
        max_bytes=context.fetch_max_bytes,
        max_chars=context.fetch_max_body_chars,
        allow=context.fetch_allow or (),
        user_agent=context.fetch_user_agent,
        proxy=context.fetch_proxy,
    )


PROVIDER: ProviderSpec[NoSettings, FetchProvider] = ProviderSpec("http", NoSettings, _create)
