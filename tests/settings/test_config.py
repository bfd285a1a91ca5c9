"""Settings come from the environment and webreach.toml; a bad value names its variable."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from webreach.cli.report import capabilities
from webreach.config import ConfigError, build_runtime, check_settings, load_settings
from webreach.providers import discover_providers
from webreach.seam import SearchRequest, WebError, WebErrorCode


def test_defaults() -> None:
    settings = load_settings()
    assert settings.search_provider is None
    assert settings.search_max_queries == 4
    assert settings.search_max_results == 8
    assert settings.fetch_max_chars == 40_000
    assert settings.fetch_timeout == 30
    assert settings.fetch_max_bytes == 10 * 1024 * 1024
    assert settings.cache_ttl == 600


def test_environment_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEBREACH_SEARCH_PROVIDER", "exa,duckduckgo")
    monkeypatch.setenv("WEBREACH_SEARCH_MAX_QUERIES", "6")
    monkeypatch.setenv("WEBREACH_UPSTREAM_API_KEY", "secret-value")
    settings = load_settings()
    assert settings.search_provider == "exa,duckduckgo"
    assert settings.search_max_queries == 6
    assert settings.upstream_api_key is not None
    assert settings.upstream_api_key.get_secret_value() == "secret-value"
    assert "secret-value" not in repr(settings)


def test_the_shared_settings_hold_no_provider_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each provider declares and reads its own (tests/providers/test_provider_settings.py)."""
    monkeypatch.setenv("EXA_API_KEY", "secret-value")
    settings = load_settings()
    assert not any(
        name.startswith(("exa_", "perplexity_", "deepseek_", "searxng_", "duckduckgo_"))
        for name in type(settings).model_fields
    )
    assert "secret-value" not in repr(settings.model_dump())


def test_config_file_with_environment_winning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "custom.toml"
    config.write_text('search_provider = "exa"\nsearch_max_results = 3\nexa_api_key = "k"\n')
    monkeypatch.setenv("WEBREACH_CONFIG", str(config))
    monkeypatch.setenv("WEBREACH_SEARCH_MAX_RESULTS", "5")
    settings = load_settings()
    assert settings.search_provider == "exa"
    assert settings.search_max_results == 5


def test_webreach_toml_in_the_working_directory_is_read() -> None:
    Path("webreach.toml").write_text("search_max_queries = 2\n")
    assert load_settings().search_max_queries == 2


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("WEBREACH_SEARCH_MAX_QUERIES", "0"),
        ("WEBREACH_SEARCH_MAX_RESULTS", "many"),
        ("WEBREACH_FETCH_TIMEOUT", "-1"),
        ("WEBREACH_SEARCH_ENABLED", "perhaps"),
    ],
)
def test_an_invalid_value_names_its_variable(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(ConfigError, match=variable):
        load_settings()


def test_a_missing_config_file_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEBREACH_CONFIG", "/nonexistent/webreach.toml")
    with pytest.raises(ConfigError, match="WEBREACH_CONFIG"):
        load_settings()


async def test_setting_a_key_makes_selection_ambiguous_with_a_clear_way_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("EXA_API_KEY", "k")
    async with build_runtime() as runtime:
        with pytest.raises(WebError) as caught:
            await runtime.search(SearchRequest("q"))
    assert caught.value.code == WebErrorCode.WEB_PROVIDER_AMBIGUOUS
    assert "duckduckgo, exa" in caught.value.message
    assert "WEBREACH_SEARCH_PROVIDER" in caught.value.message


def write_plugin(site: Path) -> None:
    """An installed distribution whose entry point contributes a search provider."""
    (site / "demo_plugin.py").write_text(
        "from webreach.seam import SearchResult, SearchSource\n"
        "class Demo:\n"
        "    id = 'demo'\n"
        "    def available(self): return True\n"
        "    async def search(self, request):\n"
        "        return SearchResult(sources=(SearchSource(url='https://demo.example/'),))\n"
        "def make(settings):\n"
        "    return Demo()\n"
        "def unconfigured(settings):\n"
        "    return None\n"
    )
    dist = site / "demo_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: demo-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[webreach.search_providers]\ndemo = demo_plugin:make\nnone = demo_plugin:unconfigured\n"
    )


