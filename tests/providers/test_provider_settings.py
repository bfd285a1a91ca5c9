"""Each provider declares its own settings, reads them like the shared ones, and gets only those."""

from __future__ import annotations

import importlib
import json
import pkgutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, SecretStr

import webreach.providers.search as search_package
from cli_helpers import clean_env, run_cli
from repo_paths import ROOT
from webreach.config import ConfigError, build_runtime, discover_providers, load_settings
from webreach.config_sources import Setting
from webreach.net import create_client
from webreach.providers import PACKAGES, specs_reading
from webreach.providers.search.deepseek import DeepSeekSettings
from webreach.providers.search.duckduckgo import DuckDuckGoSettings
from webreach.providers.search.exa import ExaSettings
from webreach.providers.search.perplexity import PerplexitySettings
from webreach.providers.search.searxng import SearxngSettings
from webreach.providers.spec import ProviderContext, ProviderSettings
from webreach.seam import SearchRequest, WebError, WebErrorCode

PROVIDERS_PAGE = ROOT / "docs" / "library" / "providers.md"


def test_defaults_are_the_providers_own() -> None:
    assert ExaSettings().exa_api_key is None
    assert ExaSettings().exa_base_url is None  # the provider's official endpoint applies
    assert PerplexitySettings().perplexity_model == "sonar"
    assert DeepSeekSettings().deepseek_search_model == "deepseek-flash"
    assert DuckDuckGoSettings().duckduckgo_backend == "auto"
    assert SearxngSettings().searxng_base_url is None


def test_a_provider_reads_its_own_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EXA_API_KEY", "exa-canary-1f3a")
    monkeypatch.setenv("EXA_BASE_URL", "http://127.0.0.1:1234")
    monkeypatch.setenv("PERPLEXITY_MODEL", "sonar-pro")
    monkeypatch.setenv("DEEPSEEK_SEARCH_MODEL", "deepseek-pro")
    monkeypatch.setenv("SEARXNG_BASE_URL", "https://searx.example")
    monkeypatch.setenv("SEARXNG_API_KEY", "searx-canary-77b0")
    monkeypatch.setenv("DUCKDUCKGO_BACKEND", "bing,brave")
    exa = ExaSettings()
    assert exa.exa_api_key is not None
    assert exa.exa_api_key.get_secret_value() == "exa-canary-1f3a"
    assert exa.exa_base_url == "http://127.0.0.1:1234"
    assert PerplexitySettings().perplexity_model == "sonar-pro"
    assert DeepSeekSettings().deepseek_search_model == "deepseek-pro"
    searxng = SearxngSettings()
    assert searxng.searxng_base_url == "https://searx.example"
    assert searxng.searxng_api_key is not None
    assert DuckDuckGoSettings().duckduckgo_backend == "bing,brave"
    assert "exa-canary-1f3a" not in repr(exa) + str(exa.model_dump())
    assert "searx-canary-77b0" not in repr(searxng) + str(searxng.model_dump())
    # No provider's settings hold another's.
    assert set(type(exa).model_fields) == {
        "exa_api_key",
        "exa_base_url",
        "exa_requests_per_second",
    }


def test_an_empty_variable_means_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EXA_BASE_URL", "")
    monkeypatch.setenv("PERPLEXITY_MODEL", "")
    assert ExaSettings().exa_base_url is None
    assert PerplexitySettings().perplexity_model == "sonar"


def test_provider_settings_come_from_webreach_toml_with_the_environment_winning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "custom.toml"
    config.write_text(
        'search_max_results = 3\nexa_api_key = "from-file"\nperplexity_model = "sonar-file"\n'
        'deepseek_search_model = "deepseek-file"\nsearxng_base_url = "http://127.0.0.1:9"\n'
    )
    monkeypatch.setenv("WEBREACH_CONFIG", str(config))
    monkeypatch.setenv("PERPLEXITY_MODEL", "sonar-env")
    assert load_settings().search_max_results == 3
    exa = ExaSettings()
    assert exa.exa_api_key is not None
    assert exa.exa_api_key.get_secret_value() == "from-file"
    assert PerplexitySettings().perplexity_model == "sonar-env"
    assert DeepSeekSettings().deepseek_search_model == "deepseek-file"
    assert SearxngSettings().searxng_base_url == "http://127.0.0.1:9"


