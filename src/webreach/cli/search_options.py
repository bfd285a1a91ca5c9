"""The options of ``webreach search`` that become the tool's filters and arguments, checked
before anything runs: a bad value is one line, exit 2, naming the option."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .common import usage

if TYPE_CHECKING:
    from ..tools import SearchFilters

__all__ = ["search_filters", "search_tuning"]


def search_filters(
    recency: str | None,
    sites: list[str] | None,
    excluded: list[str] | None,
    country: str | None,
    language: str | None,
    *,
    as_json: bool,
) -> SearchFilters:
    """The filters the options ask for; a bad value stops here, one line, exit 2."""
    from ..seam import InvalidValueError
    from ..tools import SearchFilters

    options = {
        "recency": "--recency",
        "include_domains": "--site",
        "exclude_domains": "--exclude-site",
        "country": "--country",
        "language": "--language",
    }
    asked = SearchFilters(
        recency,  # type: ignore[arg-type]  # checked just below
        tuple(sites or ()),
        tuple(excluded or ()),
        country,
        language,
    )
    try:
        return asked.check()
    except InvalidValueError as error:
        usage(f"{options.get(error.field, error.field)}: {error}", as_json=as_json)


def search_tuning(
    num_search_results: str | None,
    max_tokens: str | None,
    temperature: str | None,
    *,
    as_json: bool,
) -> dict[str, int | float]:
    """The tool arguments the options ask for, read as ``web_search`` declares them (whole
    number or number, then its bounds); a bad value stops here, one line, exit 2."""
    from ..seam import InvalidValueError
    from ..tools.base import SearchTuning
    from ..tools.search.inputs import TUNING, OptionalArgument

    def number(argument: OptionalArgument, text: str | None) -> Any:
        if text is None:
            return None
        kind = int if argument.type == "integer" else float
        try:
            return kind(text.strip())
        except ValueError:
            what = "a whole number" if kind is int else "a number"
            usage(f"{_option(argument.name)}: must be {what}, not {text!r}", as_json=as_json)

    given = (num_search_results, max_tokens, temperature)
    asked = {a.name: number(a, text) for a, text in zip(TUNING, given, strict=True)}
    try:
        SearchTuning(**asked)
    except InvalidValueError as error:
        usage(f"{_option(error.field)}: {error}", as_json=as_json)
    return {name: value for name, value in asked.items() if value is not None}


def _option(argument: str) -> str:
    """The option of ``webreach search`` that sets a ``web_search`` argument."""
    return "--" + argument.replace("_", "-")
