"""``webreach search`` as a user runs it: output, --json, exit codes, and the live status line."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

from cli_helpers import clean_env, ddgs_calls, fake_ddgs_env, run_cli
from replay_server import ReplayServer, Reply
from test_provider_exa import EXA_RESPONSE

CANARY = "exa-canary-key-55aa"

ROWS = {
    "python 3.13": [
        {"title": "Python 3.13", "href": "https://www.python.org/3.13", "body": "Newest release."},
        {"title": "Real Python", "href": "https://realpython.com/313", "body": "What's new."},
    ],
    "asyncio taskgroup": [
        {
            "title": "TaskGroup",
            "href": "https://docs.python.org/tg",
            "body": "Structured concurrency.",
        },
        {"title": "Python 3.13", "href": "https://www.python.org/3.13", "body": "duplicate URL"},
    ],
}


def exa_env(replay: ReplayServer, **extra: str) -> dict[str, str]:
    return clean_env(
        WEBREACH_SEARCH_PROVIDER="exa",
        EXA_API_KEY=CANARY,
        EXA_BASE_URL=replay.url,
        **extra,
    )


def test_keyless_default_search_prints_numbered_sources(tmp_path: Path) -> None:
    """The README's first command, with ``ddgs`` replaced at the library boundary."""
    done = run_cli("search", "python 3.13", "asyncio taskgroup", env=fake_ddgs_env(tmp_path, ROWS))
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    out = done.stdout
    assert out.startswith('3 sources for "python 3.13" · "asyncio taskgroup" (duckduckgo)\n')
    assert "[1] Python 3.13\n    https://www.python.org/3.13\n    Newest release.\n" in out
    assert "[2] TaskGroup\n    https://docs.python.org/tg" in out
    assert "[3] Real Python" in out
    # for a person: no fence, no notice and no instructions meant for a model
    for model_text in ("web_content", "reference material", "Cite the URLs"):
        assert model_text not in out
    assert sorted(call["query"] for call in ddgs_calls(tmp_path)) == [
        "asyncio taskgroup",
        "python 3.13",
    ]
    assert {call["max_results"] for call in ddgs_calls(tmp_path)} == {8}


def test_json_output(tmp_path: Path) -> None:
    done = run_cli(
        "search", "python 3.13", "--json", "--max-results", "1", env=fake_ddgs_env(tmp_path, ROWS)
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "schema_version": 1,
        "queries": ["python 3.13"],
        "content": None,
        "sources": [
            {
                "url": "https://www.python.org/3.13",
                "title": "Python 3.13",
                "snippet": "Newest release.",
                "published_at": None,
            }
        ],
        "truncated": False,
        "provider": "duckduckgo",
        "filtered_by_provider": [],
        "filtered_after": [],
        "unfiltered": [],
        "citations": [],
        "related": [],
        "provider_queries": [],
        "cached": False,
    }


def test_exa_through_the_command_line(replay: ReplayServer) -> None:
    replay.route("POST", "/search", Reply(json=EXA_RESPONSE))
    done = run_cli("search", "python 3.13", "--json", env=exa_env(replay))
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["provider"] == "exa"
    assert data["sources"][0]["published_at"] == "2024-10-07T00:00:00.000Z"
    assert replay.requests[0].json()["numResults"] == 8


def test_provider_flag_selects_the_provider(replay: ReplayServer) -> None:
    replay.route("POST", "/search", Reply(json=EXA_RESPONSE))
    env = clean_env(EXA_API_KEY=CANARY, EXA_BASE_URL=replay.url)
    ambiguous = run_cli("search", "q", env=env)
    assert ambiguous.returncode == 1
    assert "WEB_PROVIDER_AMBIGUOUS" in ambiguous.stderr
    assert "WEBREACH_SEARCH_PROVIDER" in ambiguous.stderr
    assert "or pass --provider ID" in ambiguous.stderr
    chosen = run_cli("search", "q", "--provider", "exa", env=env)
    assert chosen.returncode == 0, chosen.stderr