@pytest.fixture
def searxng_in_webreach_toml() -> None:
    Path("webreach.toml").write_text('searxng_base_url = "http://127.0.0.1:9"\n')


@pytest.mark.usefixtures("searxng_in_webreach_toml")
async def test_webreach_toml_in_the_working_directory_configures_a_provider() -> None:
    async with build_runtime() as runtime:
        with pytest.raises(WebError) as caught:
            await runtime.search(SearchRequest("q"))
    assert caught.value.code == WebErrorCode.WEB_PROVIDER_AMBIGUOUS
    assert "duckduckgo, searxng" in caught.value.message


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("EXA_BASE_URL", "api.exa.ai"),
        ("EXA_BASE_URL", "ftp://api.exa.ai"),
        ("BRAVE_BASE_URL", "https://user:hunter2@api.search.brave.com"),
        ("SEARXNG_BASE_URL", "not a url"),
        ("PERPLEXITY_MODEL", "   "),
        ("DEEPSEEK_SEARCH_MODEL", " "),
        ("DUCKDUCKGO_BACKEND", "  "),
    ],
)
def test_an_invalid_provider_setting_names_its_variable(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    monkeypatch.setenv(variable, value)
    load_settings()  # the shared settings are not concerned
    with pytest.raises(ConfigError, match=variable) as caught:
        build_runtime()
    assert "hunter2" not in str(caught.value)


def test_an_invalid_value_in_the_file_names_its_key(tmp_path: Path) -> None:
    Path("webreach.toml").write_text("kagi_base_url = 5\nperplexity_model = 7\n")
    with pytest.raises(ConfigError) as caught:
        build_runtime()
    where = Path("webreach.toml").absolute()
    assert f"kagi_base_url in {where} (line 1)" in str(caught.value)
    assert f"perplexity_model = 7 in {where} (line 2)" in str(caught.value)
    assert "KAGI_BASE_URL" not in str(caught.value)


@pytest.mark.slow
def test_the_command_line_reports_an_invalid_provider_setting() -> None:
    done = run_cli("search", "q", "--json", env=clean_env(EXA_BASE_URL="api.exa.ai"))
    assert done.returncode == 2, done.stderr
    error = json.loads(done.stdout)["error"]
    assert error["code"] == "INVALID_SETTING"
    assert "EXA_BASE_URL" in error["message"]


def test_discovery_lists_every_built_in_provider() -> None:
    """Every public module of the search package is one provider, found by discovery; the
    expected ids are the modules' own, so a new provider needs no edit here."""
    search = discover_providers("search")
    modules = [
        module.name
        for module in pkgutil.iter_modules(search_package.__path__)
        if not module.name.startswith("_")
    ]
    assert len(modules) > 10
    assert sorted(spec.id for spec in search) == sorted(
        importlib.import_module(f"{search_package.__name__}.{name}").PROVIDER.id for name in modules
    )
    assert [spec.id for spec in discover_providers("fetch")] == ["auto", "browser", "http"]
    for spec in search:
        assert issubclass(spec.settings, ProviderSettings)


async def test_every_built_in_provider_reports_its_spec_id() -> None:
    async with create_client(timeout=5) as client:
        context = ProviderContext(
            client=client,
            model_client=client,
            search_timeout=5,
            proxy=None,
            fetch_timeout=5,
            fetch_max_bytes=1024,
            fetch_allow=None,
        )
        for spec in [*discover_providers("search"), *discover_providers("fetch")]:
            provider = spec.create(spec.settings(), context)
            assert provider.id == spec.id
            if hasattr(provider, "aclose"):
                await provider.aclose()


@pytest.mark.slow
def test_the_command_line_starts_without_loading_a_provider() -> None:
    """Discovery imports the provider modules, so it waits until a runtime is built."""
    probe = (
        "import sys\n"
        "from webreach.cli import main\n"
        "sys.argv = ['webreach', '--help']\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = ('webreach.providers', 'webreach.config')\n"
        "loaded = [m for m in sys.modules if m.startswith(heavy)]\n"
        "print(loaded, file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], env=clean_env(), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip() == "[]"


def test_each_provider_setting_begins_as_its_package_says() -> None:
    """A command checks another capability's provider only when a variable or file key begins
    as its package's ``SETTING_PREFIXES`` says, so every setting must."""
    for kind, name in PACKAGES.items():
        prefixes = importlib.import_module(name).SETTING_PREFIXES
        for spec in discover_providers(kind):
            begins = prefixes[spec.id]
            for setting in Setting.all_of(spec.settings, spec.id):
                for variable in (*setting.variables(), setting.key.upper()):
                    assert variable.upper().startswith(begins), (spec.id, variable)


def test_each_package_lists_its_built_in_providers_by_id() -> None:
    """A command that does not use a capability trusts a provider named for it when its id is a
    key of ``SETTING_PREFIXES``, without building the providers to see."""
    for kind, name in PACKAGES.items():
        prefixes = importlib.import_module(name).SETTING_PREFIXES
        assert sorted(prefixes) == sorted(spec.id for spec in discover_providers(kind)), kind


def test_only_the_providers_a_name_may_set_are_checked() -> None:
    assert [spec.id for spec in specs_reading("search", ["PATH", "exa_base_url"])] == ["exa"]
    assert [spec.id for spec in specs_reading("search", ["GOOGLE_API_KEY_FILE"])] == ["gemini"]
    assert specs_reading("search", ["PATH", "HOME", "WEBREACH_CACHE"]) == []
    assert [s.id for s in specs_reading("fetch", ["WEBREACH_BROWSER_TIMEOUT"])] == ["browser"]


def test_every_built_in_provider_has_its_row_in_the_manual() -> None:
    """A provider is its module plus its row in the manual's table, nothing else."""
    page = PROVIDERS_PAGE.read_text()
    for spec in discover_providers("search"):
        assert f"| `{spec.id}` |" in page, spec.id


ECHO_MODULE = """
from webreach.providers.spec import ProviderSettings, ProviderSpec, Secret, secret
from webreach.seam import SearchResult, SearchSource


class EchoSettings(ProviderSettings):
    echo_api_key: Secret = None


class EchoSearchProvider:
    id = "echo"

    def __init__(self, key):
        self._key = key

    def available(self):
        return self._key is not None

    async def search(self, request):
        return SearchResult(sources=(SearchSource(url="https://echo.example/" + request.query),))


def create(settings, context):
    return EchoSearchProvider(secret(settings.echo_api_key))


PROVIDER = ProviderSpec("echo", EchoSettings, create)
"""


@pytest.fixture
def drop_in_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """``echo.py`` placed beside the built-in search providers, config.py untouched."""
    (tmp_path / "echo.py").write_text(ECHO_MODULE)
    monkeypatch.setattr(search_package, "__path__", [*search_package.__path__, str(tmp_path)])
    yield
    sys.modules.pop("webreach.providers.search.echo", None)


@pytest.mark.usefixtures("drop_in_module")
async def test_a_new_provider_module_is_found_without_touching_config(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert "echo" in {spec.id for spec in discover_providers("search")}
    monkeypatch.setenv("WEBREACH_SEARCH_PROVIDER", "echo")
    async with build_runtime() as runtime:
        with pytest.raises(WebError) as caught:
            await runtime.search(SearchRequest("q"))
        assert caught.value.code == WebErrorCode.WEB_PROVIDER_CONFIGURED_UNAVAILABLE
    monkeypatch.setenv("ECHO_API_KEY", "k")
    async with build_runtime() as runtime:
        result = await runtime.search(SearchRequest("hello"))
    assert result.provider == "echo"
    assert result.sources[0].url == "https://echo.example/hello"


async def test_settings_made_in_code_replace_what_a_provider_reads() -> None:
    async with build_runtime(provider_settings=[ExaSettings(exa_api_key="k")]) as runtime:
        with pytest.raises(WebError) as caught:
            await runtime.search(SearchRequest("q"))
    assert caught.value.code == WebErrorCode.WEB_PROVIDER_AMBIGUOUS
    assert "duckduckgo, exa" in caught.value.message


# Plugins: an installed distribution whose entry points contribute search providers.

PLUGIN_MODULE = """
from webreach.providers.spec import ProviderSettings, ProviderSpec, Secret, secret
from webreach.seam import SearchResult, SearchSource

SEEN = []


class SpyProvider:
    def __init__(self, provider_id, key):
        self.id = provider_id
        self._key = key

    def available(self):
        return True

    async def search(self, request):
        return SearchResult(sources=(SearchSource(url=f"https://{self.id}.example/{self._key}"),))


class SpySettings(ProviderSettings):
    spy_api_key: Secret = None


def make_spy(settings, context):
    SEEN.append(("spec", settings, context))
    return SpyProvider("spy", secret(settings.spy_api_key))


SPEC = ProviderSpec("spy", SpySettings, make_spy)
UNCONFIGURED = ProviderSpec("idle", SpySettings, lambda settings, context: None)


def legacy(settings):
    SEEN.append(("legacy", settings, None))
    return SpyProvider("legacy", "none")
"""


def install_plugin(site: Path, module: str) -> None:
    (site / f"{module}.py").write_text(PLUGIN_MODULE)
    dist = site / f"{module}-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[webreach.search_providers]\n"
        f"spy = {module}:SPEC\nidle = {module}:UNCONFIGURED\nlegacy = {module}:legacy\n"
    )


CANARIES = {
    "EXA_API_KEY": "exa-canary-5d1e",
    "PERPLEXITY_API_KEY": "pplx-canary-09aa",
    "SEARXNG_API_KEY": "searx-canary-c3f2",
    "WEBREACH_UPSTREAM_API_KEY": "upstream-canary-4b7c",
    "WEBREACH_SERVER_API_KEYS": "inbound-canary-e810",
    "WEBREACH_SIGNING_KEY": "signing-canary-2a96-of-32-bytes-or-more",
}


def everything_in(value: Any) -> str:
    """Every attribute a plugin could read, secrets revealed, as one text to search."""
    if isinstance(value, BaseModel):
        parts = []
        for name in type(value).model_fields:
            item = getattr(value, name)
            if isinstance(item, SecretStr):
                item = item.get_secret_value()
            parts.append(f"{name}={item}")
        return " ".join(parts)
    return " ".join(f"{k}={v!r}" for k, v in vars(value).items())


async def test_a_plugin_sees_its_own_settings_and_no_other_secret(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install_plugin(tmp_path, "spy_plugin_a")
    monkeypatch.syspath_prepend(str(tmp_path))
    for variable, value in CANARIES.items():
        monkeypatch.setenv(variable, value)
    monkeypatch.setenv("SPY_API_KEY", "spy-own-key")
    monkeypatch.setenv("WEBREACH_SEARCH_PROVIDER", "spy")
    async with build_runtime() as runtime:
        result = await runtime.search(SearchRequest("q"))
    assert result.sources[0].url == "https://spy.example/spy-own-key"
    monkeypatch.setenv("WEBREACH_SEARCH_PROVIDER", "idle")  # its factory returned None
    async with build_runtime() as runtime:
        with pytest.raises(WebError) as caught:
            await runtime.search(SearchRequest("q"))
    assert caught.value.code == WebErrorCode.WEB_PROVIDER_CONFIGURED_MISSING

    import spy_plugin_a  # type: ignore[import-not-found]

    (_kind, settings, context) = next(seen for seen in spy_plugin_a.SEEN if seen[0] == "spec")
    assert type(settings).__name__ == "SpySettings"
    assert set(type(settings).model_fields) == {"spy_api_key"}
    visible = everything_in(settings) + everything_in(context)
    assert "spy-own-key" in visible
    for value in CANARIES.values():
        assert value not in visible
    sys.modules.pop("spy_plugin_a", None)


async def test_an_old_style_plugin_gets_the_shared_settings_without_secrets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install_plugin(tmp_path, "spy_plugin_b")
    monkeypatch.syspath_prepend(str(tmp_path))
    for variable, value in CANARIES.items():
        monkeypatch.setenv(variable, value)
    monkeypatch.setenv("WEBREACH_SEARCH_TIMEOUT", "12")
    monkeypatch.setenv("WEBREACH_SEARCH_PROVIDER", "legacy")
    async with build_runtime() as runtime:
        result = await runtime.search(SearchRequest("q"))
    assert result.provider == "legacy"

    import spy_plugin_b  # type: ignore[import-not-found]

    (settings,) = [seen[1] for seen in spy_plugin_b.SEEN if seen[0] == "legacy"]
    assert settings.search_timeout == 12  # what it may share is there
    assert settings.upstream_api_key is None
    visible = everything_in(settings)
    for value in CANARIES.values():
        assert value not in visible
    sys.modules.pop("spy_plugin_b", None)
