"""The seam chooses a provider at every call, by a table that ignores registration order."""

from __future__ import annotations

import asyncio
import itertools
import logging

import pytest

from providers_for_tests import ScriptedSearch, sources
from webreach.seam import (
    FetchRequest,
    SearchRequest,
    SearchResult,
    WebError,
    WebErrorCode,
    WebRuntime,
)

ORDERS = pytest.mark.parametrize("reverse", [False, True], ids=["a-first", "b-first"])


def runtime_with(*providers: ScriptedSearch, reverse: bool = False, **config: object) -> WebRuntime:
    runtime = WebRuntime(**config)  # type: ignore[arg-type]
    for provider in reversed(providers) if reverse else providers:
        runtime.register_search_provider(provider)
    return runtime


def answer(*urls: str) -> dict[str, SearchResult]:
    return {"q": SearchResult(sources=sources(*urls))}


async def expect_code(runtime: WebRuntime, code: WebErrorCode) -> WebError:
    with pytest.raises(WebError) as caught:
        await runtime.search(SearchRequest("q"))
    assert caught.value.code == code
    return caught.value


@ORDERS
async def test_configured_and_available_runs_it(reverse: bool) -> None:
    a = ScriptedSearch("a", answers=answer("https://a.example/"))
    b = ScriptedSearch("b", answers=answer("https://b.example/"))
    result = await runtime_with(a, b, reverse=reverse, search_provider="b").search(
        SearchRequest("q")
    )
    assert [s.url for s in result.sources] == ["https://b.example/"]
    assert result.provider == "b"
    assert not a.calls


@ORDERS
async def test_configured_but_not_registered(reverse: bool) -> None:
    runtime = runtime_with(
        ScriptedSearch("a"), ScriptedSearch("b"), reverse=reverse, search_provider="exa"
    )
    error = await expect_code(runtime, WebErrorCode.WEB_PROVIDER_CONFIGURED_MISSING)
    assert "'exa'" in error.message and "a, b" in error.message


@ORDERS
async def test_configured_but_unavailable(reverse: bool) -> None:
    a = ScriptedSearch("a", is_available=False)
    runtime = runtime_with(a, ScriptedSearch("b"), reverse=reverse, search_provider="a")
    await expect_code(runtime, WebErrorCode.WEB_PROVIDER_CONFIGURED_UNAVAILABLE)
    assert not a.calls


@ORDERS
async def test_unconfigured_single_available_runs_it(reverse: bool) -> None:
    a = ScriptedSearch("a", is_available=False)
    b = ScriptedSearch("b", answers=answer("https://b.example/"))
    result = await runtime_with(a, b, reverse=reverse).search(SearchRequest("q"))
    assert result.provider == "b"


async def test_unconfigured_none_registered() -> None:
    await expect_code(WebRuntime(), WebErrorCode.WEB_PROVIDER_UNAVAILABLE)


@ORDERS
async def test_unconfigured_none_available(reverse: bool) -> None:
    runtime = runtime_with(
        ScriptedSearch("a", is_available=False),
        ScriptedSearch("b", is_available=False),
        reverse=reverse,
    )
    await expect_code(runtime, WebErrorCode.WEB_PROVIDER_UNAVAILABLE)


@ORDERS
async def test_unconfigured_several_available_is_ambiguous_and_says_how_to_choose(
    reverse: bool,
) -> None:
    runtime = runtime_with(ScriptedSearch("a"), ScriptedSearch("b"), reverse=reverse)
    error = await expect_code(runtime, WebErrorCode.WEB_PROVIDER_AMBIGUOUS)
    assert "(a, b)" in error.message
    assert "WEBREACH_SEARCH_PROVIDER" in error.message


async def test_availability_is_read_at_every_call() -> None:
    a = ScriptedSearch("a", is_available=False)
    runtime = runtime_with(a)
    await expect_code(runtime, WebErrorCode.WEB_PROVIDER_UNAVAILABLE)
    a.is_available = True
    assert (await runtime.search(SearchRequest("q"))).provider == "a"
    b = ScriptedSearch("b")
    runtime.register_search_provider(b)
    await expect_code(runtime, WebErrorCode.WEB_PROVIDER_AMBIGUOUS)


