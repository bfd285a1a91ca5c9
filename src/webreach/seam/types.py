"""Request and result types shared by every provider and every consumer."""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from dataclasses import dataclass
from typing import Literal, assert_never, get_args
from urllib.parse import unquote_to_bytes, urlsplit

from .errors import InvalidValueError, WebError, WebErrorCode

__all__ = [
    "MAX_TEMPERATURE",
    "MAX_URL_LENGTH",
    "MIN_TEMPERATURE",
    "FetchBody",
    "FetchRequest",
    "FetchResult",
    "HtmlBody",
    "ImageBytes",
    "ImageInput",
    "ImageMatch",
    "ImageSearchRequest",
    "ImageSearchResult",
    "ImageUrl",
    "PdfBody",
    "Recency",
    "RedirectRule",
    "SearchCitation",
    "SearchFilter",
    "SearchRequest",
    "SearchResult",
    "SearchSource",
    "TextBody",
    "image_from_url",
    "temperature_problem",
]

MAX_URL_LENGTH = 2048
"""The longest URL a fetch accepts: the tools' schema and the fetcher's check."""


MIN_TEMPERATURE = 0
MAX_TEMPERATURE = 2
"""The sampling temperatures a model-backed provider is asked for: the request's check, the
tools' schema and the web API's body all read these."""


