"""Fill the reference pages from the code at build time, so they cannot drift from it, and show
the docstrings' Sphinx roles (``:class:`X```) in the API pages as plain code.

``docs/reference/settings.md`` and ``docs/reference/errors.md`` hold a marker comment where a
table goes; this MkDocs hook replaces each marker with the table read from the settings classes
and the error codes. A setting or error code declared without a docstring is a build warning,
which ``mkdocs build --strict`` turns into a failure.
"""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
import typing
from collections.abc import Callable, Iterator
from functools import cache
from typing import Any

from mkdocs.plugins import get_plugin_logger

log = get_plugin_logger("reference")


@cache
def attribute_docs(cls: type) -> dict[str, str]:
    """The docstring under each attribute of ``cls`` itself (not its bases)."""
    try:
        source = textwrap.dedent(inspect.getsource(cls))
    except (OSError, TypeError):
        return {}
    body = ast.parse(source).body[0]
    assert isinstance(body, ast.ClassDef)
    docs: dict[str, str] = {}
    for node, after in zip(body.body, [*body.body[1:], None], strict=True):
        target: ast.expr
        if isinstance(node, ast.AnnAssign):
            target = node.target
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
        else:
            continue
        value = getattr(after, "value", None)
        if not (isinstance(target, ast.Name) and isinstance(after, ast.Expr)):
            continue
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            docs[target.id] = inspect.cleandoc(value.value)
    return docs


def field_doc(owner: type, field: str) -> str:
    for cls in owner.__mro__:
        found = attribute_docs(cls).get(field)
        if found:
            return found
    return ""


def cell(text: str) -> str:
    """A docstring as one Markdown table cell: reST literals as code, one line, pipes escaped."""
    text = " ".join(text.split()).replace("``", "`").replace("|", "\\|")
    for role in (":class:", ":func:", ":mod:", ":meth:", ":attr:"):
        text = text.replace(role, "")
    return text


def shown_default(info: Any) -> str:
    if info.default_factory is not None:
        return "none" if info.default_factory() in ({}, [], ()) else "computed (see its meaning)"
    value = info.default
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return f"`{value}`"


def choices(annotation: Any) -> str:
    """The values a ``Literal`` setting takes, if it is one."""
    found: list[str] = []
    for arg in typing.get_args(annotation) or (annotation,):
        if typing.get_origin(arg) is typing.Literal:
            found += [f"`{value}`" for value in typing.get_args(arg)]
    if typing.get_origin(annotation) is typing.Literal:
        found = [f"`{value}`" for value in typing.get_args(annotation)]
    return " / ".join(found)


GENERIC = {
    "_api_key": "the provider's API key",
    "_base_url": "the provider's endpoint (unset: its official one)",
    "_model": "the model that runs the search",
    "_requests_per_second": "the most searches a second this provider is sent (unset: unpaced)",
}


def settings_tables() -> str:
    from webreach.config import discover_providers, provider_kinds
    from webreach.config_sources import Setting
    from webreach.settings import ServerSettings, Settings, WebSettings

    out: list[str] = []
    groups = (
        ("Search, fetch and the cache", WebSettings),
        ("The servers", ServerSettings),
    )
    shared = Setting.all_of(Settings)
    for title, part in groups:
        out += [f"### {title}", "", "| variable | default | meaning |", "|---|---|---|"]
        for setting in shared:
            if setting.field not in part.model_fields:
                continue
            info = Settings.model_fields[setting.field]
            meaning = field_doc(Settings, setting.field)
            if not meaning:
                log.warning("setting %s has no docstring", setting.variable)
            values = choices(info.annotation)
            if values and not all(value in meaning for value in values.split(" / ")):
                meaning = f"{meaning} ({values})" if meaning else values
            variable = f"`{setting.variable}`"
            if setting.secret:
                variable += f" (or `{setting.file_variable}`)"
            out.append(f"| {variable} | {shown_default(info)} | {cell(meaning)} |")
        out.append("")
    for kind in provider_kinds():
        label = kind.replace("_", " ")
        out += [f"### The {label} providers' own", ""]
        out += ["| provider | variable | default | meaning |", "|---|---|---|---|"]
        for spec in discover_providers(kind):
            for setting in Setting.all_of(spec.settings, spec.id):
                info = spec.settings.model_fields[setting.field]
                meaning = field_doc(spec.settings, setting.field)
                if not meaning:
                    meaning = next(
                        (text for end, text in GENERIC.items() if setting.field.endswith(end)), ""
                    )
                variable = f"`{setting.variable}`"
                if setting.secret:
                    variable += f" (or `{setting.file_variable}`)"
                out.append(
                    f"| `{spec.id}` | {variable} | {shown_default(info)} | {cell(meaning)} |"
                )
        out.append("")
    return "\n".join(out)


def error_tables() -> str:
    from webreach.seam import WebError, WebErrorCode
    from webreach.server.error_shapes import WEB_CODES
    from webreach.server.web_api.errors import status_of

    docs = attribute_docs(WebErrorCode)
    out = ["| code | HTTP status at `/v1/search` and `/v1/fetch` | meaning |", "|---|---|---|"]
    for code in WebErrorCode:
        meaning = docs.get(code.name, "")
        if not meaning:
            log.warning("error code %s has no docstring", code.name)
        status = status_of(WebError(code, ""))
        out.append(f"| `{code.value}` | {status} | {cell(meaning)} |")
    out += ["", "Refusals the server makes before an endpoint runs, in the same error shape:", ""]
    out += ["| HTTP status | `error.code` |", "|---|---|"]
    out += [f"| {status} | `{code}` |" for status, code in sorted(WEB_CODES.items())]
    return "\n".join(out)


MARKERS: dict[str, Callable[[], str]] = {
    "<!-- generated: settings -->": settings_tables,
    "<!-- generated: errors -->": error_tables,
}


def filled(markdown: str) -> Iterator[str]:
    for line in markdown.splitlines():
        maker = MARKERS.get(line.strip())
        yield maker() if maker else line


def on_page_markdown(markdown: str, **_: Any) -> str:
    if not any(marker in markdown for marker in MARKERS):
        return markdown
    return "\n".join(filled(markdown)) + "\n"


_ROLE = re.compile(r":(?:class|func|mod|meth|attr|data|exc|obj):<code>(~?)([^<]*)</code>")


def _unrole(match: re.Match[str]) -> str:
    name = match.group(2)
    return f"<code>{name.rsplit('.', 1)[-1] if match.group(1) else name}</code>"


def on_page_content(html: str, **_: Any) -> str:
    """mkdocstrings leaves a docstring's ``:class:`~a.B``` as the role's name before its code."""
    return _ROLE.sub(_unrole, html)
