"""A fifth server tool, written as docs/development/adding-a-server-tool.md says a new one
is: ``site_search(site, query)``, a web search kept to one site. It is this module and nothing
else; a server offers it once its factory is among ``create_app(tools=...)``
(tests/server/test_server_tool_plugin.py puts it there).

Its calls find sources, so every protocol renders them as it renders a search's; it draws on the
search budget and bills ``tool_search``, as ``web_search`` does.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from webreach.server.core.turn.events import Billing, SearchAction
from webreach.server.core.turn.shape import DomainFilter, ForcedWeb, SearchSpec
from webreach.server.core.upstream.step import PendingCall
from webreach.server.core.web_tools.base import (
    SEARCH_BILLING,
    SEARCH_BUDGET,
    Plan,
    Slot,
    ToolSetup,
    invalid_input,
    over_budget,
)
from webreach.server.core.web_tools.search import run_search_call
from webreach.server.core.web_tools.tool import (
    ModelTool,
    function_tool,
    json_object,
    required_string,
)
from webreach.tools import ToolError

__all__ = ["SiteSearch"]

_PARAMETERS = {
    "type": "object",
    "properties": {
        "site": {"type": "string", "description": "The site's host, e.g. docs.python.org."},
        "query": {"type": "string", "description": "What to look for there."},
    },
    "required": ["site", "query"],
    "additionalProperties": False,
}


@dataclass(frozen=True, slots=True)
class SiteSearch:
    """``site_search``: offered beside any declared web search; only that site's pages come
    back, and only a site the declared domain filters admit may be searched."""

    models: tuple[ModelTool, ...]
    declared: SearchSpec
    setup: ToolSetup
    kind: str = "site_search"
    id_prefix: str = "ss"
    budget: str = SEARCH_BUDGET
    billing: Billing = SEARCH_BILLING
    forced_as: ForcedWeb = None

    @classmethod
    def offer(cls, setup: ToolSetup) -> SiteSearch | None:
        spec = setup.turn.web.search
        if spec is None:
            return None
        description = "Search one web site. Results are numbered sources; cite them as 【n】."
        name = setup.name("site_search", "webreach_site_search")
        return cls((function_tool(name, description, _PARAMETERS),), spec, setup)

    def plan(self, call: PendingCall, slot: Slot) -> Plan:
        spec = self.declared
        try:
            arguments = json_object(call.arguments)
            site = required_string(arguments, "site").lower()
            query = required_string(arguments, "query")
            if not spec.domains.admits(site):
                raise ToolError("INVALID_ARGUMENTS", f"searching {site} is not allowed")
        except ToolError as error:
            return SearchAction((), name="site_search"), invalid_input(error)
        action = SearchAction((f"site:{site} {query}",), name="site_search")
        if not slot.within_budget:
            return action, over_budget("search")
        on_site = replace(spec, domains=DomainFilter((site,), spec.domains.blocked))
        context = self.setup.context
        work = run_search_call(
            action.queries, on_site, context.runtime, context.options, self.setup.sources
        )
        return action, work