async def test_duplicate_id_is_refused_at_once_and_disposers_are_idempotent() -> None:
    runtime = WebRuntime()
    first = ScriptedSearch("a")
    dispose = runtime.register_search_provider(first)
    with pytest.raises(WebError) as caught:
        runtime.register_search_provider(ScriptedSearch("a"))
    assert caught.value.code == WebErrorCode.WEB_DUPLICATE_PROVIDER
    dispose()
    dispose()
    await expect_code(runtime, WebErrorCode.WEB_PROVIDER_UNAVAILABLE)
    replacement = ScriptedSearch("a")
    runtime.register_search_provider(replacement)
    dispose()  # the stale disposer must not remove the new registration
    await runtime.search(SearchRequest("q"))
    assert replacement.calls


async def test_search_and_fetch_registries_are_separate() -> None:
    runtime = runtime_with(ScriptedSearch("a"))
    with pytest.raises(WebError) as caught:
        await runtime.fetch(FetchRequest("https://example.com/"))
    assert caught.value.code == WebErrorCode.WEB_PROVIDER_UNAVAILABLE
    assert "fetch" in caught.value.message


async def test_seam_cuts_sources_to_max_results() -> None:
    a = ScriptedSearch(
        "a",
        answers={
            "q": SearchResult(
                sources=sources("https://u1.example/", "https://u2.example/", "https://u3.example/")
            )
        },
    )
    runtime = runtime_with(a)
    cut = await runtime.search(SearchRequest("q", max_results=2))
    assert [s.url for s in cut.sources] == ["https://u1.example/", "https://u2.example/"]
    assert cut.truncated
    whole = await runtime.search(SearchRequest("q", max_results=3))
    assert len(whole.sources) == 3 and not whole.truncated


def test_max_results_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_results"):
        SearchRequest("q", max_results=0)


async def test_cancelling_the_caller_cancels_the_provider_call() -> None:
    started = asyncio.Event()

    async def slow(_: SearchRequest) -> SearchResult:
        started.set()
        await asyncio.sleep(60)
        raise AssertionError("not reached")

    a = ScriptedSearch("a", behaviour=slow)
    task = asyncio.create_task(runtime_with(a).search(SearchRequest("q")))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert a.cancelled == ["q"]


def failing(code: WebErrorCode) -> ScriptedSearch:
    async def fail(_: SearchRequest) -> SearchResult:
        raise WebError(code, "boom")

    return ScriptedSearch("a", behaviour=fail)


@pytest.mark.parametrize("code", [WebErrorCode.WEB_PROVIDER_ERROR, WebErrorCode.WEB_FETCH_TIMEOUT])
async def test_explicit_fallback_on_provider_error_or_timeout(code: WebErrorCode) -> None:
    b = ScriptedSearch("b", answers=answer("https://b.example/"))
    runtime = runtime_with(failing(code), b, search_provider="a,b")
    result = await runtime.search(SearchRequest("q"))
    assert result.provider == "b"


async def test_a_failure_the_fallback_made_up_for_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    b = ScriptedSearch("b", answers=answer("https://b.example/"))
    runtime = runtime_with(failing(WebErrorCode.WEB_PROVIDER_ERROR), b, search_provider="a,b")
    with caplog.at_level(logging.INFO, logger="webreach.seam"):
        assert (await runtime.search(SearchRequest("q"))).provider == "b"
    (record,) = caplog.records
    assert record.getMessage() == "search failed (WEB_PROVIDER_ERROR: boom); trying b"


async def test_fallback_on_a_raw_timeout() -> None:
    async def hang(_: SearchRequest) -> SearchResult:
        raise TimeoutError

    b = ScriptedSearch("b", answers=answer("https://b.example/"))
    runtime = runtime_with(ScriptedSearch("a", behaviour=hang), b, search_provider=["a", "b"])
    assert (await runtime.search(SearchRequest("q"))).provider == "b"


async def test_no_fallback_on_other_errors() -> None:
    b = ScriptedSearch("b")
    runtime = runtime_with(failing(WebErrorCode.WEB_INVALID_URL), b, search_provider="a,b")
    await expect_code(runtime, WebErrorCode.WEB_INVALID_URL)
    assert not b.calls


