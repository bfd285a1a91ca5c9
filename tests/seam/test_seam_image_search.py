"""Image search through the seam: the same selection table and fallback lists as search and
fetch, the image checked before any provider runs, a cache keyed by the image, a time bound."""

from __future__ import annotations

import asyncio
import base64

import pytest

import webreach
from providers_for_tests import ScriptedImageSearch, ScriptedSearch
from webreach.cache import MemoryStore
from webreach.seam import (
    ImageBytes,
    ImageInput,
    ImageMatch,
    ImageSearchProvider,
    ImageSearchRequest,
    ImageSearchResult,
    ImageUrl,
    WebError,
    WebErrorCode,
    WebRuntime,
    image_from_url,
)

IMAGE = ImageUrl("https://img.example/tower.jpg")
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(64))
BYTES = ImageBytes(PNG, "image/png")


def found(*pages: str) -> ImageSearchResult:
    return ImageSearchResult(
        matches=tuple(
            ImageMatch(url=page, title=f"title of {page}", image_url=f"{page}img.jpg")
            for page in pages
        )
    )


def runtime_with(*providers: ScriptedImageSearch, **config: object) -> WebRuntime:
    runtime = WebRuntime(**config)  # type: ignore[arg-type]
    for provider in providers:
        runtime.register_image_search_provider(provider)
    return runtime


async def expect_code(
    runtime: WebRuntime, code: WebErrorCode, image: ImageInput = IMAGE
) -> WebError:
    with pytest.raises(WebError) as caught:
        await runtime.image_search(ImageSearchRequest(image))
    assert caught.value.code == code
    return caught.value


def failing(pid: str, code: WebErrorCode) -> ScriptedImageSearch:
    async def fail(_: ImageSearchRequest) -> ImageSearchResult:
        raise WebError(code, f"{pid} failed", provider=pid)

    return ScriptedImageSearch(pid, behaviour=fail)


# Selection: a provider named at the call, else the configured one, else the first available,
# as for search and fetch.


async def test_the_configured_provider_answers_and_is_stamped() -> None:
    a = ScriptedImageSearch("a", answers={IMAGE: found("https://a.example/")})
    b = ScriptedImageSearch("b", answers={IMAGE: found("https://b.example/")})
    result = await runtime_with(a, b, image_search_provider="b").image_search(
        ImageSearchRequest(IMAGE)
    )
    assert [match.url for match in result.matches] == ["https://b.example/"]
    assert result.provider == "b"
    assert not a.calls
    assert b.calls == [ImageSearchRequest(IMAGE)]


async def test_the_one_available_provider_runs_when_none_is_configured() -> None:
    idle = ScriptedImageSearch("idle", is_available=False)
    ready = ScriptedImageSearch("ready", answers={IMAGE.url: found("https://r.example/")})
    result = await runtime_with(idle, ready).image_search(ImageSearchRequest(IMAGE))
    assert result.provider == "ready"
    assert result.matches[0].image_url == "https://r.example/img.jpg"


async def test_none_available_names_the_idle_providers_and_the_variable() -> None:
    error = await expect_code(
        runtime_with(ScriptedImageSearch("lens", is_available=False)),
        WebErrorCode.WEB_PROVIDER_UNAVAILABLE,
    )
    assert "no image search provider is available" in error.message
    assert "registered, but not configured: lens" in error.message
    assert "WEBREACH_IMAGE_SEARCH_PROVIDER" in error.message
    await expect_code(WebRuntime(), WebErrorCode.WEB_PROVIDER_UNAVAILABLE)


async def test_several_available_is_ambiguous_and_says_how_to_choose() -> None:
    runtime = runtime_with(ScriptedImageSearch("b"), ScriptedImageSearch("a"))
    error = await expect_code(runtime, WebErrorCode.WEB_PROVIDER_AMBIGUOUS)
    assert "(a, b)" in error.message
    assert "WEBREACH_IMAGE_SEARCH_PROVIDER=a,b" in error.message


async def test_configured_but_missing_or_unavailable() -> None:
    idle = ScriptedImageSearch("idle", is_available=False)
    missing = runtime_with(idle, image_search_provider="lens")
    error = await expect_code(missing, WebErrorCode.WEB_PROVIDER_CONFIGURED_MISSING)
    assert "WEBREACH_IMAGE_SEARCH_PROVIDER names image search provider 'lens'" in error.message
    unavailable = runtime_with(idle, image_search_provider="idle")
    await expect_code(unavailable, WebErrorCode.WEB_PROVIDER_CONFIGURED_UNAVAILABLE)
    assert not idle.calls


