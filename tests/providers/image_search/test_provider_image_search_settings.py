"""Image search providers are found, configured and selected like the search providers:
their own settings (``SERPAPI_API_KEY``, ``GOOGLE_VISION_API_KEY`` and base URLs), and
``WEBREACH_IMAGE_SEARCH_PROVIDER`` choosing among them, fallback lists included."""

from __future__ import annotations

import pytest

from image_search_replies import IMAGE_URL, LENS_RESPONSE, VISION_RESPONSE
from live_environment import LIVE_ENVIRONMENT
from replay_server import ReplayServer, Reply
from repo_paths import ROOT
from webreach.config import ConfigError, build_runtime, discover_providers, load_settings
from webreach.net import create_client
from webreach.providers.image_search.google_lens import (
    GoogleLensImageSearchProvider,
    GoogleLensSettings,
)
from webreach.providers.image_search.google_vision import (
    GoogleVisionImageSearchProvider,
    GoogleVisionSettings,
)
from webreach.providers.spec import ProviderContext, ProviderSettings
from webreach.seam import ImageBytes, ImageSearchRequest, ImageUrl, WebError, WebErrorCode

PROVIDERS_PAGE = ROOT / "docs" / "library" / "providers.md"
REQUEST = ImageSearchRequest(ImageUrl(IMAGE_URL), max_results=2)
PNG = ImageBytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 32, "image/png")


def test_discovery_lists_the_built_in_image_search_providers() -> None:
    specs = discover_providers("image_search")
    assert [spec.id for spec in specs] == ["google_lens", "google_vision"]
    for spec in specs:
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
        for spec in discover_providers("image_search"):
            provider = spec.create(spec.settings(), context)
            assert provider is not None
            assert provider.id == spec.id
            assert not provider.available()  # no key, no service
            if hasattr(provider, "aclose"):
                await provider.aclose()


def test_each_reads_its_own_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERPAPI_API_KEY", "serp-canary-51aa")
    monkeypatch.setenv("SERPAPI_BASE_URL", "http://127.0.0.1:1234")
    monkeypatch.setenv("GOOGLE_VISION_API_KEY", "vision-canary-9c0d")
    monkeypatch.setenv("GOOGLE_VISION_BASE_URL", "")  # empty means unset
    lens, vision = GoogleLensSettings(), GoogleVisionSettings()
    assert lens.serpapi_api_key is not None
    assert lens.serpapi_api_key.get_secret_value() == "serp-canary-51aa"
    assert lens.serpapi_base_url == "http://127.0.0.1:1234"
    assert vision.google_vision_api_key is not None
    assert vision.google_vision_base_url is None
    assert set(type(lens).model_fields) == {"serpapi_api_key", "serpapi_base_url"}
    assert "serp-canary-51aa" not in repr(lens) + str(lens.model_dump())
    assert "vision-canary-9c0d" not in repr(vision) + str(vision.model_dump())


