"""robots.txt: what a model asks for obeys it (the tools, search passages, the server's reads),
``webreach fetch`` does not, ``WEBREACH_FETCH_ROBOTS`` sets both; the file is read through the
guard, kept per origin, bounded; a missing or broken one allows."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

import pytest

from _servers import Exchange, LocalServer, respond
from cli_helpers import clean_env, run_cli
from replay_server import ReplayServer, Reply
from webreach.cache import MemoryStore
from webreach.providers.fetch.http import HttpFetchProvider
from webreach.seam import (
    FetchRequest,
    SearchResult,
    SearchSource,
    TextBody,
    WebError,
    WebRuntime,
    robots,
)
from webreach.seam import WebErrorCode as Code
from webreach.server.core.turn.events import CallFailed
from webreach.server.core.web_tools.pages import OpenedPages, run_open_call
from webreach.testing import ScriptedSearch
from webreach.tools import ToolError, ToolOptions, web_fetch_tool, web_search_tool

RULES = b"""# a site's rules
User-agent: *
Disallow: /private
Allow: /private/open
Disallow: /*.pdf$

User-agent: OtherBot
Disallow: /
"""


def text(body: bytes, status: int = 200) -> Any:
    return lambda ex: respond(ex, status, body, {"Content-Type": "text/plain"})


def site(robots_txt: Any = None) -> LocalServer:
    routes = {
        "/private/page": text(b"private page"),
        "/private/open/page": text(b"open page"),
        "/public": text(b"public page"),
        "/doc.pdf": text(b"a pdf"),
        "/no-webreach": text(b"not for webreach"),
    }
    if robots_txt is not None:
        routes["/robots.txt"] = robots_txt
    return LocalServer(routes)


def runtime(**options: Any) -> WebRuntime:
    rt = WebRuntime(**options)
    fetcher = HttpFetchProvider(allow="127.0.0.1")
    rt.register_fetch_provider(fetcher)
    rt.own(fetcher)
    return rt


def paths(server: LocalServer) -> list[str]:
    return [r.target for r in server.requests]


async def refused(rt: WebRuntime, url: str, **request: Any) -> WebError:
    with pytest.raises(WebError) as caught:
        await rt.fetch(FetchRequest(url, obey_robots=True, **request))
    return caught.value


async def test_a_disallowed_url_is_refused_naming_robots_txt_and_the_rule() -> None:
    async with site(text(RULES)) as srv, runtime() as rt:
        error = await refused(rt, srv.url("/private/page"))
        pdf = await refused(rt, srv.url("/doc.pdf"))
        open_page = await rt.fetch(FetchRequest(srv.url("/private/open/page"), obey_robots=True))
        public = await rt.fetch(FetchRequest(srv.url("/public"), obey_robots=True))
    assert error.code == Code.WEB_ROBOTS_DISALLOWED
    assert error.message.startswith(
        f"{srv.url('/robots.txt')} disallows {srv.url('/private/page')} for webreach "
        "(the rule `Disallow: /private`)"
    )
    assert "`Disallow: /*.pdf$`" in pdf.message
    assert (open_page.body, public.body) == (TextBody("open page"), TextBody("public page"))
    # robots.txt read once for the origin; the refused pages never asked for
    assert paths(srv) == ["/robots.txt", "/private/open/page", "/public"]


async def test_webreachs_own_group_wins_over_star() -> None:
    rules = b"User-agent: webreach\nDisallow: /no-webreach\n\nUser-agent: *\nDisallow: /\n"
    async with site(text(rules)) as srv, runtime() as rt:
        allowed = await rt.fetch(FetchRequest(srv.url("/public"), obey_robots=True))
        error = await refused(rt, srv.url("/no-webreach"))
    assert allowed.body == TextBody("public page")
    assert error.code == Code.WEB_ROBOTS_DISALLOWED


async def test_the_operators_user_agent_token_is_matched() -> None:
    rules = b"User-agent: AcmeBot\nDisallow: /public\n\nUser-agent: *\nDisallow:\n"
    async with (
        site(text(rules)) as srv,
        runtime(user_agent="AcmeBot/2.0 (+https://a.example)") as rt,
    ):
        error = await refused(rt, srv.url("/public"))
    assert "for AcmeBot" in error.message


@pytest.mark.parametrize(
    "answer",
    [
        None,  # no robots.txt: the server's 404
        text(b"Disallow: /public", 500),
        text(b"User-agent: *\nDisallow: /public", 403),
        text(b"\x00\xff garbage \xfe with no rules at all"),
    ],
)
async def test_a_missing_or_broken_robots_txt_allows(answer: Any) -> None:
    async with site(answer) as srv, runtime() as rt:
        result = await rt.fetch(FetchRequest(srv.url("/public"), obey_robots=True))
    assert result.body == TextBody("public page")
    assert paths(srv) == ["/robots.txt", "/public"]


async def test_a_robots_txt_that_never_answers_allows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(robots, "ROBOTS_TIMEOUT", 0.2)

    async def silent(exchange: Exchange) -> None:
        await asyncio.sleep(3600)

    async with site(silent) as srv, runtime() as rt:
        result = await rt.fetch(FetchRequest(srv.url("/public"), obey_robots=True))
    assert result.body == TextBody("public page")


async def test_only_the_first_512000_characters_are_read() -> None:
    padding = b"# " + b"x" * 600_000 + b"\n"
    rules = b"User-agent: *\n" + padding + b"Disallow: /public\n"
    async with site(text(rules)) as srv, runtime() as rt:
        result = await rt.fetch(FetchRequest(srv.url("/public"), obey_robots=True))
    assert result.body == TextBody("public page")


async def test_robots_txt_is_read_through_the_guard() -> None:
    """A robots.txt that redirects to a private address is refused there, and so allows."""
    redirect = lambda ex: respond(ex, 302, b"", {"Location": "http://10.0.0.9/robots.txt"})  # noqa: E731
    async with site(redirect) as srv, runtime() as rt:
        result = await rt.fetch(FetchRequest(srv.url("/public"), obey_robots=True))
    assert result.body == TextBody("public page")


async def test_a_fetch_nobody_modelled_does_not_read_robots_txt() -> None:
    async with site(text(RULES)) as srv, runtime() as rt:
        result = await rt.fetch(FetchRequest(srv.url("/private/page")))
    assert result.body == TextBody("private page")
    assert paths(srv) == ["/private/page"]


@pytest.mark.parametrize(
    ("setting", "obey", "refused_"), [("ignore", True, False), ("obey", False, True)]
)
async def test_the_runtime_setting_decides_for_every_fetch(
    setting: str, obey: bool, refused_: bool
) -> None:
    async with site(text(RULES)) as srv, runtime(robots=setting) as rt:
        request = FetchRequest(srv.url("/private/page"), obey_robots=obey)
        if refused_:
            with pytest.raises(WebError) as caught:
                await rt.fetch(request)
            assert caught.value.code == Code.WEB_ROBOTS_DISALLOWED
        else:
            assert (await rt.fetch(request)).body == TextBody("private page")


async def test_the_rules_are_kept_per_origin_in_the_cache_store() -> None:
    store = MemoryStore()
    async with site(text(RULES)) as srv, runtime(cache=store) as first:
        await refused(first, srv.url("/private/page"))
        async with runtime(cache=store) as second:  # a replica sharing the store
            await refused(second, srv.url("/private/page"))
            await refused(second, srv.url("/doc.pdf"))
    assert paths(srv) == ["/robots.txt"]


async def test_concurrent_pages_of_one_site_read_robots_txt_once() -> None:
    async with site(text(RULES)) as srv, runtime() as rt:
        pages = ["/public", "/private/open/page", "/public", "/doc.pdf", "/private/page"]
        results = await asyncio.gather(
            *(rt.fetch(FetchRequest(srv.url(p), obey_robots=True)) for p in pages),
            return_exceptions=True,
        )
    assert [type(r).__name__ for r in results] == ["FetchResult"] * 3 + ["WebError"] * 2
    assert paths(srv).count("/robots.txt") == 1


async def test_pages_asking_while_robots_txt_is_read_share_that_read_with_no_ttl() -> None:
    async with site(text(RULES)) as srv, runtime(cache_ttl=0) as rt:
        pages = ["/public", "/private/open/page", "/public", "/doc.pdf", "/private/page"] * 4
        results = await asyncio.gather(
            *(rt.fetch(FetchRequest(srv.url(p), obey_robots=True)) for p in pages),
            return_exceptions=True,
        )
        assert [type(r).__name__ for r in results] == (["FetchResult"] * 3 + ["WebError"] * 2) * 4
        assert paths(srv).count("/robots.txt") == 1
        await rt.fetch(FetchRequest(srv.url("/public"), obey_robots=True))
    assert paths(srv).count("/robots.txt") == 1, "with no TTL, a later page keeps the rules"


async def test_rules_kept_no_longer_are_read_again_by_a_later_page() -> None:
    async with site(text(RULES)) as srv, runtime(cache_ttl=0) as rt:
        rules = robots.RobotsRules("webreach", 0, kept=0)

        async def load(where: str) -> bytes | None:
            return None

        async def keep(where: str, value: bytes) -> None:
            pass

        await rules.check(srv.url("/public"), rt.fetch, load, keep)
        with pytest.raises(WebError) as caught:
            await rules.check(srv.url("/private/page"), rt.fetch, load, keep)
    assert caught.value.code == Code.WEB_ROBOTS_DISALLOWED
    assert paths(srv) == ["/robots.txt", "/robots.txt"]


async def test_a_robots_read_nobody_waits_for_any_more_stops() -> None:
    asked, hung_up = asyncio.Event(), asyncio.Event()

    async def silent(exchange: Exchange) -> None:
        asked.set()
        await exchange.reader.read()  # b"" once the reader closes its connection
        hung_up.set()

    async with site(silent) as srv, runtime(cache_ttl=0) as rt:
        page = asyncio.create_task(rt.fetch(FetchRequest(srv.url("/public"), obey_robots=True)))
        await asyncio.wait_for(asked.wait(), 60)
        page.cancel()
        with pytest.raises(asyncio.CancelledError):
            await page
        await asyncio.wait_for(hung_up.wait(), 60)
    assert paths(srv) == ["/robots.txt"]


async def test_a_cached_page_is_not_served_against_robots_txt() -> None:
    """A person read the page (no robots.txt); a model asking for it later is refused."""
    async with site(text(RULES)) as srv, runtime(cache=MemoryStore()) as rt:
        await rt.fetch(FetchRequest(srv.url("/private/page")))
        error = await refused(rt, srv.url("/private/page"))
    assert error.code == Code.WEB_ROBOTS_DISALLOWED


# --- the faces ----------------------------------------------------------------------------


async def test_web_fetch_obeys() -> None:
    async with site(text(RULES)) as srv, runtime() as rt:
        with pytest.raises(ToolError) as caught:
            await web_fetch_tool(rt).execute({"url": srv.url("/private/page")})
    assert caught.value.code == "WEB_ROBOTS_DISALLOWED"
    assert "robots.txt" in caught.value.message


async def test_search_passages_obey() -> None:
    async with site(text(RULES)) as srv:
        sources: Sequence[SearchSource] = (
            SearchSource(srv.url("/private/page"), "Private", "Snippet of the private page."),
        )
        search = ScriptedSearch(answers={"q": SearchResult(tuple(sources))})
        async with runtime() as rt:
            rt.register_search_provider(search)
            tool = web_search_tool(rt, ToolOptions(search_context_size="medium"))
            out = await tool.execute({"queries": ["q"]})
    assert out.data.passages == {}
    assert "/private/page" not in paths(srv)


async def test_deep_search_page_reads_obey() -> None:
    async with site(text(RULES)) as srv, runtime() as rt:
        outcome, shown, _ = await run_open_call(srv.url("/private/page"), OpenedPages(), rt, 4000)
    assert isinstance(outcome, CallFailed)
    assert "robots.txt" in shown


def robots_replay(replay: ReplayServer) -> None:
    replay.route("GET", "/robots.txt", Reply(body=RULES, headers={"content-type": "text/plain"}))
    replay.route(
        "GET", "/private/page", Reply(body=b"private", headers={"content-type": "text/plain"})
    )


@pytest.mark.slow
def test_webreach_fetch_does_not_obey_unless_told(replay: ReplayServer) -> None:
    robots_replay(replay)
    env = clean_env(WEBREACH_FETCH_ALLOW="127.0.0.1")
    done = run_cli("fetch", f"{replay.url}/private/page", "--json", env=env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["content"] == "private"
    assert [r.path for r in replay.requests] == ["/private/page"]

    told = run_cli(
        "fetch",
        f"{replay.url}/private/page",
        "--json",
        env={**env, "WEBREACH_FETCH_ROBOTS": "obey"},
    )
    assert told.returncode == 1
    assert json.loads(told.stdout)["error"]["code"] == "WEB_ROBOTS_DISALLOWED"


@pytest.mark.slow
def test_a_bad_robots_setting_is_refused() -> None:
    done = run_cli("fetch", "https://example.com/", env=clean_env(WEBREACH_FETCH_ROBOTS="maybe"))
    assert done.returncode == 2
    assert "WEBREACH_FETCH_ROBOTS" in done.stderr