def temperature_problem(value: object) -> str | None:
    """What is wrong with ``value`` as a temperature (``must be between 0 and 2, not 3``);
    None when it is a number in range. The one check of the range."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"must be a number, not {value!r}"
    if not MIN_TEMPERATURE <= value <= MAX_TEMPERATURE:
        return f"must be between {MIN_TEMPERATURE} and {MAX_TEMPERATURE}, not {value!r}"
    return None


def _max_results_refused(owner: str, value: int) -> InvalidValueError:
    return InvalidValueError("max_results", f"{owner}.max_results must be at least 1, not {value}")


Recency = Literal["day", "week", "month", "year"]
"""How recent a source must be: published within the last day, week, month or year."""
SearchFilter = Literal["recency", "include_domains", "exclude_domains", "country", "language"]
"""The filters of a :class:`SearchRequest`, by name: what a provider declares it passes to its
API (``SearchProvider.filters``) and what a result says was applied, and by whom."""
RECENCIES: tuple[Recency, ...] = get_args(Recency)
_HOST = re.compile(r"[^\W_](?:[\w-]*[^\W_])?(?:\.[^\W_](?:[\w-]*[^\W_])?)*")
"""Dot-separated labels of letters (any script), digits and inner hyphens."""


def _domains(owner: str, name: str, value: object) -> tuple[str, ...]:
    """Host names, lower-cased, without a scheme, path, port or leading ``*.``/``.``."""
    items = (value,) if isinstance(value, str) else value
    if not isinstance(items, (tuple, list)):
        raise InvalidValueError(name, f"{owner}.{name} must be a list of domains")
    domains: list[str] = []
    for item in items:
        if not isinstance(item, str) or not item.strip():
            raise InvalidValueError(name, f"{owner}.{name} must hold non-empty domain names")
        host = item.strip().lower()
        host = (urlsplit(host).hostname or "") if "://" in host else host.split("/")[0]
        host = host.split(":")[0].removeprefix("*.").strip(".")
        if not _HOST.fullmatch(host):
            raise InvalidValueError(name, f"{owner}.{name}: {item!r} is not a domain name")
        if host not in domains:
            domains.append(host)
    return tuple(domains)


def _at_least_one(owner: str, name: str, value: int | None) -> None:
    if value is not None and (isinstance(value, bool) or value < 1):
        raise InvalidValueError(name, f"{owner}.{name} must be at least 1, not {value!r}")


def _code(owner: str, name: str, value: str | None, what: str) -> str | None:
    if value is None:
        return None
    code = value.strip() if isinstance(value, str) else ""
    if len(code) != 2 or not code.isascii() or not code.isalpha():
        raise InvalidValueError(name, f"{owner}.{name} must be {what}, not {value!r}")
    return code


@dataclass(frozen=True, slots=True)
class SearchRequest:
    """One query, and the filters a search may narrow it with. Nothing provider-specific ever
    goes here: each provider passes the filters its API takes, the seam applies what it can of
    the rest after it (:mod:`webreach.seam.filters`)."""

    query: str
    max_results: int | None = None
    recency: Recency | None = None
    include_domains: tuple[str, ...] = ()
    """Only sources on these sites (a domain matches itself and its subdomains)."""
    exclude_domains: tuple[str, ...] = ()
    country: str | None = None
    """Where the results should come from, ISO 3166-1 alpha-2 (``DE``), upper-cased here."""
    language: str | None = None
    """The results' language, ISO 639-1 (``de``), lower-cased here."""
    num_search_results: int | None = None
    """How many results the provider should look at, when that differs from how many come back
    (``max_results``); only Perplexity keeps the two apart, the others use :meth:`breadth`."""
    max_tokens: int | None = None
    """The longest answer a model-backed provider may write; index lookups ignore it."""
    temperature: float | None = None
    """A model-backed provider's sampling temperature (:data:`MIN_TEMPERATURE` to
    :data:`MAX_TEMPERATURE`); index lookups ignore it."""

    def __post_init__(self) -> None:
        owner = type(self).__name__
        if self.max_results is not None and self.max_results < 1:
            raise _max_results_refused(owner, self.max_results)
        _at_least_one(owner, "num_search_results", self.num_search_results)
        _at_least_one(owner, "max_tokens", self.max_tokens)
        if self.temperature is not None and (wrong := temperature_problem(self.temperature)):
            raise InvalidValueError("temperature", f"{owner}.temperature {wrong}")
        recency = self.recency.strip().lower() if isinstance(self.recency, str) else self.recency
        if recency is not None and recency not in RECENCIES:
            choices = ", ".join(RECENCIES)
            raise InvalidValueError(
                "recency", f"{owner}.recency must be one of {choices}, not {self.recency!r}"
            )
        include = _domains(owner, "include_domains", self.include_domains)
        exclude = _domains(owner, "exclude_domains", self.exclude_domains)
        country = _code(owner, "country", self.country, "an ISO 3166-1 alpha-2 code like DE")
        language = _code(owner, "language", self.language, "an ISO 639-1 code like de")
        object.__setattr__(self, "recency", recency)
        object.__setattr__(self, "include_domains", include)
        object.__setattr__(self, "exclude_domains", exclude)
        object.__setattr__(self, "country", country.upper() if country else None)
        object.__setattr__(self, "language", language.lower() if language else None)

    def filters(self) -> frozenset[SearchFilter]:
        """The filters this request sets."""
        named: dict[SearchFilter, object] = {
            "recency": self.recency,
            "include_domains": self.include_domains,
            "exclude_domains": self.exclude_domains,
            "country": self.country,
            "language": self.language,
        }
        return frozenset(name for name, value in named.items() if value)

    def breadth(self) -> int | None:
        """The result count to ask a provider for: ``num_search_results``, else
        ``max_results``."""
        return self.num_search_results if self.num_search_results is not None else self.max_results


@dataclass(frozen=True, slots=True)
class SearchSource:
    """A found page. Only ``url`` is required; providers never invent missing fields."""

    url: str
    title: str | None = None
    snippet: str | None = None
    published_at: str | None = None


@dataclass(frozen=True, slots=True)
class SearchCitation:
    """A page a provider's answer cites, and the answer's words that cite it, when given."""

    url: str
    title: str | None = None
    cited_text: str | None = None


@dataclass(frozen=True, slots=True)
class SearchResult:
    """``content`` is a provider-generated answer, when it has one.

    ``provider`` is stamped by the runtime with the id of the provider that answered.
    """

    sources: tuple[SearchSource, ...]
    content: str | None = None
    truncated: bool = False
    provider: str | None = None
    filtered_by_provider: frozenset[SearchFilter] = frozenset()
    """The request's filters the provider's API applied (stamped by the runtime)."""
    filtered_after: frozenset[SearchFilter] = frozenset()
    """The request's filters the seam applied to the provider's sources."""
    unfiltered: frozenset[SearchFilter] = frozenset()
    """The request's filters nobody could apply (a ``country`` the provider cannot take, say)."""
    citations: tuple[SearchCitation, ...] = ()
    """What the answer in ``content`` cites, in the answer's order."""
    related: tuple[str, ...] = ()
    """Questions or searches the provider suggests next (Perplexity's ``related_questions``)."""
    queries: tuple[str, ...] = ()
    """The searches a model-backed provider ran to answer."""

    def has_content(self) -> bool:
        """Whether there is anything to show: a source or an answer's text. A chain moves on
        from a result without either, as from an error."""
        return bool(self.sources) or bool(self.content and self.content.strip())