def test_the_shared_settings_and_their_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = load_settings()
    assert settings.image_search_provider is None
    assert settings.image_search_timeout == 60.0
    monkeypatch.setenv("WEBREACH_IMAGE_SEARCH_PROVIDER", "google_lens,google_vision")
    monkeypatch.setenv("WEBREACH_IMAGE_SEARCH_TIMEOUT", "12.5")
    settings = load_settings()
    assert settings.image_search_provider == "google_lens,google_vision"
    assert settings.image_search_timeout == 12.5


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("SERPAPI_BASE_URL", "serpapi.com"),
        ("GOOGLE_VISION_BASE_URL", "https://user:hunter2@vision.googleapis.com"),
    ],
)
def test_an_invalid_provider_setting_names_its_variable(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(ConfigError, match=variable) as caught:
        build_runtime()
    assert "hunter2" not in str(caught.value)


def test_a_non_positive_time_bound_names_its_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEBREACH_IMAGE_SEARCH_TIMEOUT", "0")
    with pytest.raises(ConfigError, match="WEBREACH_IMAGE_SEARCH_TIMEOUT"):
        load_settings()


async def test_without_a_key_no_image_search_provider_is_available() -> None:
    async with build_runtime() as runtime:
        with pytest.raises(WebError) as caught:
            await runtime.image_search(REQUEST)
    assert caught.value.code == WebErrorCode.WEB_PROVIDER_UNAVAILABLE
    assert "registered, but not configured: google_lens, google_vision" in caught.value.message
    assert "WEBREACH_IMAGE_SEARCH_PROVIDER" in caught.value.message


async def test_a_configured_provider_answers_through_the_runtime(
    replay: ReplayServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    replay.route("GET", "/search.json", Reply(json=LENS_RESPONSE))
    monkeypatch.setenv("SERPAPI_API_KEY", "serp-key")
    monkeypatch.setenv("SERPAPI_BASE_URL", replay.url)
    async with build_runtime() as runtime:
        result = await runtime.image_search(REQUEST)
        again = await runtime.image_search(REQUEST)  # from the cache
    assert result.provider == "google_lens"
    assert [match.url for match in result.matches] == [
        "https://en.wikipedia.org/wiki/Eiffel_Tower",
        "https://www.toureiffel.paris/en",
    ]
    assert result.truncated
    assert again == result
    assert len(replay.requests) == 1


async def test_both_keys_make_it_ambiguous_until_one_is_chosen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SERPAPI_API_KEY", "k1")
    monkeypatch.setenv("GOOGLE_VISION_API_KEY", "k2")
    async with build_runtime() as runtime:
        with pytest.raises(WebError) as caught:
            await runtime.image_search(REQUEST)
    assert caught.value.code == WebErrorCode.WEB_PROVIDER_AMBIGUOUS
    assert "WEBREACH_IMAGE_SEARCH_PROVIDER=google_lens,google_vision" in caught.value.message


async def test_bytes_fall_back_from_lens_to_vision(
    replay: ReplayServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    replay.route("GET", "/search.json", Reply(json=LENS_RESPONSE))
    replay.route("POST", "/v1/images:annotate", Reply(json=VISION_RESPONSE))
    for name, value in {
        "SERPAPI_API_KEY": "k1",
        "SERPAPI_BASE_URL": replay.url,
        "GOOGLE_VISION_API_KEY": "k2",
        "GOOGLE_VISION_BASE_URL": replay.url,
        "WEBREACH_IMAGE_SEARCH_PROVIDER": "google_lens,google_vision",
    }.items():
        monkeypatch.setenv(name, value)
    async with build_runtime() as runtime:
        by_url = await runtime.image_search(REQUEST)
        by_bytes = await runtime.image_search(ImageSearchRequest(PNG))
    assert by_url.provider == "google_lens"
    assert by_bytes.provider == "google_vision"
    assert by_bytes.content == "eiffel tower"
    assert [(sent.method, sent.path) for sent in replay.requests] == [
        ("GET", "/search.json"),
        ("POST", "/v1/images:annotate"),
    ]


def test_every_image_search_provider_has_its_row_in_the_manual() -> None:
    page = PROVIDERS_PAGE.read_text()
    for spec in discover_providers("image_search"):
        assert f"| `{spec.id}` |" in page, spec.id
    for variable in ("WEBREACH_IMAGE_SEARCH_PROVIDER", "WEBREACH_IMAGE_SEARCH_TIMEOUT"):
        assert variable in page


# Smoke tests against the real services: each skips itself without its key.


@pytest.mark.skipif(not LIVE_ENVIRONMENT.get("SERPAPI_API_KEY"), reason="SERPAPI_API_KEY unset")
async def test_google_lens_finds_a_real_image() -> None:
    lens = GoogleLensImageSearchProvider(api_key=LIVE_ENVIRONMENT["SERPAPI_API_KEY"], timeout=60)
    try:
        result = await lens.image_search(ImageSearchRequest(ImageUrl(IMAGE_URL)))
    finally:
        await lens.aclose()
    assert result.matches
    assert all(match.url.startswith("http") for match in result.matches)


@pytest.mark.skipif(
    not LIVE_ENVIRONMENT.get("GOOGLE_VISION_API_KEY"), reason="GOOGLE_VISION_API_KEY unset"
)
async def test_google_vision_finds_a_real_image() -> None:
    async with create_client(timeout=60) as client:
        vision = GoogleVisionImageSearchProvider(
            api_key=LIVE_ENVIRONMENT["GOOGLE_VISION_API_KEY"], client=client
        )
        result = await vision.image_search(ImageSearchRequest(ImageUrl(IMAGE_URL), max_results=5))
    assert result.matches
    assert all(match.url.startswith("http") for match in result.matches)