def test_provider_failure_exits_1_without_leaking_the_key(replay: ReplayServer) -> None:
    replay.route("POST", "/search", Reply(401, json={"error": f"invalid key {CANARY}"}))
    done = run_cli("search", "q", env=exa_env(replay))
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.strip() == (
        "webreach: WEB_PROVIDER_ERROR: exa: authorization failed (HTTP 401); check the API key"
    )
    as_json = run_cli("search", "q", "--json", env=exa_env(replay))
    assert as_json.returncode == 1
    assert json.loads(as_json.stdout)["error"]["code"] == "WEB_PROVIDER_ERROR"
    for output in (done.stdout, done.stderr, as_json.stdout, as_json.stderr):
        assert CANARY not in output


def test_a_rate_limited_provider_says_when_to_retry(replay: ReplayServer) -> None:
    replay.route("POST", "/search", Reply(429, json={}, headers={"retry-after": "30"}))
    done = run_cli("search", "q", env=exa_env(replay))
    assert done.returncode == 1
    assert "rate limited (HTTP 429), retry after 30 s" in done.stderr
    as_json = run_cli("search", "q", "--json", env=exa_env(replay))
    assert json.loads(as_json.stdout)["error"]["retry_after"] == 30.0


def test_bad_queries_exit_1_and_reach_no_provider(replay: ReplayServer) -> None:
    for queries in (["a", "b", "c", "d", "e"], [""], ["ok", "  "]):
        done = run_cli("search", *queries, "--json", env=exa_env(replay))
        assert done.returncode == 1
        assert json.loads(done.stdout)["error"]["code"] == "INVALID_ARGUMENTS"
    assert replay.requests == []


def test_usage_errors_exit_2() -> None:
    assert run_cli("search", env=clean_env()).returncode == 2
    assert run_cli("search", "q", "--max-results", "0", env=clean_env()).returncode == 2
    assert run_cli("frobnicate", env=clean_env()).returncode == 2
    bad_setting = run_cli("search", "q", "--json", env=clean_env(WEBREACH_SEARCH_MAX_RESULTS="x"))
    assert bad_setting.returncode == 2
    assert "WEBREACH_SEARCH_MAX_RESULTS" in json.loads(bad_setting.stdout)["error"]["message"]


def test_help_lists_the_commands() -> None:
    done = run_cli("--help", env=clean_env())
    assert done.returncode == 0
    assert "search" in done.stdout