async def test_the_capabilities_have_separate_registries() -> None:
    runtime = WebRuntime()
    runtime.register_search_provider(ScriptedSearch("same"))
    runtime.register_image_search_provider(ScriptedImageSearch("same"))  # no duplicate
    with pytest.raises(WebError) as caught:
        runtime.register_image_search_provider(ScriptedImageSearch("same"))
    assert caught.value.code == WebErrorCode.WEB_DUPLICATE_PROVIDER
    assert "image search provider with id 'same'" in caught.value.message


async def test_a_disposed_provider_is_gone() -> None:
    runtime = WebRuntime()
    dispose = runtime.register_image_search_provider(ScriptedImageSearch("a"))
    dispose()
    dispose()
    await expect_code(runtime, WebErrorCode.WEB_PROVIDER_UNAVAILABLE)


def test_scripted_image_search_is_an_image_search_provider() -> None:
    assert isinstance(ScriptedImageSearch(), ImageSearchProvider)


# Fallback lists.


@pytest.mark.parametrize(
    "code",
    [
        WebErrorCode.WEB_PROVIDER_ERROR,
        WebErrorCode.WEB_FETCH_TIMEOUT,
        WebErrorCode.WEB_UNSUPPORTED_CONTENT_TYPE,
    ],
)
async def test_a_fallback_list_moves_on_after_these_failures(code: WebErrorCode) -> None:
    b = ScriptedImageSearch("b", answers={IMAGE: found("https://b.example/")})
    runtime = runtime_with(failing("a", code), b, image_search_provider="a,b")
    assert (await runtime.image_search(ImageSearchRequest(IMAGE))).provider == "b"


async def test_bytes_pass_from_a_url_only_provider_to_one_that_takes_them() -> None:
    lens = ScriptedImageSearch("lens", accepts_bytes=False)
    vision = ScriptedImageSearch("vision", answers={BYTES: found("https://v.example/")})
    runtime = runtime_with(lens, vision, image_search_provider=["lens", "vision"])
    result = await runtime.image_search(ImageSearchRequest(BYTES))
    assert result.provider == "vision"
    assert [request.image for request in lens.calls] == [BYTES]
    # A URL stays with the first provider.
    by_url = await runtime.image_search(ImageSearchRequest(IMAGE))
    assert by_url.provider == "lens"
    assert len(vision.calls) == 1


async def test_a_url_only_provider_alone_refuses_bytes_saying_so() -> None:
    runtime = runtime_with(ScriptedImageSearch("lens", accepts_bytes=False))
    error = await expect_code(runtime, WebErrorCode.WEB_UNSUPPORTED_CONTENT_TYPE, BYTES)
    assert error.message == "lens: takes an image URL only, not bytes"
    assert error.provider == "lens"


async def test_no_fallback_on_other_errors_and_none_without_a_list() -> None:
    b = ScriptedImageSearch("b")
    runtime = runtime_with(
        failing("a", WebErrorCode.WEB_INVALID_URL), b, image_search_provider="a,b"
    )
    await expect_code(runtime, WebErrorCode.WEB_INVALID_URL)
    alone = runtime_with(
        failing("a", WebErrorCode.WEB_PROVIDER_ERROR), b, image_search_provider="a"
    )
    await expect_code(alone, WebErrorCode.WEB_PROVIDER_ERROR)
    assert not b.calls


async def test_the_last_failure_is_raised_when_every_provider_fails() -> None:
    runtime = runtime_with(
        failing("a", WebErrorCode.WEB_PROVIDER_ERROR),
        failing("b", WebErrorCode.WEB_PROVIDER_ERROR),
        image_search_provider="a,b",
    )
    error = await expect_code(runtime, WebErrorCode.WEB_PROVIDER_ERROR)
    assert error.message == "all providers failed: a failed; b failed"
    assert error.provider == "b"


async def test_an_unexpected_exception_becomes_a_provider_error() -> None:
    async def bug(_: ImageSearchRequest) -> ImageSearchResult:
        raise KeyError("visual_matches")

    error = await expect_code(
        runtime_with(ScriptedImageSearch("a", behaviour=bug)), WebErrorCode.WEB_PROVIDER_ERROR
    )
    assert error.message == "a: unexpected failure (KeyError)"


# The time bound.


