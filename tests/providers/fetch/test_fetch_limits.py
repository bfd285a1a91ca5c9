"""The limits that cut a fetched page are settings, and every note about a cut page names the
one that cut it: ``WEBREACH_FETCH_MAX_BODY_CHARS`` for decoded characters,
``WEBREACH_FETCH_MAX_BYTES`` for body bytes."""

from __future__ import annotations

import gzip
import json

from _servers import LocalServer, respond
from cli_helpers import clean_env, run_cli
from replay_server import ReplayServer, Reply
from webreach.providers.fetch.http import HttpFetchProvider
from webreach.seam import FetchRequest, FetchResult, TextBody
from webreach.seam.cache import decode_fetch, encode
from webreach.tools.fetch import format_fetch, page_piece, render_body

FIVE_MB = ("x" * 99 + "\n").encode() * 50_000
TEXT = {"content-type": "text/plain; charset=utf-8"}


def _env(**extra: str) -> dict[str, str]:
    return clean_env(WEBREACH_FETCH_ALLOW="127.0.0.1", WEBREACH_CACHE="none", **extra)


def test_a_five_megabyte_page_names_the_character_limit(replay: ReplayServer) -> None:
    replay.route("GET", "/big", Reply(body=FIVE_MB, headers=TEXT))
    shown = run_cli("fetch", f"{replay.url}/big", env=_env())
    assert shown.returncode == 0, shown.stderr
    assert "larger than the fetch limit of 2,000,000 characters" in shown.stdout
    assert "(WEBREACH_FETCH_MAX_BODY_CHARS)" in shown.stdout
    assert "WEBREACH_FETCH_MAX_BYTES" not in shown.stdout
    raw = run_cli("fetch", f"{replay.url}/big", "--raw", env=_env())
    assert len(raw.stdout) == 2_000_000
    assert "WEBREACH_FETCH_MAX_BODY_CHARS" in raw.stderr


def test_raising_the_character_limit_reads_the_whole_page(replay: ReplayServer) -> None:
    replay.route("GET", "/big", Reply(body=FIVE_MB, headers=TEXT))
    env = _env(WEBREACH_FETCH_MAX_BODY_CHARS="6000000")
    raw = json.loads(run_cli("fetch", f"{replay.url}/big", "--raw", "--json", env=env).stdout)
    assert raw["truncated"] is False
    assert raw["total_chars"] == len(FIVE_MB)


def test_a_cut_by_bytes_names_the_byte_limit(replay: ReplayServer) -> None:
    replay.route("GET", "/big", Reply(body=FIVE_MB, headers=TEXT))
    packed = {**TEXT, "content-encoding": "gzip"}
    replay.route("GET", "/packed", Reply(body=gzip.compress(FIVE_MB), headers=packed))
    env = _env(WEBREACH_FETCH_MAX_BYTES="1000000")
    declared = run_cli("fetch", f"{replay.url}/big", env=env)
    assert declared.returncode == 1
    assert "the limit is 1,000,000 bytes (WEBREACH_FETCH_MAX_BYTES)" in declared.stderr
    shown = run_cli("fetch", f"{replay.url}/packed", "--format", "tool", env=env)
    assert shown.returncode == 0, shown.stderr
    assert "larger than the fetch limit of 1,000,000 bytes (WEBREACH_FETCH_MAX_BYTES)" in (
        shown.stdout
    )
    assert "MAX_BODY_CHARS" not in shown.stdout


async def _fetch(provider: HttpFetchProvider, url: str) -> FetchResult:
    try:
        return await provider.fetch(FetchRequest(url=url))
    finally:
        await provider.aclose()


async def test_the_library_result_says_which_limit_cut_it() -> None:
    body = b"y" * 5000
    packed = {"Content-Type": "text/plain", "Content-Encoding": "gzip"}
    routes = {"/": lambda ex: respond(ex, 200, gzip.compress(body), packed)}
    async with LocalServer(routes) as srv:
        by_chars = await _fetch(HttpFetchProvider(max_chars=100, allow="127.0.0.1"), srv.url("/"))
        by_bytes = await _fetch(
            HttpFetchProvider(max_bytes=1000, max_chars=100_000, allow="127.0.0.1"), srv.url("/")
        )
        whole = await _fetch(HttpFetchProvider(allow="127.0.0.1"), srv.url("/"))
    assert by_chars.body == TextBody("y" * 100)
    assert by_chars.truncated_by == "100 characters (WEBREACH_FETCH_MAX_BODY_CHARS)"
    assert by_bytes.body == TextBody("y" * 1000)
    assert by_bytes.truncated_by == "1,000 bytes (WEBREACH_FETCH_MAX_BYTES)"
    assert (whole.truncated, whole.truncated_by) == (False, None)
    assert decode_fetch(encode(by_chars)).truncated_by == by_chars.truncated_by
    rendered = render_body(by_bytes)
    text = format_fetch(page_piece(by_bytes, rendered, 0, 40_000))
    assert "larger than the fetch limit of 1,000 bytes (WEBREACH_FETCH_MAX_BYTES)" in text