async def test_plugins_register_through_entry_points(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_plugin(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("WEBREACH_SEARCH_PROVIDER", "demo")
    async with build_runtime() as runtime:
        result = await runtime.search(SearchRequest("q"))
    assert result.provider == "demo"
    assert result.sources[0].url == "https://demo.example/"


@pytest.mark.parametrize("provider", [spec.id for spec in discover_providers("search")])
async def test_each_built_in_provider_becomes_available_with_its_setting(
    monkeypatch: pytest.MonkeyPatch, provider: str
) -> None:
    """The first variable ``webreach config`` says a provider needs is enough for the runtime
    to find it beside duckduckgo, the one that needs none."""
    (search,) = await capabilities(load_settings(), ["search"])
    state = search.state(provider)
    assert state is not None
    if provider == "duckduckgo":
        assert (state.available, state.needs) == (True, ())
        return
    assert state.needs, provider
    variable = state.needs[0]
    monkeypatch.setenv(variable, "http://127.0.0.1:9" if variable.endswith("URL") else "key")
    async with build_runtime() as runtime:
        with pytest.raises(WebError) as caught:
            await runtime.search(SearchRequest("q"))
    assert caught.value.code == WebErrorCode.WEB_PROVIDER_AMBIGUOUS
    listed = caught.value.message.split("(", 1)[1].split(")", 1)[0]
    assert sorted(listed.split(", ")) == sorted(["duckduckgo", provider])


def test_check_settings_names_every_problem_with_its_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "settings.toml"
    config.write_text('fetch_alow = "x"\nsearch_max_queries = 0\nexa_base_url = "exa.example"\n')
    monkeypatch.setenv("WEBREACH_CONFIG", str(config))
    monkeypatch.setenv("WEBREACH_FETCH_TIMEOUT", "soon")
    with pytest.raises(ConfigError) as caught:
        check_settings()
    assert caught.value.problems == (
        f"fetch_alow in {config} (line 1): unknown key 'fetch_alow'; did you mean 'fetch_allow'?",
        f"search_max_queries = 0 in {config} (line 2): Input should be greater than 0 "
        "(e.g. search_max_queries = 4)",
        "WEBREACH_FETCH_TIMEOUT=soon: Input should be a valid number, unable to parse string as "
        "a number (e.g. WEBREACH_FETCH_TIMEOUT=30)",
        f"exa_base_url in {config} (line 3): must be an http(s) URL with a host, "
        "e.g. https://api.example.com",
    )


def test_a_settings_file_that_is_not_toml_names_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "settings.toml"
    config.write_text("search_max_queries = 2\n[broken\n")
    monkeypatch.setenv("WEBREACH_CONFIG", str(config))
    with pytest.raises(ConfigError, match=rf"^{config}, line 2, column \d+: not valid TOML"):
        load_settings()


def test_where_each_setting_came_from(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from webreach.config import all_settings
    from webreach.config_sources import read_settings_file

    Path("webreach.toml").write_text('search_max_queries = 2\nfetch_allow = "10.0.0.0/8"\n')
    monkeypatch.setenv("WEBREACH_SEARCH_MAX_QUERIES", "3")
    monkeypatch.setenv("EXA_API_KEY", "")  # empty: unset, as for every provider setting
    file = read_settings_file()
    sources = {s.variable: s.source(file, os.environ) for s in all_settings()}
    assert sources["WEBREACH_SEARCH_MAX_QUERIES"] == "environment"
    assert sources["WEBREACH_FETCH_ALLOW"] == "file"
    assert sources["WEBREACH_CACHE_TTL"] == "default"
    assert sources["EXA_API_KEY"] == "default"
    secret = {s.variable: s.secret for s in all_settings()}
    assert secret["EXA_API_KEY"] and secret["WEBREACH_UPSTREAM_API_KEY"]
    assert not secret["WEBREACH_FETCH_ALLOW"]


@pytest.mark.parametrize(
    ("variable", "value", "problem"),
    [
        ("WEBREACH_UPSTREAM_BASE_URL", "localhost:8000/v1", "must be an http(s) URL with a host"),
        ("WEBREACH_MODERATION_BASE_URL", "ftp://moderation.example", "must be an http(s) URL"),
        (
            "WEBREACH_MODERATION_BASE_URL",
            "https://user:hunter2@moderation.example/v1",
            "put the key in WEBREACH_MODERATION_API_KEY",
        ),
        ("WEBREACH_UPSTREAM_CONTINUE", "sometimes", "WEBREACH_UPSTREAM_CONTINUE"),
    ],
)
def test_the_servers_urls_and_continuation_mode_are_checked(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str, problem: str
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(ConfigError) as refused:
        load_settings()
    assert variable in str(refused.value)
    assert problem in str(refused.value)
    assert "hunter2" not in str(refused.value)


def test_log_settings_take_any_case(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEBREACH_LOG_LEVEL", "WARNING")
    monkeypatch.setenv("WEBREACH_LOG_FORMAT", " Json ")
    settings = load_settings()
    assert (settings.log_level, settings.log_format) == ("warning", "json")
