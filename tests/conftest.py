from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from cli_helpers import OWN_PREFIXES
from replay_server import ReplayServer
from webreach.net import create_client

pytest_plugins = ["server_harness", "redis_harness"]

SLOW_MODULES = frozenset(
    {
        "test_agents_claude_code",
        "test_agents_codex",
        "test_cache_recovery",
        "test_cli_cache_setting",
        "test_cli_config",
        "test_cli_completion",
        "test_cli_config_cache",
        "test_cli_fetch",
        "test_cli_mcp",
        "test_cli_search",
        "test_cli_search_chain",
        "test_cli_search_filters",
        "test_cli_serve",
        "test_cli_settings",
        "test_cli_unknown_variables",
        "test_cli_usage_errors",
        "test_clients_ai_sdk",
        "test_clients_node_sdks",
        "test_clients_mcp",
        "test_clients_openai_agents",
        "test_clients_pydantic_ai",
        "test_deploy",
        "test_deploy_replicas",
        "test_fetch_browser",
        "test_fetch_browser_faces",
        "test_fetch_browser_guard",
        "test_fetch_limits",
        "test_mcp",
        "test_mcp_conformance",
        "test_mcp_loopback",
        "test_mcp_resume",
        "test_mcp_spec",
        "test_mcp_stopping",
        "test_openresponses_suite",
        "test_openwebui",
        "test_operator_errors",
        "test_packaging",
        "test_readme_first_steps",
        "test_render_hostile",
        "test_render_pool",
        "test_render_hostile_server",
        "test_render_quality",
        "test_seam_hostile",
        "test_search_filters_faces",
        "test_search_hops",
        "test_search_inputs",
        "test_search_passages",
        "test_secret_files",
        "test_server_browser",
        "test_server_chat",
        "test_server_chat_asks",
        "test_server_chat_schema",
        "test_server_coding_agents",
        "test_server_connections",
        "test_serve_stopping",
        "test_server_continue",
        "test_server_cross_site",
        "test_server_debug_logs",
        "test_server_deep_search",
        "test_server_disconnects",
        "test_server_ollama",
        "test_server_files",
        "test_server_image_search",
        "test_server_input_review",
        "test_server_key_in_output",
        "test_server_logs",
        "test_server_messages_settings",
        "test_server_messages_start_usage",
        "test_server_metrics",
        "test_server_not_routed",
        "test_server_openapi_exact",
        "test_server_openapi_fuzz",
        "test_server_openrouter_tools",
        "test_server_playground",
        "test_server_properties",
        "test_server_quota",
        "test_server_read_citations",
        "test_server_read_link",
        "test_server_readyz",
        "test_server_relay_usage",
        "test_server_responses_compact",
        "test_server_responses_conformance",
        "test_server_responses_echo",
        "test_server_responses_live",
        "test_server_responses_websocket",
        "test_server_safety",
        "test_server_search_filters",
        "test_server_store",
        "test_server_store_hostile",
        "test_server_structured_output",
        "test_server_tenants",
        "test_server_thinking",
        "test_server_title",
        "test_server_today",
        "test_server_tool_plugin",
        "test_server_turn_limits",
        "test_server_turn_searches",
        "test_server_upstream_faults",
        "test_server_upstream_hostile",
        "test_server_web_api",
        "test_web_api_patterns",
    }
)
"""Test modules whose tests take more than 0.15 s each on average (measured on 2 cores): they run
processes, Node clients, servers over real sockets or wait out deadlines. ``pytest -m "not slow"``
leaves them out, for a first check in about a minute; the whole suite runs them all."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    slow = pytest.mark.slow
    for item in items:
        if item.module is not None and item.module.__name__ in SLOW_MODULES:
            item.add_marker(slow)


# The environment as the session began, before the per-test cleaning below: live smoke tests
# read real keys from it.
LIVE_ENVIRONMENT = dict(os.environ)

# Settings come from the environment: tests start from a clean one, whatever the machine has.


@pytest.fixture(autouse=True)
def clean_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    for name in list(os.environ):
        if name.startswith(OWN_PREFIXES):
            monkeypatch.delenv(name)
    monkeypatch.setenv("WEBREACH_CONFIG", "")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("user-cache")))
    monkeypatch.chdir(tmp_path_factory.mktemp("cwd"))


@pytest.fixture
def replay() -> Iterator[ReplayServer]:
    with ReplayServer() as server:
        yield server


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    """The provider tests' HTTP client, closed after the test; a module may define its own."""
    async with create_client(timeout=5) as client:
        yield client
