"""The field types of the web endpoints' bodies: each one's type, bounds and pattern, which
pydantic checks and the OpenAPI document publishes, and its refusals in the server's words.

A field for a tool's argument (``num_search_results``, ``start``, …) is built from the tool's
declaration of it (:class:`~webreach.tools.base.Argument`): its bounds, description and refusals
cannot drift from what the model is shown.

Integers take what JSON Schema calls an integer (``1.0`` too); text that must say something has
the non-blank pattern; URLs and domains the patterns of :mod:`.patterns`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Annotated

from pydantic import BeforeValidator, ConfigDict, Field
from pydantic.fields import FieldInfo

from ...seam import MAX_URL_LENGTH, Recency, WebError, WebErrorCode
from ...tools.base import Argument
from ...tools.fetch import MAX_AGE, PAGE_FORMATS, START, URL, PageFormat
from ...tools.search.inputs import MAX_TOKENS, NUM_SEARCH_RESULTS, RECENCY, TEMPERATURE
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
    "RecencyField",
    "Start",
    "Temperature",
    "Text",
    "Url",
    "argument_checks",
    "argument_field",
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


def at_most(bound: int) -> Callable[[object], bool]:
    """Passes values it does not bound: the type's own check refuses those, in its words."""

    def test(value: object) -> bool:
        if isinstance(value, list):
            return len(value) <= bound
        return not isinstance(value, int) or value <= bound

    return test


Check = tuple[Callable[[object], bool], str]
"""A test and the refusal, in the server's words, of a value that fails it."""


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _either(choices: tuple[str, ...]) -> str:
    named = [f"`{choice}`" for choice in choices]
    return f"{', '.join(named[:-1])} or {named[-1]}" if len(named) > 1 else named[0]


def argument_field(argument: Argument) -> FieldInfo:
    """The field of a tool's ``argument`` as declared: its bounds, and its description with the
    sources' count called ``max_results``, as the search body names it."""
    declared: FieldInfo = Field(
        ge=argument.minimum,
        le=argument.maximum,
        min_length=argument.min_length,
        max_length=argument.max_length,
        description=argument.describe("max_results"),
    )
    return declared


def _between(low: float, high: float) -> Callable[[object], bool]:
    def test(value: object) -> bool:
        return (
            isinstance(value, int | float) and not isinstance(value, bool) and low <= value <= high
        )

    return test


def _refusals(argument: Argument) -> list[Check]:
    low, high = argument.minimum, argument.maximum
    if argument.enum:
        return [(lambda v: v in argument.enum, f"must be {_either(argument.enum)}")]
    if argument.type == "number" and low is not None and high is not None:
        between = (_between(low, high), f"must be between {low} and {high}")
        return [(_number, "must be a number"), between]
    if argument.type == "integer" and low in (0, 1):
        whole: Check = (
            (positive, "must be a positive integer")
            if low
            else (_whole, "must be a non-negative integer")
        )
        return [whole] if high is None else [whole, (at_most(int(high)), f"must be at most {high}")]
    raise ValueError(f"`{argument.name}`: no refusal is worded for its type and bounds")


def argument_checks(argument: Argument, *, nullable: bool = False) -> BeforeValidator:
    """The checks of a tool's ``argument`` in this server's words, from its declaration: its
    choices, else its type, then its bounds (``nullable``: null passes, being absent). Bounds
    this has no words for fail at import."""
    refusals = _refusals(argument)
    if nullable:
        refusals = [(_or_null(test), said) for test, said in refusals]
    (test, said), *more = refusals
    return checked(test, said, *more)


def _or_null(test: Callable[[object], bool]) -> Callable[[object], bool]:
    return lambda value: value is None or test(value)


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
    argument_field(URL),
    Field(pattern=HTTP_URL),
    BeforeValidator(_http_url),
    checked(_text, "must be a non-empty http(s) URL string"),
]
"""``checked`` runs first: a URL that is no string is refused in the body's words."""
Start = Annotated[int, argument_field(START), argument_checks(START), Integral]
MaxAge = Annotated[
    int | None, argument_field(MAX_AGE), argument_checks(MAX_AGE, nullable=True), Integral
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


RecencyField = Annotated[Recency, argument_checks(RECENCY), argument_field(RECENCY)]
NumSearchResults = Annotated[
    int, argument_field(NUM_SEARCH_RESULTS), argument_checks(NUM_SEARCH_RESULTS), Integral
]
MaxTokens = Annotated[int, argument_field(MAX_TOKENS), argument_checks(MAX_TOKENS), Integral]
Temperature = Annotated[float, argument_field(TEMPERATURE), argument_checks(TEMPERATURE)]


def texts(value: object) -> bool:
    return isinstance(value, list) and all(_text(item) for item in value)