def test_status_line_goes_to_a_terminal_only(tmp_path: Path) -> None:
    env = fake_ddgs_env(tmp_path, ROWS, FAKE_DDGS_DELAY="0.5", TERM="xterm")
    primary, secondary = pty.openpty()
    with subprocess.Popen(
        [sys.executable, "-m", "webreach", "search", "python 3.13", "asyncio taskgroup"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=secondary,
        text=True,
    ) as process:
        os.close(secondary)
        stdout, _ = process.communicate(timeout=60)
    terminal = b""
    while True:
        try:
            chunk = os.read(primary, 65536)
        except OSError:
            break
        if not chunk:
            break
        terminal += chunk
    os.close(primary)
    assert process.returncode == 0
    assert "Searching the web: python 3.13" in terminal.decode(errors="replace")
    assert "Searching the web" not in stdout
    assert stdout.startswith('3 sources for "python 3.13" · "asyncio taskgroup"')


def test_the_status_line_counts_the_seconds_it_has_waited(tmp_path: Path) -> None:
    """A slow search counts on, so it does not look stuck: the fake search takes at least 3 s,
    and the line is drawn many times a second, so it shows 0 s and then 1 s."""
    env = fake_ddgs_env(tmp_path, ROWS, FAKE_DDGS_DELAY="3", TERM="xterm")
    primary, secondary = pty.openpty()
    with subprocess.Popen(
        [sys.executable, "-m", "webreach", "search", "python 3.13"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=secondary,
        text=True,
    ) as process:
        os.close(secondary)
        stdout, _ = process.communicate(timeout=60)
    terminal = b""
    while True:
        try:
            chunk = os.read(primary, 65536)
        except OSError:
            break
        if not chunk:
            break
        terminal += chunk
    os.close(primary)
    shown = terminal.decode(errors="replace")
    assert process.returncode == 0
    assert "Searching the web: python 3.13 … 0 s" in shown
    assert "Searching the web: python 3.13 … 1 s" in shown
    assert stdout.startswith('2 sources for "python 3.13" (duckduckgo)\n')


def test_format_tool_prints_exactly_what_the_model_gets(replay: ReplayServer) -> None:
    from webreach.seam import SearchSource
    from webreach.tools.search.tool import SearchToolResult, format_search

    replay.route("POST", "/search", Reply(json=EXA_RESPONSE))
    tool = run_cli("search", "python 3.13", "--format", "tool", env=exa_env(replay))
    assert tool.returncode == 0, tool.stderr
    data = json.loads(run_cli("search", "python 3.13", "--json", env=exa_env(replay)).stdout)
    result = SearchToolResult(
        queries=tuple(data["queries"]),
        content=data["content"],
        sources=tuple(SearchSource(**source) for source in data["sources"]),
        truncated=data["truncated"],
        provider=data["provider"],
    )
    assert tool.stdout == format_search(result) + "\n"
    assert "<web_content" in tool.stdout


def test_json_says_when_the_result_came_from_the_cache(tmp_path: Path) -> None:
    env = fake_ddgs_env(tmp_path, ROWS)
    first = json.loads(run_cli("search", "python 3.13", "--json", env=env).stdout)
    again = json.loads(run_cli("search", "python 3.13", "--json", env=env).stdout)
    fresh = json.loads(run_cli("search", "python 3.13", "--json", "--no-cache", env=env).stdout)
    assert (first["cached"], again["cached"], fresh["cached"]) == (False, True, False)
    assert len(ddgs_calls(tmp_path)) == 2
    assert run_cli("search", "python 3.13", env=env).stdout.startswith(
        '2 sources for "python 3.13" (duckduckgo, cached)'
    )


def test_an_unknown_provider_flag_names_the_flag_and_the_valid_ids() -> None:
    done = run_cli("search", "q", "--provider", "nope", env=clean_env())
    assert done.returncode == 2
    assert done.stderr.startswith("webreach: USAGE: --provider nope: there is no search provider")
    assert "duckduckgo, exa, gemini, jina" in done.stderr
    assert "WEBREACH_SEARCH_PROVIDER" not in done.stderr
    as_json = run_cli("search", "q", "--provider", "nope", "--json", env=clean_env())
    assert json.loads(as_json.stdout)["error"]["code"] == "USAGE"


def test_a_provider_without_its_key_names_the_key() -> None:
    done = run_cli("search", "q", "--provider", "exa", env=clean_env())
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "webreach: USAGE: --provider exa: exa is not configured; set EXA_API_KEY"
    )
    by_variable = run_cli("search", "q", env=clean_env(WEBREACH_SEARCH_PROVIDER="searxng"))
    assert by_variable.returncode == 2
    assert "WEBREACH_SEARCH_PROVIDER=searxng: searxng is not configured; set SEARXNG_BASE_URL" in (
        by_variable.stderr
    )


def test_search_turned_off_is_refused_before_any_provider(tmp_path: Path) -> None:
    done = run_cli("search", "q", env=fake_ddgs_env(tmp_path, ROWS, WEBREACH_SEARCH_ENABLED="0"))
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "webreach: NOT_ENABLED: web search is turned off (WEBREACH_SEARCH_ENABLED=false); "
        "set it to true to search from here"
    )
    assert ddgs_calls(tmp_path) == []


