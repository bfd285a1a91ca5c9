"""Z.AI: the remote MCP server at ``{base}/api/mcp/web_search_prime/mcp``.

An MCP session with the official ``mcp`` SDK (see :mod:`._mcp_sdk`; the ``mcp`` extra, imported
only when a search runs: without it the provider is not available and says which command adds
it), Bearer ``ZAI_API_KEY``, one per search: the session's tools are listed
once and the search tool that is there is called (Z.AI names it ``webSearchPrime``; an older
server ``web_search_prime``). It is asked with ``{search_query, count}`` as Z.AI documents, then
``{search_query, search_engine: "search-prime", count}``, then ``{query, count}``, moving on only
when the server says the arguments were wrong; the shape that worked is tried first afterwards.
When the tool's input schema lists its properties, only those are sent.

The tool's text is a JSON list of results (``title``, ``link``, ``content``, ``media``,
``publish_date``, ``icon``), sometimes JSON-encoded twice; text that is not JSON is an answer.

Filters: ``recency`` as ``search_recency_filter``. One included domain is sent as
``search_domain_filter``, as a hint only: the seam still checks every source's host.
Errors keep Z.AI's own message (never the key).
"""

from __future__ import annotations

import importlib.util
import json
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import httpx

from ...install_hint import install_command
from ...seam import Recency, SearchRequest, SearchResult, WebError, WebErrorCode
from .._json_api import redact
from ..spec import BaseUrl, ProviderSettings, RequestsPerSecond, Secret
from ._keyed import KeyedProvider, keyed_spec
from ._sources import item_source, url_of

if TYPE_CHECKING:
    from ._mcp_sdk import McpSession, RpcError

__all__ = ["PROVIDER", "ZaiSearchProvider", "ZaiSettings"]

TOOL = "webSearchPrime"
"""The tool's name in Z.AI's documentation; what a server lists wins."""
_TOOL_NAMES = ("webSearchPrime", "web_search_prime")
_DEFAULT_COUNT = 10
_MAX_COUNT = 50
_RAW_LIMIT = 500
_INVALID_PARAMS = -32602
_RECENCY: dict[Recency, str] = {
    "day": "oneDay",
    "week": "oneWeek",
    "month": "oneMonth",
    "year": "oneYear",
}
_SHAPES: tuple[Callable[[str, int], dict[str, Any]], ...] = (
    lambda query, count: {"search_query": query, "count": count},
    lambda query, count: {"search_query": query, "search_engine": "search-prime", "count": count},
    lambda query, count: {"query": query, "count": count},
)
"""The argument shapes tried, Z.AI's documented one first."""
_ARGUMENT = re.compile(r"\b(?:arguments?|param(?:eter)?s?|fields?|search_query|query)\b", re.I)
_WRONG = re.compile(r"\b(?:missing|required|invalid|unknown|unexpected|unrecognized)\b", re.I)


class ZaiSearchProvider(KeyedProvider):
    id = "zai"
    default_base_url = "https://api.z.ai"
    filters = frozenset({"recency"})

    def __init__(
        self, *, api_key: str | None, client: httpx.AsyncClient, base_url: str | None = None
    ) -> None:
        super().__init__(api_key=api_key, client=client, base_url=base_url)
        self._shape = 0

    def available(self) -> bool:
        return super().available() and _sdk_installed()

    def unavailable_reason(self) -> str | None:
        """The SDK missing, once there is a key to use (without one, the key is what to set)."""
        if self._api_key is None or _sdk_installed():
            return None
        return f"the mcp package is not installed: {install_command('mcp')}"

    async def search(self, request: SearchRequest) -> SearchResult:
        if not _sdk_installed():
            raise WebError(
                WebErrorCode.WEB_PROVIDER_ERROR,
                f"{self.id}: {self.unavailable_reason()}",
                provider=self.id,
            )
        from ._mcp_sdk import McpSession, RpcError

        count = min(request.breadth() or _DEFAULT_COUNT, _MAX_COUNT)
        extra = _filters(request)
        try:
            async with McpSession(
                self._client,
                self.id,
                f"{self._base_url}/api/mcp/web_search_prime/mcp",
                api_key=self._api_key or "",
            ) as session:
                return await self._searched(session, request.query, count, extra)
        except RpcError as error:
            raise self._refused(error) from None

    async def _searched(
        self, session: McpSession, query: str, count: int, extra: dict[str, Any]
    ) -> SearchResult:
        """The search in one session: the tool found, then each argument shape in turn."""
        from ._mcp_sdk import RpcError

        tool, accepted = self._tool(await session.list_tools())
        tries = _tries(query, count, extra, accepted, self._shape)
        for place, (index, arguments) in enumerate(tries):
            last = place == len(tries) - 1
            try:
                result = await session.call_tool(tool, arguments)
            except RpcError as error:
                if not last and (error.code == _INVALID_PARAMS or _about_arguments(error.message)):
                    continue
                raise self._refused(error) from None
            if result.get("isError") is True:
                text = _texts(result)
                if not last and _about_arguments(text):
                    continue
                said = redact(text, [self._api_key])[:_RAW_LIMIT] or "the search failed"
                raise WebError(
                    WebErrorCode.WEB_PROVIDER_ERROR, f"{self.id}: {said}", provider=self.id
                )
            self._shape = index
            return _mapped(result, count)
        raise AssertionError("unreachable: the last shape returns or raises")

    def _tool(self, tools: list[dict[str, Any]]) -> tuple[str, frozenset[str] | None]:
        """The search tool among the session's ``tools``, and the properties its input schema
        lists (None when it lists none); a provider error when there is none."""
        by_name = {tool["name"]: tool for tool in tools}
        chosen = next((by_name[name] for name in _TOOL_NAMES if name in by_name), None)
        if chosen is None:
            alike = [t for t in tools if _squashed(t["name"]) == _squashed(TOOL)]
            chosen = alike[0] if alike else (tools[0] if len(tools) == 1 else None)
        if chosen is None:
            listed = ", ".join(sorted(by_name)[:10]) or "none"
            raise WebError(
                WebErrorCode.WEB_PROVIDER_ERROR,
                f"{self.id}: the MCP server offers no web search tool (tools: {listed})",
                provider=self.id,
            )
        schema = chosen.get("inputSchema")
        properties = schema.get("properties") if isinstance(schema, dict) else None
        accepted = frozenset(properties) if isinstance(properties, dict) and properties else None
        return str(chosen["name"]), accepted

    def _refused(self, error: RpcError) -> WebError:
        code = f" (MCP error {error.code})" if error.code is not None else ""
        return WebError(
            WebErrorCode.WEB_PROVIDER_ERROR, f"{self.id}: {error.message}{code}", provider=self.id
        )