RedirectRule = Literal["same_site", "cross_origin"]
"""Which redirects a fetch follows: ``same_site`` (what a model asked for by URL: the same
origin, ``www.`` added or removed, ``http`` → ``https`` on the default port) or
``cross_origin`` (reads nobody asked for one by one, such as search passages: any web URL the
guard admits). Either way at most five hops, every hop vetted."""


@dataclass(frozen=True, slots=True)
class FetchRequest:
    """One URL to fetch, and how: the defaults are a plain programmatic fetch.

    ``obey_robots``: the fetch is one a model asked for, so the site's robots.txt is obeyed
    (unless the runtime's robots setting says otherwise). ``max_age``: a cached page older than
    this many seconds is fetched again (0 always fetches; None: any page within the cache TTL).
    """

    url: str
    redirects: RedirectRule = "same_site"
    obey_robots: bool = False
    max_age: float | None = None

    def __post_init__(self) -> None:
        if self.redirects not in ("same_site", "cross_origin"):
            raise InvalidValueError(
                "redirects",
                f"FetchRequest.redirects must be 'same_site' or 'cross_origin', not "
                f"{self.redirects!r}",
            )
        if self.max_age is not None and not self.max_age >= 0:
            raise InvalidValueError(
                "max_age", f"FetchRequest.max_age must be 0 or more seconds, not {self.max_age}"
            )


@dataclass(frozen=True, slots=True)
class HtmlBody:
    content: str


@dataclass(frozen=True, slots=True)
class TextBody:
    content: str


@dataclass(frozen=True, slots=True)
class PdfBody:
    content: str
    page_count: int | None = None


FetchBody = HtmlBody | TextBody | PdfBody
"""Closed union: consumers match exhaustively so a new kind fails type-checking until handled."""


@dataclass(frozen=True, slots=True)
class FetchResult:
    """What arrived. ``url`` is the final URL after allowed redirects; HTTP errors are data."""

    url: str
    status_code: int
    body: FetchBody
    truncated: bool = False
    provider: str | None = None
    rendered_by: str | None = None
    """What drew the body: ``http`` (the document as served) or ``browser`` (the DOM a headless
    browser left after running the page's scripts); None from a provider that does not say."""
    render_reason: str | None = None
    """Why it was drawn that way (``app shell: 12 readable characters, 3 scripts``), when a
    provider chose between the two."""
    truncated_by: str | None = None
    """When ``truncated``, the limit that cut the body, in words a reader can act on
    (``2,000,000 characters (WEBREACH_FETCH_MAX_BODY_CHARS)``); None when not cut or unsaid."""


@dataclass(frozen=True, slots=True)
class ImageUrl:
    """An image given by its address; the image search service fetches it itself."""

    url: str


@dataclass(frozen=True, slots=True, repr=False)
class ImageBytes:
    """An image given by its bytes and media type (``image/png`` …).

    The repr shows the size and the type, never the bytes.
    """

    data: bytes
    media_type: str

    def __repr__(self) -> str:
        return f"ImageBytes(<{len(self.data)} bytes>, media_type={self.media_type!r})"

    @property
    def sha256(self) -> str:
        """The hex SHA-256 of ``data``: how the cache keys an image given by bytes."""
        return hashlib.sha256(self.data).hexdigest()


ImageInput = ImageUrl | ImageBytes
"""Closed union: providers match exhaustively, so a new way to give an image fails type-checking
until each of them handles (or refuses) it."""


