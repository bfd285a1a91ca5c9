"""``webreach fetch`` as a user runs it, against a page served on 127.0.0.1."""

from __future__ import annotations

import json

from cli_helpers import clean_env, run_cli
from replay_server import ReplayServer, Reply
from test_web_fetch import ARTICLE

HTML = {"content-type": "text/html; charset=utf-8"}


def allowed() -> dict[str, str]:
    return clean_env(WEBREACH_FETCH_ALLOW="127.0.0.1")


def test_prints_the_main_content_as_markdown(replay: ReplayServer) -> None:
    replay.route("GET", "/notes", Reply(body=ARTICLE.encode(), headers=HTML))
    done = run_cli("fetch", f"{replay.url}/notes", env=allowed())
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"Release notes\n{replay.url}/notes · html\n\n")
    assert f"[new JIT]({replay.url}/jit)" in done.stdout
    for model_text in ("web_content", "reference material", "web_fetch"):
        assert model_text not in done.stdout
    assert "About" not in done.stdout
    assert replay.requests[0].headers["user-agent"].startswith("webreach/")


def test_json_and_raw(replay: ReplayServer) -> None:
    replay.route("GET", "/notes", Reply(body=ARTICLE.encode(), headers=HTML))
    rendered = json.loads(run_cli("fetch", f"{replay.url}/notes", "--json", env=allowed()).stdout)
    assert rendered["kind"] == "html"
    assert rendered["status_code"] == 200
    assert rendered["title"] == "Release notes"
    assert "<p>" not in rendered["content"]
    assert rendered["truncated"] is False

    raw = run_cli("fetch", f"{replay.url}/notes", "--raw", env=allowed())
    assert raw.stdout == ARTICLE
    raw_json = json.loads(
        run_cli("fetch", f"{replay.url}/notes", "--raw", "--json", env=allowed()).stdout
    )
    assert raw_json == {
        "schema_version": 1,
        "url": f"{replay.url}/notes",
        "status_code": 200,
        "kind": "html",
        "title": None,
        "content": ARTICLE,
        "truncated": False,
        "start": 0,
        "next_start": None,
        "total_chars": len(ARTICLE),
        "provider": "auto",
        "rendered_by": "http",
        "render_reason": None,
        "cached": True,
    }


def test_an_error_status_is_data(replay: ReplayServer) -> None:
    replay.route(
        "GET", "/gone", Reply(404, body=b"no such page", headers={"content-type": "text/plain"})
    )
    done = run_cli("fetch", f"{replay.url}/gone", env=allowed())
    assert done.returncode == 0
    assert done.stdout.startswith(f"{replay.url}/gone · HTTP 404 · text\n")
    assert "no such page" in done.stdout


def test_paging_with_start(replay: ReplayServer) -> None:
    text = "".join(f"line {n}\n" for n in range(20_000))
    replay.route("GET", "/log", Reply(body=text.encode(), headers={"content-type": "text/plain"}))
    first = json.loads(run_cli("fetch", f"{replay.url}/log", "--json", env=allowed()).stdout)
    assert first["truncated"] is True
    assert len(first["content"]) <= 40_000
    second = json.loads(
        run_cli(
            "fetch",
            f"{replay.url}/log",
            "--json",
            "--start",
            str(first["next_start"]),
            env=allowed(),
        ).stdout
    )
    assert (
        first["content"] + second["content"]
        == text[: len(first["content"]) + len(second["content"])]
    )
    assert len(replay.requests) == 1  # the second piece came from the on-disk cache


def test_private_addresses_are_refused_without_touching_them(replay: ReplayServer) -> None:
    replay.route("GET", "/notes", Reply(body=b"secret", headers=HTML))
    done = run_cli("fetch", f"{replay.url}/notes", "--json", env=clean_env())
    assert done.returncode == 1
    assert json.loads(done.stdout)["error"]["code"] == "WEB_BLOCKED_URL"
    assert replay.requests == []


def test_bad_urls_exit_1_with_the_code() -> None:
    for url, code in [("ftp://example.com/x", "WEB_INVALID_URL"), ("", "INVALID_ARGUMENTS")]:
        done = run_cli("fetch", url, "--json", env=clean_env())
        assert done.returncode == 1
        assert json.loads(done.stdout)["error"]["code"] == code
    plain = run_cli("fetch", "http://user:pw@example.com/", env=clean_env())
    assert plain.returncode == 1
    assert plain.stderr.startswith("webreach: WEB_INVALID_URL:")
    assert "user:pw" not in plain.stderr