def _sdk_installed() -> bool:
    """Whether the ``mcp`` SDK (the ``mcp`` extra) can be imported, without importing it."""
    try:
        return importlib.util.find_spec("mcp") is not None
    except (ImportError, ValueError):
        return False


def _tries(
    query: str, count: int, extra: dict[str, Any], accepted: frozenset[str] | None, first: int
) -> list[tuple[int, dict[str, Any]]]:
    """The argument shapes to try, from ``first``: with a schema, only the shapes whose query
    field it lists, cut to its properties, each once (all of them when it lists neither)."""
    shapes = [(i, _SHAPES[i](query, count) | extra) for i in range(first, len(_SHAPES))]
    if accepted is None:
        return shapes
    fitting: list[tuple[int, dict[str, Any]]] = []
    for index, arguments in shapes:
        if not {"search_query", "query"} & accepted & set(arguments):
            continue
        cut = {k: v for k, v in arguments.items() if k in accepted}
        if all(cut != seen for _, seen in fitting):
            fitting.append((index, cut))
    return fitting or shapes


def _squashed(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _filters(request: SearchRequest) -> dict[str, Any]:
    extra: dict[str, Any] = {}
    if request.recency is not None:
        extra["search_recency_filter"] = _RECENCY[request.recency]
    if len(request.include_domains) == 1:
        extra["search_domain_filter"] = request.include_domains[0]
    return extra


def _about_arguments(text: str) -> bool:
    """Whether an error says the arguments were wrong (one missing, invalid or unknown), the
    only failure another argument shape may cure."""
    return bool(_ARGUMENT.search(text) and _WRONG.search(text))


def _texts(result: dict[str, Any]) -> str:
    return "\n".join(_text_parts(result)).strip()


def _text_parts(result: dict[str, Any]) -> list[str]:
    content = result.get("content")
    if not isinstance(content, list):
        return []
    return [
        part["text"]
        for part in content
        if isinstance(part, dict)
        and part.get("type") == "text"
        and isinstance(part.get("text"), str)
    ]


_NOT_JSON = object()


def _decoded(text: str) -> Any:
    """The text's JSON value, a JSON string's own JSON unwrapped too; ``_NOT_JSON`` otherwise."""
    try:
        value = json.loads(text)
    except ValueError:
        return _NOT_JSON
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _items(value: Any) -> list[Any] | None:
    """The results in a decoded payload: a list, or one under ``search_result``/``results``."""
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        for key in ("search_result", "results"):
            if isinstance(value.get(key), list):
                return list(value[key])
    return None


def _mapped(result: dict[str, Any], count: int) -> SearchResult:
    items: list[Any] = []
    answer: list[str] = []
    for text in _text_parts(result):
        value = _decoded(text)
        if value is _NOT_JSON:
            words = text.strip()
        elif isinstance(value, str):
            words = value.strip()
        else:
            items.extend(_items(value) or [])
            continue
        if words:
            answer.append(words)
    if not items and (found := _items(result.get("structuredContent"))) is not None:
        items = found
    sources = tuple(_source(url, item) for item in items if (url := _link(item)))
    return SearchResult(sources=sources[:count], content="\n\n".join(answer) or None)


def _link(item: Any) -> str | None:
    if isinstance(item, dict) and isinstance(item.get("link"), str) and item["link"].strip():
        return str(item["link"]).strip()
    return url_of(item)


_source = item_source(snippet="content", published="publish_date")


class ZaiSettings(ProviderSettings):
    """``ZAI_API_KEY``, and ``ZAI_BASE_URL`` to use another endpoint than the official one
    (``https://open.bigmodel.cn`` for the mainland China service)."""

    zai_api_key: Secret = None
    zai_base_url: BaseUrl = None
    zai_requests_per_second: RequestsPerSecond = None


PROVIDER = keyed_spec(ZaiSearchProvider, ZaiSettings)