def image_from_url(url: str) -> ImageInput:
    """The image a URL designates: a ``data:`` URL (``data:image/png;base64,…``, as chat clients
    send pasted images) becomes :class:`ImageBytes`, any other URL :class:`ImageUrl`.

    A ``data:`` URL whose payload cannot be decoded is ``WEB_INVALID_URL``. Nothing else is
    checked here: :meth:`WebRuntime.image_search` checks the image before any provider runs.
    """
    url = url.strip()
    if url[:5].lower() != "data:":
        return ImageUrl(url)
    header, comma, payload = url[5:].partition(",")
    if not comma:
        raise WebError(WebErrorCode.WEB_INVALID_URL, "malformed data URL: no ',' before the data")
    params = [part.strip() for part in header.split(";")]
    media_type = params[0].lower() or "text/plain"
    if "base64" in (param.lower() for param in params[1:]):
        try:
            data = base64.b64decode(unquote_to_bytes(payload), validate=True)
        except (binascii.Error, ValueError):
            raise WebError(
                WebErrorCode.WEB_INVALID_URL, "malformed data URL: the data is not valid base64"
            ) from None
    else:
        data = unquote_to_bytes(payload)
    return ImageBytes(data=data, media_type=media_type)


@dataclass(frozen=True, slots=True)
class ImageSearchRequest:
    """Find the pages that show one image. Nothing provider-specific ever goes here."""

    image: ImageInput
    max_results: int | None = None

    def __post_init__(self) -> None:
        if self.max_results is not None and self.max_results < 1:
            raise _max_results_refused(type(self).__name__, self.max_results)


@dataclass(frozen=True, slots=True)
class ImageMatch:
    """A page that shows the image (or one very like it).

    ``url`` is the page, ``image_url`` the address of the image on that page (for display; it
    may be absent and is not guaranteed to be reachable), ``thumbnail_url`` a small copy the
    service made. Only ``url`` is required; providers never invent missing fields.
    """

    url: str
    title: str | None = None
    image_url: str | None = None
    snippet: str | None = None
    thumbnail_url: str | None = None


@dataclass(frozen=True, slots=True)
class ImageSearchResult:
    """``content`` is a provider-generated description of the image (a best-guess label, say),
    when it has one.

    ``provider`` is stamped by the runtime with the id of the provider that answered.
    """

    matches: tuple[ImageMatch, ...]
    content: str | None = None
    truncated: bool = False
    provider: str | None = None


def check_image(image: ImageInput) -> None:
    """Refuse an image no provider could search, before any provider runs (no I/O).

    A URL must be http(s), with a host, without credentials, at most :data:`MAX_URL_LENGTH`
    characters (``WEB_INVALID_URL``); bytes must be non-empty and of an ``image/*`` media type
    (``WEB_UNSUPPORTED_CONTENT_TYPE``).
    """
    match image:
        case ImageUrl(url=url):
            _check_image_url(url)
        case ImageBytes(data=data, media_type=media_type):
            if not media_type.lower().startswith("image/"):
                raise WebError(
                    WebErrorCode.WEB_UNSUPPORTED_CONTENT_TYPE,
                    f"an image search needs an image, not {media_type or 'an untyped body'!r}",
                )
            if not data:
                raise WebError(
                    WebErrorCode.WEB_UNSUPPORTED_CONTENT_TYPE, "the image has no data (0 bytes)"
                )
        case _:
            assert_never(image)


def _check_image_url(url: str) -> None:
    def invalid(why: str) -> WebError:
        return WebError(WebErrorCode.WEB_INVALID_URL, f"invalid image URL: {why}")

    if len(url) > MAX_URL_LENGTH:
        raise invalid(f"longer than {MAX_URL_LENGTH} characters")
    if any(char.isspace() or ord(char) < 0x20 or ord(char) == 0x7F for char in url):
        raise invalid("it contains whitespace or control characters")
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        raise invalid("it cannot be parsed") from None
    if parts.scheme.lower() not in ("http", "https"):
        raise invalid(
            "only http and https URLs can be searched (a data: URL gives the image's bytes "
            "through image_from_url)"
        )
    if not host:
        raise invalid("it has no host")
    if "@" in parts.netloc:
        raise invalid("it must not contain credentials (user:password@)")