def test_offline_duckduckgo_says_the_engines_could_not_be_reached(tmp_path: Path) -> None:
    offline = (
        "DNSError: DNSError('error sending request for url (https://www.startpage.com/sp/"
        "search) > error resolving DNS > DNS error: no records found for Query { name: "
        'Name("www.startpage.com."), query_type: A }\')'
    )
    env = fake_ddgs_env(tmp_path, {"python 3.13": offline})
    done = run_cli("search", "python 3.13", env=env)
    assert done.returncode == 1
    next_step = (
        "DuckDuckGo, the keyless default, needs the internet; to search through another provider "
        "set its key and name it, e.g. `EXA_API_KEY=… webreach search --provider exa QUERY` "
        "(`webreach config` lists every provider and the key it needs)"
    )
    assert done.stderr == (
        "webreach: WEB_PROVIDER_ERROR: duckduckgo: the search engines could not be reached "
        f"(DNS lookup failed; is this machine offline?)\nwebreach: hint: {next_step}\n"
    )
    as_json = run_cli("search", "python 3.13", "--json", env=env)
    assert as_json.returncode == 1
    error = {
        "code": "WEB_PROVIDER_ERROR",
        "message": "duckduckgo: the search engines could not be reached (DNS lookup failed; "
        "is this machine offline?)",
        "hint": next_step,
    }
    # the same layout as a result: indented, versioned
    expected = {"schema_version": 1, "error": error}
    assert as_json.stdout == json.dumps(expected, ensure_ascii=False, indent=2) + "\n"


def test_a_failing_provider_names_another_to_try(replay: ReplayServer) -> None:
    replay.route("POST", "/search", Reply(500, json={}))
    done = run_cli("search", "q", env=exa_env(replay))
    assert done.returncode == 1
    first, hint = done.stderr.splitlines()
    assert first.startswith("webreach: WEB_PROVIDER_ERROR: exa: ")
    assert hint == (
        "webreach: hint: try another provider with --provider ID, or a list tried in order "
        "(--provider exa,duckduckgo); `webreach config` lists every provider and the key it needs"
    )


def test_an_invalid_query_has_no_hint_and_its_json_is_versioned(replay: ReplayServer) -> None:
    done = run_cli("search", "", env=exa_env(replay))
    assert done.returncode == 1
    assert len(done.stderr.splitlines()) == 1
    as_json = json.loads(run_cli("search", "", "--json", env=exa_env(replay)).stdout)
    assert as_json["schema_version"] == 1
    assert set(as_json["error"]) == {"code", "message"}


def test_text_from_the_web_cannot_drive_the_terminal(tmp_path: Path) -> None:
    rows = {
        "q": [
            {
                "title": "\x1b]0;owned\x07Title",
                "href": "https://a.example/",
                "body": "red \x1b[31malert\x1b[0m\r\x08",
            }
        ]
    }
    done = run_cli("search", "q", env=fake_ddgs_env(tmp_path, rows))
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout and "\x07" not in done.stdout and "\r" not in done.stdout
    assert "[1] ]0;ownedTitle" in done.stdout


def test_help_is_clean_and_answers_to_h() -> None:
    for command in ([], ["search"], ["fetch"], ["config"], ["mcp"], ["serve"]):
        short = run_cli(*command, "-h", env=clean_env())
        assert short.returncode == 0, short.stderr
        assert short.stdout == run_cli(*command, "--help", env=clean_env()).stdout
        assert short.stdout.startswith(f"Usage: webreach {' '.join(command)}".rstrip())
        for noise in ("{", "<list", "<str>", "<int", "x>=", "[default"):
            assert noise not in short.stdout, (command, noise)
        cut = [line for line in short.stdout.splitlines()[1:] if line.endswith("...")]
        assert cut == [], command
    root = run_cli("-h", env=clean_env()).stdout
    assert "webreach config" in root  # where the settings are listed
    commands = root.split("Commands:")[1].split("\n\n")[0]
    assert [line.split()[0] for line in commands.strip().splitlines()] == [
        "search",
        "fetch",
        "config",
        "mcp",
        "serve",
    ]
    assert (
        "Usage: webreach search [OPTIONS] QUERY..."
        in run_cli("search", "-h", env=clean_env()).stdout
    )
