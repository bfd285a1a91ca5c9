"""The field types of the web endpoints' bodies: each one's type, bounds and pattern, which
pydantic checks and the OpenAPI document publishes, and its refusals in the server's words.

Integers take what JSON Schema calls an integer (``1.0`` too); text that must say something has
the non-blank pattern; URLs and domains the patterns of :mod:`.patterns`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Annotated

from pydantic import BeforeValidator, ConfigDict, Field

from ...seam import (
    MAX_TEMPERATURE,
    MAX_URL_LENGTH,
    MIN_TEMPERATURE,
    WebError,
    WebErrorCode,
    temperature_problem,
)
from ...tools.base import MAX_NUM_SEARCH_RESULTS, MAX_SEARCH_TOKENS
from ...tools.fetch import PAGE_FORMATS, PageFormat
from ..core.wire.fields import checked
from .patterns import DOMAIN, HTTP_URL, NON_BLANK, TWO_LETTERS, http_url

__all__ = [
    "PATTERNS",
    "Country",
    "Domains",
    "Format",
    "Integral",
    "Language",
    "MaxAge",
    "MaxTokens",
    "NumSearchResults",
    "Start",
    "Temperature",
    "Text",
    "Url",
    "at_most",
    "positive",
    "texts",
]


def _text(value: object) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def positive(value: object) -> bool:
    return _whole(value) and bool(value)


def _integral(value: object) -> object:
    """JSON has one kind of number, and JSON Schema's integer is a number without a fraction:
    ``1.0`` (or ``1e3``) is an integer as the published document says, so it is taken as one."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


Integral = BeforeValidator(_integral)
"""Last in a field's ``Annotated``, so it runs before the field's checks."""

PATTERNS = ConfigDict(regex_engine="python-re")
"""The published patterns are checked with Python's ``re``: its whitespace is what the server
trims (``str.strip``)."""

Text = Annotated[
    str,
    Field(min_length=1, pattern=NON_BLANK),
    checked(_text, "must be a non-empty string"),
]


def _url_problem(url: str) -> str:
    """What keeps ``url`` from the published pattern, in the words the fetcher's guard uses."""
    given = url.strip()
    if len(url) > MAX_URL_LENGTH:
        return f"URL is {len(url)} characters long; the limit is {MAX_URL_LENGTH}"
    scheme, found, rest = given.partition("://")
    if not found:
        return "URL has no scheme: write it with http:// or https://"
    if scheme.lower() not in ("http", "https"):
        return f"URL scheme {scheme!r} is not supported; use http or https"
    if "@" in re.split(r"[/?#]", rest, maxsplit=1)[0]:
        return "URL carries credentials (user:password@); they are never sent"
    return (
        "URL must be http(s)://, an ASCII host name (punycode for an international one), an "
        "IPv4 address or a bracketed IPv6 one, a port from 1 to 65535, then a path without "
        "spaces or control characters"
    )


def _http_url(value: object) -> object:
    """The published pattern, else a ``WEB_INVALID_URL`` naming what is wrong, as the fetcher
    would refuse it."""
    if not isinstance(value, str) or (len(value) <= MAX_URL_LENGTH and http_url(value)):
        return value
    raise WebError(WebErrorCode.WEB_INVALID_URL, _url_problem(value))


Url = Annotated[
    str,
    Field(
        min_length=1,
        max_length=MAX_URL_LENGTH,
        pattern=HTTP_URL,
        description="An http(s) URL; an international host name in punycode (`xn--`).",
    ),
    BeforeValidator(_http_url),
    checked(_text, "must be a non-empty http(s) URL string"),
]
"""``checked`` runs first: a URL that is no string is refused in the body's words."""
Start = Annotated[
    int,
    Field(ge=0, description="Character offset to continue from (a previous `next_start`)."),
    checked(_whole, "must be a non-negative integer"),
    Integral,
]
MaxAge = Annotated[
    int | None,
    Field(
        ge=0,
        description="Seconds: a cached copy older than this is fetched again; 0 always fetches.",
    ),
    checked(lambda v: v is None or _whole(v), "must be a non-negative integer"),
    Integral,
]
Format = Annotated[
    PageFormat,
    checked(lambda v: v in PAGE_FORMATS, "must be `markdown`, `text` or `raw`"),
    Field(
        description="`markdown`: the page's main content (reader mode), as `web_fetch` reads "
        "it; `text`: the same content as plain text; `raw`: the decoded body (HTML source)."
    ),
]


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _host_names(value: object) -> object:
    """Each domain as the published pattern has it, else which one is not (in the filters'
    words); a value that is no array of strings is the type check's to refuse."""
    if _strings(value):
        assert isinstance(value, list)
        for item in value:
            if not re.search(DOMAIN, item):
                raise ValueError(f"{item!r} is not a domain name (a host name like python.org)")
    return value


Domains = Annotated[
    list[Annotated[str, Field(pattern=DOMAIN)]],
    BeforeValidator(_host_names),
    checked(_strings, "must be an array of domain names"),
    Field(description="Domain names (`python.org`); a domain matches itself and its subdomains."),
]


def _string(value: object) -> bool:
    return isinstance(value, str)


def _two_letters(value: object) -> bool:
    return isinstance(value, str) and re.search(TWO_LETTERS, value) is not None


Country = Annotated[
    str,
    Field(pattern=TWO_LETTERS),
    checked(
        _string, "must be a string", (_two_letters, "must be an ISO 3166-1 alpha-2 code like DE")
    ),
]
Language = Annotated[
    str,
    Field(pattern=TWO_LETTERS),
    checked(_string, "must be a string", (_two_letters, "must be an ISO 639-1 code like de")),
]


def at_most(bound: int) -> Callable[[object], bool]:
    """Passes values it does not bound: the type's own check refuses those, in its words."""

    def test(value: object) -> bool:
        if isinstance(value, list):
            return len(value) <= bound
        return not isinstance(value, int) or value <= bound

    return test


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _temperature(value: object) -> bool:
    return temperature_problem(value) is None


NumSearchResults = Annotated[
    int,
    Field(
        ge=1,
        le=MAX_NUM_SEARCH_RESULTS,
        description="Results the provider looks at, when more than `max_results` (only "
        "Perplexity keeps the two apart; the others ask for this many).",
    ),
    checked(
        positive,
        "must be a positive integer",
        (at_most(MAX_NUM_SEARCH_RESULTS), f"must be at most {MAX_NUM_SEARCH_RESULTS}"),
    ),
    Integral,
]
MaxTokens = Annotated[
    int,
    Field(
        ge=1,
        le=MAX_SEARCH_TOKENS,
        description="The longest answer a model-backed provider may write; others ignore it.",
    ),
    checked(
        positive,
        "must be a positive integer",
        (at_most(MAX_SEARCH_TOKENS), f"must be at most {MAX_SEARCH_TOKENS}"),
    ),
    Integral,
]
Temperature = Annotated[
    float,
    Field(
        ge=MIN_TEMPERATURE,
        le=MAX_TEMPERATURE,
        description="A model-backed provider's temperature; others ignore it.",
    ),
    checked(
        _number,
        "must be a number",
        (_temperature, f"must be between {MIN_TEMPERATURE} and {MAX_TEMPERATURE}"),
    ),
]


def texts(value: object) -> bool:
    return isinstance(value, list) and all(_text(item) for item in value)
