"""The search chain at the seam: ``auto`` in an order, exclusions, empty answers that move on, one
error naming every provider's reason, and providers whose only key other programs share."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

import pytest

from providers_for_tests import ScriptedSearch, sources
from webreach.cache import MemoryStore
from webreach.config import build_runtime, load_settings
from webreach.providers.search import AUTO_ORDER
from webreach.seam import (
    FetchRequest,
    InvalidValueError,
    SearchRequest,
    SearchResult,
    WebError,
    WebErrorCode,
    WebRuntime,
)

ORDER = ("c", "a", "*", "b")


@dataclass
class BorrowedKey(ScriptedSearch):
    """A provider whose only credential is a key other programs use (OPENAI_API_KEY, say)."""

    borrowed: bool = True

    def shared_credential(self) -> bool:
        return self.borrowed


def found(pid: str) -> ScriptedSearch:
    return ScriptedSearch(pid, answers={"q": SearchResult(sources(f"https://{pid}.example/"))})


def failing(
    pid: str,
    message: str | None = None,
    code: WebErrorCode = WebErrorCode.WEB_PROVIDER_ERROR,
    **extra: float,
) -> ScriptedSearch:
    async def fail(_: SearchRequest) -> SearchResult:
        raise WebError(code, message or f"{pid}: down", provider=pid, **extra)  # type: ignore[arg-type]

    return ScriptedSearch(pid, behaviour=fail)


def runtime_with(*providers: ScriptedSearch, **config: object) -> WebRuntime:
    config.setdefault("search_order", ORDER)
    runtime = WebRuntime(**config)  # type: ignore[arg-type]
    for provider in reversed(providers):  # registration order never matters
        runtime.register_search_provider(provider)
    return runtime


async def search(runtime: WebRuntime) -> SearchResult:
    return await runtime.search(SearchRequest("q"))


async def refused(runtime: WebRuntime, code: WebErrorCode) -> WebError:
    with pytest.raises(WebError) as caught:
        await search(runtime)
    assert caught.value.code == code, caught.value
    return caught.value


def tried(*providers: ScriptedSearch) -> list[str]:
    return [p.id for p in providers if p.calls]


# auto: every available provider, in the order


async def test_auto_tries_the_available_providers_in_the_order() -> None:
    a, b, c = failing("a"), failing("b"), failing("c")
    off = ScriptedSearch("d", is_available=False)
    plugin, other = failing("p"), found("o")
    runtime = runtime_with(a, b, c, off, plugin, other, search_provider="auto")
    result = await search(runtime)
    assert result.provider == "o"
    # c, a as named; then the providers the order does not name, by id ("*"); b after them
    assert [p.id for p in (c, a, other, plugin) if p.calls] == ["c", "a", "o"]
    assert not b.calls and not off.calls and not plugin.calls


async def test_without_a_place_for_them_unnamed_providers_go_last() -> None:
    a, z = failing("a"), found("z")
    runtime = runtime_with(a, z, search_provider="auto", search_order=("a",))
    assert (await search(runtime)).provider == "z"


async def test_the_built_in_order_is_004s_then_plugins_deepseek_and_duckduckgo() -> None:
    assert (
        *("perplexity", "gemini", "anthropic", "openai", "zai", "exa", "jina", "kagi"),
        *("tavily", "brave", "kimi", "parallel", "synthetic", "searxng"),
        *("*", "deepseek", "duckduckgo"),
    ) == AUTO_ORDER


async def test_build_runtime_passes_the_order_and_the_exclusions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("WEBREACH_SEARCH_PROVIDER", "auto")
    monkeypatch.setenv("WEBREACH_SEARCH_EXCLUDE", "searxng")
    async with build_runtime(load_settings(), default_cache=None) as runtime:
        late, early = found("zz-plugin"), found("duckduckgo-first")
        for provider in (late, early):
            runtime.register_search_provider(provider)
        # a plugin goes after searxng and before deepseek and duckduckgo (both of which would
        # run here, the one keyless and the other unconfigured): the first plugin by id answers
        assert (await search(runtime)).provider == "duckduckgo-first"


def test_auto_stands_alone() -> None:
    with pytest.raises(InvalidValueError) as caught:
        WebRuntime(search_provider="exa,auto", search_order=ORDER)
    assert caught.value.field == "search_provider"
    assert caught.value.message.startswith("WEBREACH_SEARCH_PROVIDER=exa,auto: 'auto' stands alone")
    assert "WEBREACH_SEARCH_EXCLUDE" in caught.value.message


async def test_only_search_knows_auto() -> None:
    runtime = WebRuntime(fetch_provider="auto", search_order=ORDER)
    with pytest.raises(WebError) as caught:
        await runtime.fetch(FetchRequest("https://a.example/"))
    assert caught.value.code == WebErrorCode.WEB_PROVIDER_CONFIGURED_MISSING


async def test_auto_with_nothing_available_names_the_exclusions() -> None:
    runtime = runtime_with(
        found("a"),
        found("b"),
        ScriptedSearch("c", is_available=False),
        search_provider="auto",
        search_exclude="a,b",
    )
    error = await refused(runtime, WebErrorCode.WEB_PROVIDER_UNAVAILABLE)
    assert error.message == (
        "no search provider is available for WEBREACH_SEARCH_PROVIDER=auto (registered, but "
        "not configured: c; excluded by WEBREACH_SEARCH_EXCLUDE: a, b); configure one and set "
        "WEBREACH_SEARCH_PROVIDER"
    )


# exclusions


async def test_exclusions_leave_providers_out_of_auto() -> None:
    c, a, b = found("c"), found("a"), found("b")
    runtime = runtime_with(c, a, b, search_provider="auto", search_exclude="c, a")
    assert (await search(runtime)).provider == "b"
    assert tried(c, a, b) == ["b"]


async def test_exclusions_leave_providers_out_of_an_explicit_list() -> None:
    a, b = failing("a"), found("b")
    runtime = runtime_with(a, b, search_provider="a,b", search_exclude="a")
    assert (await search(runtime)).provider == "b"
    assert not a.calls


async def test_an_exclusion_settles_a_bare_configuration() -> None:
    a, b = found("a"), found("b")
    ambiguous = await refused(runtime_with(a, b), WebErrorCode.WEB_PROVIDER_AMBIGUOUS)
    assert ambiguous.message.endswith(
        "(or a comma list for fallback, e.g. WEBREACH_SEARCH_PROVIDER=a,b, or "
        "WEBREACH_SEARCH_PROVIDER=auto for every available one in order)"
    )
    assert (await search(runtime_with(a, b, search_exclude="a"))).provider == "b"


def test_excluding_every_provider_of_a_list_names_both_settings() -> None:
    with pytest.raises(InvalidValueError) as caught:
        WebRuntime(search_provider="a,b", search_exclude="b,a")
    assert caught.value.field == "search_provider"
    assert caught.value.message == (
        "WEBREACH_SEARCH_EXCLUDE=b,a excludes every provider of WEBREACH_SEARCH_PROVIDER=a,b; "
        "remove one from WEBREACH_SEARCH_EXCLUDE"
    )


async def test_an_unknown_exclusion_is_an_error_with_a_suggestion() -> None:
    exa = found("exa")
    runtime = runtime_with(exa, found("brave"), search_provider="exa", search_exclude="bravee")
    error = await refused(runtime, WebErrorCode.WEB_PROVIDER_CONFIGURED_MISSING)
    assert error.message == (
        "WEBREACH_SEARCH_EXCLUDE names search provider 'bravee', which is not registered "
        "(did you mean 'brave'?) (registered: brave, exa)"
    )
    assert not exa.calls


# empty answers


async def test_an_empty_answer_moves_on_and_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    empty, b = ScriptedSearch("a"), found("b")
    runtime = runtime_with(empty, b, search_provider="auto")
    with caplog.at_level(logging.INFO, logger="webreach.seam"):
        assert (await search(runtime)).provider == "b"
    assert [r.getMessage() for r in caplog.records] == ["search: a found nothing; trying b"]
    assert all(r.levelno == logging.INFO for r in caplog.records)


async def test_an_answer_with_text_and_no_sources_counts() -> None:
    spoken = ScriptedSearch("a", answers={"q": SearchResult((), content="It is 42.")})
    b = found("b")
    result = await search(runtime_with(spoken, b, search_provider="a,b"))
    assert (result.provider, result.content) == ("a", "It is 42.")
    blank = ScriptedSearch("a", answers={"q": SearchResult((), content="  \n")})
    assert (await search(runtime_with(blank, b, search_provider="a,b"))).provider == "b"


async def test_the_last_providers_empty_answer_is_a_real_no_results() -> None:
    a, b = failing("a"), ScriptedSearch("b")
    result = await search(runtime_with(a, b, search_provider="a,b"))
    assert (result.provider, result.sources, result.content) == ("b", (), None)
    alone = await search(runtime_with(ScriptedSearch("a"), search_provider="a"))
    assert (alone.provider, alone.sources) == ("a", ())


async def test_an_empty_answer_beats_the_errors_after_it(caplog: pytest.LogCaptureFixture) -> None:
    runtime = runtime_with(ScriptedSearch("a"), failing("b"), search_provider="a,b")
    with caplog.at_level(logging.INFO, logger="webreach.seam"):
        result = await search(runtime)
    assert (result.provider, result.sources) == ("a", ())
    assert caplog.records[-1].getMessage() == (
        "search: no provider found anything and the others failed (b: down); "
        "returning the empty answer"
    )


async def test_a_source_the_seam_drops_does_not_count() -> None:
    """What counts is what the caller would get: only http(s) sources come back."""
    odd = ScriptedSearch("a", answers={"q": SearchResult(sources("ftp://a.example/"))})
    assert (await search(runtime_with(odd, found("b"), search_provider="a,b"))).provider == "b"


# every provider failed


async def test_every_failure_is_named_in_order() -> None:
    exa = failing("exa", "exa: authorization failed (HTTP 401)", status=401)

    async def hang(_: SearchRequest) -> SearchResult:
        raise TimeoutError

    brave = ScriptedSearch("brave", behaviour=hang)
    runtime = runtime_with(exa, brave, search_provider="exa,brave")
    error = await refused(runtime, WebErrorCode.WEB_PROVIDER_ERROR)
    assert error.message == (
        "all providers failed: exa: authorization failed (HTTP 401); brave: timed out"
    )
    assert (error.provider, error.status, error.retry_after) == ("brave", None, None)


async def test_what_every_failure_shares_is_kept() -> None:
    runtime = runtime_with(
        failing("a", "a: rate limited (HTTP 429)", status=429, retry_after=30),
        failing("b", "rate limited", status=429, retry_after=5),
        search_provider="auto",
    )
    error = await refused(runtime, WebErrorCode.WEB_PROVIDER_ERROR)
    assert error.message == "all providers failed: a: rate limited (HTTP 429); b: rate limited"
    assert (error.provider, error.status, error.retry_after) == ("b", 429, 5)


async def test_one_provider_alone_keeps_its_own_error() -> None:
    alone = runtime_with(failing("a", "a: authorization failed (HTTP 401)"), search_provider="auto")
    error = await refused(alone, WebErrorCode.WEB_PROVIDER_ERROR)
    assert error.message == "a: authorization failed (HTTP 401)"


async def test_invalid_input_stops_the_chain_at_once() -> None:
    a = failing("a", "a: the query is too long", code=WebErrorCode.WEB_INVALID_URL)
    b = found("b")
    runtime = runtime_with(a, b, search_provider="auto")
    error = await refused(runtime, WebErrorCode.WEB_INVALID_URL)
    assert error.message == "a: the query is too long"
    assert not b.calls


async def test_cancelling_the_caller_mid_chain_cancels_and_goes_no_further() -> None:
    started = asyncio.Event()

    async def slow(_: SearchRequest) -> SearchResult:
        started.set()
        await asyncio.sleep(60)
        raise AssertionError("not reached")

    a, b, c = ScriptedSearch("a"), ScriptedSearch("b", behaviour=slow), found("c")
    runtime = runtime_with(a, b, c, search_provider="auto", search_order=("a", "b", "c"))
    task = asyncio.create_task(search(runtime))
    await asyncio.wait_for(started.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert b.cancelled == ["q"] and not c.calls


# shared credentials


async def test_a_shared_key_does_not_count_in_a_bare_configuration() -> None:
    borrowed, own = BorrowedKey("openai", answers=found("x").answers), found("duckduckgo")
    result = await search(runtime_with(borrowed, own))
    assert result.provider == "duckduckgo"
    assert not borrowed.calls


async def test_a_shared_key_alone_is_no_choice_but_says_how_to_use_it() -> None:
    error = await refused(
        runtime_with(BorrowedKey("openai")), WebErrorCode.WEB_PROVIDER_UNAVAILABLE
    )
    assert "openai only with a key other programs share, so only when named" in error.message


async def test_a_provider_that_owns_its_key_counts_as_usual() -> None:
    mine = BorrowedKey("openai", borrowed=False)
    await refused(runtime_with(mine, found("duckduckgo")), WebErrorCode.WEB_PROVIDER_AMBIGUOUS)


async def test_a_shared_key_runs_when_named_or_in_auto() -> None:
    borrowed = BorrowedKey("openai", answers=found("x").answers)
    assert (await search(runtime_with(borrowed, search_provider="openai"))).provider == "openai"
    auto = runtime_with(borrowed, found("duckduckgo"), search_provider="auto", search_order=())
    assert (await search(auto)).provider == "duckduckgo"  # by id, when the order is empty
    first = runtime_with(
        borrowed, found("duckduckgo"), search_provider="auto", search_order=("openai", "*")
    )
    assert (await search(first)).provider == "openai"


# the cache


async def test_an_empty_answer_in_the_cache_still_moves_on() -> None:
    a, b = ScriptedSearch("a"), found("b")
    runtime = runtime_with(a, b, search_provider="auto", cache=MemoryStore())
    for _ in range(2):
        assert (await search(runtime)).provider == "b"
    assert (len(a.calls), len(b.calls)) == (1, 1)  # both answers came from the cache


async def test_a_failure_is_never_cached() -> None:
    outcomes = iter([WebError(WebErrorCode.WEB_PROVIDER_ERROR, "a: down"), None])

    async def flaky(_: SearchRequest) -> SearchResult:
        if (error := next(outcomes)) is not None:
            raise error
        return SearchResult(sources("https://a.example/"))

    a, b = ScriptedSearch("a", behaviour=flaky), found("b")
    runtime = runtime_with(a, b, search_provider="auto", cache=MemoryStore())
    assert (await search(runtime)).provider == "b"
    assert (await search(runtime)).provider == "a"
    assert (len(a.calls), len(b.calls)) == (2, 1)