async def test_no_implicit_fallback_without_a_list() -> None:
    b = ScriptedSearch("b")
    runtime = runtime_with(failing(WebErrorCode.WEB_PROVIDER_ERROR), b, search_provider="a")
    await expect_code(runtime, WebErrorCode.WEB_PROVIDER_ERROR)
    assert not b.calls


async def test_last_provider_error_is_raised_when_every_fallback_fails() -> None:
    async def fail_b(_: SearchRequest) -> SearchResult:
        raise WebError(WebErrorCode.WEB_PROVIDER_ERROR, "b is down", provider="b")

    runtime = runtime_with(
        failing(WebErrorCode.WEB_PROVIDER_ERROR),
        ScriptedSearch("b", behaviour=fail_b),
        search_provider="a,b",
    )
    error = await expect_code(runtime, WebErrorCode.WEB_PROVIDER_ERROR)
    assert error.message == "all providers failed: a: boom; b is down"
    assert error.provider == "b"


async def test_every_listed_provider_must_exist_before_anything_runs() -> None:
    a = ScriptedSearch("a")
    runtime = runtime_with(a, search_provider="a,missing")
    await expect_code(runtime, WebErrorCode.WEB_PROVIDER_CONFIGURED_MISSING)
    assert not a.calls


async def test_an_unexpected_exception_becomes_a_provider_error() -> None:
    async def bug(_: SearchRequest) -> SearchResult:
        raise KeyError("results")

    error = await expect_code(
        runtime_with(ScriptedSearch("a", behaviour=bug)), WebErrorCode.WEB_PROVIDER_ERROR
    )
    assert error.message == "a: unexpected failure (KeyError)"
    assert isinstance(error.__cause__, KeyError)


def test_a_provider_list_naming_an_id_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="twice"):
        WebRuntime(search_provider="a,a")


def test_error_codes_compare_equal_to_their_names() -> None:
    error = WebError("WEB_BLOCKED_URL", "no", status=None)
    assert error.code == "WEB_BLOCKED_URL"
    assert error.code is WebErrorCode.WEB_BLOCKED_URL
    assert str(error) == "WEB_BLOCKED_URL: no"
    assert repr(WebError(WebErrorCode.WEB_PROVIDER_ERROR, "x", provider="exa", status=429)) == (
        "WebError('WEB_PROVIDER_ERROR', 'x', provider='exa', status=429)"
    )


async def test_runtime_closes_what_it_owns_once_in_reverse_order() -> None:
    closed: list[str] = []

    class Resource:
        def __init__(self, name: str) -> None:
            self.name = name

        async def aclose(self) -> None:
            closed.append(self.name)

    async with WebRuntime() as runtime:
        for name in ("first", "second"):
            runtime.own(Resource(name))
    await runtime.aclose()
    assert closed == ["second", "first"]


async def test_a_call_after_close_is_aborted_not_a_provider_failure() -> None:
    search = ScriptedSearch("scripted")
    runtime = WebRuntime()
    runtime.register_search_provider(search)
    await runtime.aclose()
    with pytest.raises(WebError) as caught:
        await runtime.search(SearchRequest("q"))
    assert caught.value.code == WebErrorCode.WEB_ABORTED
    with pytest.raises(WebError, match="closed"):
        await runtime.fetch(FetchRequest("https://example.org/"))
    assert search.calls == []


def test_every_table_situation_ignores_registration_order() -> None:
    """All permutations of three providers choose the same one."""

    async def choose(order: tuple[ScriptedSearch, ...]) -> str | None:
        runtime = WebRuntime()
        for provider in order:
            runtime.register_search_provider(provider)
        try:
            return (await runtime.search(SearchRequest("q"))).provider
        except WebError as error:
            return error.code

    providers = (
        ScriptedSearch("a", is_available=False),
        ScriptedSearch("b"),
        ScriptedSearch("c", is_available=False),
    )
    outcomes = {asyncio.run(choose(order)) for order in itertools.permutations(providers)}
    assert outcomes == {"b"}