def test_fail_exits_22_on_an_http_error_as_curl_does(replay: ReplayServer) -> None:
    replay.route(
        "GET", "/gone", Reply(404, body=b"no such page", headers={"content-type": "text/plain"})
    )
    replay.route("GET", "/here", Reply(body=b"here", headers={"content-type": "text/plain"}))
    done = run_cli("fetch", f"{replay.url}/gone", "--fail", env=allowed())
    assert (done.returncode, done.stdout) == (22, "")
    assert done.stderr == f"webreach: HTTP_ERROR: HTTP 404 from {replay.url}/gone (--fail)\n"
    as_json = run_cli("fetch", f"{replay.url}/gone", "--fail", "--json", env=allowed())
    assert as_json.returncode == 22
    assert json.loads(as_json.stdout)["error"] == {
        "code": "HTTP_ERROR",
        "message": f"HTTP 404 from {replay.url}/gone (--fail)",
        "status_code": 404,
    }
    assert run_cli("fetch", f"{replay.url}/here", "--fail", env=allowed()).returncode == 0


def test_the_cut_note_says_how_to_continue_with_start(replay: ReplayServer) -> None:
    text = "".join(f"line {n}\n" for n in range(20_000))
    replay.route("GET", "/log", Reply(body=text.encode(), headers={"content-type": "text/plain"}))
    first = run_cli("fetch", f"{replay.url}/log", env=allowed())
    assert first.returncode == 0, first.stderr
    data = json.loads(run_cli("fetch", f"{replay.url}/log", "--json", env=allowed()).stdout)
    left = data["total_chars"] - data["next_start"]
    assert first.stdout.endswith(
        f"\n\n[{left:,} more characters; continue with: webreach fetch {replay.url}/log "
        f"--start {data['next_start']}]\n"
    )
    assert f"characters 0–{data['next_start']:,} of {data['total_chars']:,}" in first.stdout
    assert "web_fetch" not in first.stdout
    second = run_cli(
        "fetch", f"{replay.url}/log", "--start", str(data["next_start"]), env=allowed()
    )
    assert text[data["next_start"] :][:100] in second.stdout


def test_raw_honours_start(replay: ReplayServer) -> None:
    replay.route("GET", "/notes", Reply(body=ARTICLE.encode(), headers=HTML))
    raw = run_cli("fetch", f"{replay.url}/notes", "--raw", "--start", "10", env=allowed())
    assert raw.stdout == ARTICLE[10:]
    as_json = json.loads(
        run_cli(
            "fetch", f"{replay.url}/notes", "--raw", "--start", "10", "--json", env=allowed()
        ).stdout
    )
    assert (as_json["content"], as_json["start"], as_json["next_start"]) == (ARTICLE[10:], 10, None)
    past = run_cli("fetch", f"{replay.url}/notes", "--raw", "--start", "999999", env=allowed())
    assert past.returncode == 1
    assert "`start` 999999 is past the end of the page" in past.stderr


def test_format_tool_prints_exactly_what_the_model_gets(replay: ReplayServer) -> None:
    import asyncio
    import os

    from webreach.config import build_runtime, load_settings
    from webreach.tools import web_fetch_tool

    replay.route("GET", "/notes", Reply(body=ARTICLE.encode(), headers=HTML))
    done = run_cli("fetch", f"{replay.url}/notes", "--format", "tool", env=allowed())
    assert done.returncode == 0, done.stderr

    async def as_a_model_gets_it() -> str:
        os.environ["WEBREACH_FETCH_ALLOW"] = "127.0.0.1"
        try:
            async with build_runtime(load_settings()) as runtime:
                result = await web_fetch_tool(runtime).execute({"url": f"{replay.url}/notes"})
        finally:
            del os.environ["WEBREACH_FETCH_ALLOW"]
        return result.text

    assert done.stdout == asyncio.run(as_a_model_gets_it()) + "\n"
    assert "<web_content" in done.stdout


def test_no_cache_fetches_again_and_json_says_where_it_came_from(replay: ReplayServer) -> None:
    replay.route("GET", "/notes", Reply(body=ARTICLE.encode(), headers=HTML))
    url = f"{replay.url}/notes"
    runs = [
        json.loads(run_cli("fetch", url, "--json", *extra, env=allowed()).stdout)["cached"]
        for extra in ([], [], ["--no-cache"])
    ]
    assert runs == [False, True, False]
    assert len(replay.requests) == 2


def test_fetch_turned_off_is_refused(replay: ReplayServer) -> None:
    env = clean_env(WEBREACH_FETCH_ALLOW="127.0.0.1", WEBREACH_FETCH_ENABLED="false")
    done = run_cli("fetch", f"{replay.url}/notes", env=env)
    assert done.returncode == 2
    assert "web fetch is turned off (WEBREACH_FETCH_ENABLED=false)" in done.stderr
    assert replay.requests == []


def test_json_and_format_must_agree() -> None:
    done = run_cli("fetch", "https://example.com/", "--json", "--format", "tool", env=clean_env())
    assert done.returncode == 2
    assert "--json and --format tool disagree" in done.stdout + done.stderr