async def test_a_slow_provider_is_cut_off_and_the_next_one_answers() -> None:
    async def slow(_: ImageSearchRequest) -> ImageSearchResult:
        await asyncio.sleep(30)
        raise AssertionError("not reached")

    a = ScriptedImageSearch("a", behaviour=slow)
    b = ScriptedImageSearch("b", answers={IMAGE: found("https://b.example/")})
    runtime = runtime_with(a, b, image_search_provider="a,b", image_search_timeout=0.05)
    assert (await runtime.image_search(ImageSearchRequest(IMAGE))).provider == "b"
    assert a.cancelled == [ImageSearchRequest(IMAGE)]
    alone = runtime_with(a, image_search_provider="a", image_search_timeout=0.05)
    error = await expect_code(alone, WebErrorCode.WEB_PROVIDER_ERROR)
    assert error.message == "a: no answer within 0.05 s"
    assert error.provider == "a"


async def test_a_raw_timeout_from_the_provider_is_a_provider_error() -> None:
    async def hang(_: ImageSearchRequest) -> ImageSearchResult:
        raise TimeoutError

    runtime = runtime_with(ScriptedImageSearch("a", behaviour=hang), image_search_timeout=5)
    error = await expect_code(runtime, WebErrorCode.WEB_PROVIDER_ERROR)
    assert error.message == "a: timed out"


def test_the_time_bound_must_be_positive() -> None:
    with pytest.raises(ValueError, match="image_search_timeout"):
        WebRuntime(image_search_timeout=0)


async def test_cancelling_the_caller_cancels_the_provider() -> None:
    started = asyncio.Event()

    async def wait(_: ImageSearchRequest) -> ImageSearchResult:
        started.set()
        await asyncio.sleep(30)
        raise AssertionError("not reached")

    provider = ScriptedImageSearch("a", behaviour=wait)
    task = asyncio.create_task(runtime_with(provider).image_search(ImageSearchRequest(IMAGE)))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert provider.cancelled == [ImageSearchRequest(IMAGE)]


# Results: cut to max_results, cached by the image.


async def test_matches_are_cut_to_max_results() -> None:
    pages = [f"https://p{i}.example/" for i in range(5)]
    provider = ScriptedImageSearch("a", answers={IMAGE: found(*pages)})
    runtime = runtime_with(provider)
    cut = await runtime.image_search(ImageSearchRequest(IMAGE, max_results=2))
    assert [match.url for match in cut.matches] == pages[:2]
    assert cut.truncated
    whole = await runtime.image_search(ImageSearchRequest(IMAGE))
    assert len(whole.matches) == 5
    assert not whole.truncated


def test_max_results_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_results"):
        ImageSearchRequest(IMAGE, max_results=0)


async def test_a_cached_result_is_served_without_calling_the_provider_again() -> None:
    content = ImageSearchResult(found("https://a.example/").matches, content="eiffel tower")
    provider = ScriptedImageSearch("a", answers={IMAGE: content, BYTES: found("https://b.x/")})
    async with runtime_with(provider, cache=MemoryStore()) as runtime:
        first = await runtime.image_search(ImageSearchRequest(IMAGE))
        again = await runtime.image_search(ImageSearchRequest(IMAGE))
        await runtime.image_search(ImageSearchRequest(ImageBytes(PNG, "image/png")))
        same_bytes = await runtime.image_search(ImageSearchRequest(ImageBytes(PNG, "IMAGE/PNG")))
        await runtime.image_search(ImageSearchRequest(IMAGE, max_results=1))
    assert again == first
    assert again.content == "eiffel tower"
    assert again.provider == "a"
    assert same_bytes.matches[0].url == "https://b.x/"
    # The URL, the bytes (by hash) and the other max_results: three calls, the repeats none.
    assert [(call.image, call.max_results) for call in provider.calls] == [
        (IMAGE, None),
        (BYTES, None),
        (IMAGE, 1),
    ]


async def test_every_field_survives_the_cache() -> None:
    match = ImageMatch(
        url="https://a.example/page",
        title="A page",
        image_url="https://a.example/i.jpg",
        snippet="about it",
        thumbnail_url="https://t.example/t.jpg",
    )
    result = ImageSearchResult((match, ImageMatch("https://b.example/")), content="label")
    store = MemoryStore()  # shared, as replicas share redis: the second runtime reads it back
    first = runtime_with(ScriptedImageSearch("a", answers={IMAGE: result}), cache=store)
    await first.image_search(ImageSearchRequest(IMAGE))
    idle = ScriptedImageSearch("a")
    cached = await runtime_with(idle, cache=store).image_search(ImageSearchRequest(IMAGE))
    assert not idle.calls
    assert cached.matches == result.matches
    assert cached.content == "label"


