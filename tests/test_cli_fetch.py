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
    assert done.stdout.startswith(f"URL: {replay.url}/notes\nKind: html")
    assert f"[new JIT]({replay.url}/jit)" in done.stdout
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
        "url": f"{replay.url}/notes",
        "status_code": 200,
        "kind": "html",
        "content": ARTICLE,
        "truncated": False,
    }


def test_an_error_status_is_data(replay: ReplayServer) -> None:
    replay.route(
        "GET", "/gone", Reply(404, body=b"no such page", headers={"content-type": "text/plain"})
    )
    done = run_cli("fetch", f"{replay.url}/gone", env=allowed())
    assert done.returncode == 0
    assert "Status: HTTP 404" in done.stdout
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
