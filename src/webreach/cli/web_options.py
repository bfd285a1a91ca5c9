"""The arguments and options of ``webreach search`` and ``webreach fetch``, as typer reads them:
declared here, so each command's signature reads as the list of what it takes."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer

__all__ = [
    "BrowserOption",
    "ContextSizeOption",
    "CountryOption",
    "ExcludeSiteOption",
    "FailOption",
    "Format",
    "FormatOption",
    "JsonOption",
    "LanguageOption",
    "MaxAgeOption",
    "MaxResultsOption",
    "MaxTokensOption",
    "NoCacheOption",
    "NumSearchResultsOption",
    "ProviderOption",
    "QueriesArgument",
    "RawOption",
    "RecencyOption",
    "SiteOption",
    "StartOption",
    "TemperatureOption",
    "UrlArgument",
]


class Format(StrEnum):
    text = "text"
    tool = "tool"
    json = "json"


FormatOption = Annotated[
    Format | None,
    typer.Option(
        "--format",
        help="text: for people (the default); tool: exactly what a model gets; json: --json.",
        show_default=False,
    ),
]
JsonOption = Annotated[
    bool, typer.Option("--json", help="Print the structured result as JSON, for programs.")
]
NoCacheOption = Annotated[
    bool, typer.Option("--no-cache", help="Neither read nor store cached results.")
]

# --- search ---------------------------------------------------------------------------------

QueriesArgument = Annotated[
    list[str],
    typer.Argument(
        metavar="QUERY...",
        help="One or more queries; they run at the same time and their sources are merged.",
        show_default=False,
    ),
]
ProviderOption = Annotated[
    str | None,
    typer.Option(
        "--provider",
        metavar="ID",
        help="Search provider, or a comma list tried in order (see `webreach config`).",
    ),
]
MaxResultsOption = Annotated[
    int | None,
    typer.Option("--max-results", "--limit", metavar="N", min=1, help="Sources to return [8]."),
]
RecencyOption = Annotated[
    str | None,
    typer.Option(
        "--recency",
        metavar="day|week|month|year",
        help="Only sources published within the last day, week, month or year.",
    ),
]
SiteOption = Annotated[
    list[str] | None,
    typer.Option(
        "--site",
        metavar="DOMAIN",
        help="Only sources on this site (repeatable).",
        show_default=False,
    ),
]
ExcludeSiteOption = Annotated[
    list[str] | None,
    typer.Option(
        "--exclude-site",
        metavar="DOMAIN",
        help="No sources from this site (repeatable).",
        show_default=False,
    ),
]
CountryOption = Annotated[
    str | None,
    typer.Option("--country", metavar="CODE", help="Results from this country (DE)."),
]
LanguageOption = Annotated[
    str | None,
    typer.Option("--language", metavar="CODE", help="Results in this language (de)."),
]
ContextSizeOption = Annotated[
    str | None,
    typer.Option(
        "--context-size",
        metavar="SIZE",
        help="low: snippets only; medium / high: also the top pages' best passages "
        "[WEBREACH_SEARCH_CONTEXT_SIZE, medium].",
    ),
]
NumSearchResultsOption = Annotated[
    str | None,
    typer.Option(
        "--num-search-results",
        metavar="N",
        help="Results the provider looks at, when more than it returns (1-50).",
    ),
]
MaxTokensOption = Annotated[
    str | None,
    typer.Option(
        "--max-tokens",
        metavar="N",
        help="Longest answer a model-backed provider writes (perplexity, deepseek …).",
    ),
]
TemperatureOption = Annotated[
    str | None,
    typer.Option(
        "--temperature",
        metavar="T",
        help="A model-backed provider's temperature, 0 to 2.",
    ),
]

# --- fetch ----------------------------------------------------------------------------------

UrlArgument = Annotated[
    str, typer.Argument(metavar="URL", help="The http(s) URL to read.", show_default=False)
]
RawOption = Annotated[
    bool, typer.Option("--raw", help="Print the decoded body instead of the rendering.")
]
StartOption = Annotated[
    int,
    typer.Option("--start", metavar="N", min=0, help="Character offset to continue from [0]."),
]
FailOption = Annotated[
    bool,
    typer.Option("--fail", help="Exit 22, printing no page, on an HTTP status of 400 or more."),
]
BrowserOption = Annotated[
    bool,
    typer.Option(
        "--browser",
        help="Draw the page in the headless browser, whatever it looks like over HTTP.",
    ),
]
MaxAgeOption = Annotated[
    int | None,
    typer.Option(
        "--max-age",
        metavar="SECONDS",
        min=0,
        help="Fetch again when the cached copy is older than this; 0 always fetches.",
    ),
]