async def test_errors_are_never_cached() -> None:
    outcomes: list[ImageSearchResult | WebError] = [
        WebError(WebErrorCode.WEB_PROVIDER_ERROR, "a: down", provider="a"),
        found("https://a.example/"),
    ]

    async def flaky(_: ImageSearchRequest) -> ImageSearchResult:
        outcome = outcomes.pop(0)
        if isinstance(outcome, WebError):
            raise outcome
        return outcome

    async with runtime_with(ScriptedImageSearch("a", behaviour=flaky), cache=MemoryStore()) as r:
        await expect_code(r, WebErrorCode.WEB_PROVIDER_ERROR)
        assert (await r.image_search(ImageSearchRequest(IMAGE))).matches


# The image is checked before any provider or the cache.


@pytest.mark.parametrize(
    ("image", "code", "why"),
    [
        (ImageUrl("ftp://img.example/a.png"), WebErrorCode.WEB_INVALID_URL, "only http and https"),
        (ImageUrl("data:image/png;base64,iVBO"), WebErrorCode.WEB_INVALID_URL, "image_from_url"),
        (ImageUrl("https://u:p@img.example/a.png"), WebErrorCode.WEB_INVALID_URL, "credentials"),
        (ImageUrl("https:///a.png"), WebErrorCode.WEB_INVALID_URL, "no host"),
        (ImageUrl("https://img.example/a b.png"), WebErrorCode.WEB_INVALID_URL, "whitespace"),
        (ImageUrl("https://a.example/" + "x" * 2048), WebErrorCode.WEB_INVALID_URL, "longer"),
        (ImageUrl("http://[::1/"), WebErrorCode.WEB_INVALID_URL, "cannot be parsed"),
        (ImageBytes(b"", "image/png"), WebErrorCode.WEB_UNSUPPORTED_CONTENT_TYPE, "0 bytes"),
        (ImageBytes(b"%PDF", "application/pdf"), WebErrorCode.WEB_UNSUPPORTED_CONTENT_TYPE, "pdf"),
    ],
)
async def test_an_image_no_service_could_search_is_refused_first(
    image: ImageInput, code: WebErrorCode, why: str
) -> None:
    provider = ScriptedImageSearch("a")
    error = await expect_code(runtime_with(provider), code, image)
    assert why in error.message
    assert not provider.calls


async def test_a_closed_runtime_aborts() -> None:
    runtime = runtime_with(ScriptedImageSearch("a"))
    await runtime.aclose()
    await expect_code(runtime, WebErrorCode.WEB_ABORTED)


# image_from_url: what a chat client sends.


def test_a_data_url_becomes_bytes_and_any_other_url_stays_a_url() -> None:
    encoded = base64.b64encode(PNG).decode()
    assert image_from_url(f"data:image/png;base64,{encoded}") == BYTES
    assert image_from_url(f"DATA:Image/PNG;charset=x;BASE64,{encoded}") == BYTES
    assert image_from_url("data:image/svg+xml,%3Csvg%2F%3E") == ImageBytes(
        b"<svg/>", "image/svg+xml"
    )
    assert image_from_url(" https://img.example/a.png\n") == ImageUrl("https://img.example/a.png")


@pytest.mark.parametrize("url", ["data:image/png;base64", "data:image/png;base64,@@@"])
def test_a_malformed_data_url_is_an_invalid_url(url: str) -> None:
    with pytest.raises(WebError) as caught:
        image_from_url(url)
    assert caught.value.code == WebErrorCode.WEB_INVALID_URL
    assert caught.value.message.startswith("malformed data URL")


def test_image_bytes_never_show_their_data() -> None:
    image = ImageBytes(b"secret-pixels" * 100, "image/jpeg")
    assert repr(image) == "ImageBytes(<1300 bytes>, media_type='image/jpeg')"
    assert "secret-pixels" not in repr(ImageSearchRequest(image))


def test_the_names_are_importable_from_webreach() -> None:
    for name in ("ImageUrl", "ImageBytes", "ImageSearchRequest", "ImageSearchResult"):
        assert name in webreach.__all__
    assert webreach.image_from_url is image_from_url
    assert webreach.ImageMatch is ImageMatch
