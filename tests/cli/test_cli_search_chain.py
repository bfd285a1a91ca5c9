"""``webreach search`` and ``webreach config`` with the automatic chain, as a person runs them:
two keyed providers on local replay servers, exclusions, and the one-line error when all fail."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cli_helpers import clean_env, ddgs_calls, fake_ddgs_env, run_cli
from replay_server import ReplayServer, Reply
from test_provider_brave import BRAVE_RESPONSE
from test_provider_brave import PATH as BRAVE_PATH
from test_provider_exa import EXA_RESPONSE

EXA_KEY = "exa-canary-key-chain-1"
BRAVE_KEY = "brave-canary-key-chain-2"
EXA_401 = Reply(401, json={"error": f"invalid key {EXA_KEY}"})


@pytest.fixture
def brave() -> Iterator[ReplayServer]:
    with ReplayServer() as server:
        yield server


def keys(
    exa: ReplayServer, brave: ReplayServer, env: dict[str, str] | None = None, **extra: str
) -> dict[str, str]:
    """Exa and Brave pointed at their replay servers; duckduckgo left out unless asked."""
    base = clean_env() if env is None else env
    return (
        base
        | {
            "EXA_API_KEY": EXA_KEY,
            "EXA_BASE_URL": exa.url,
            "BRAVE_API_KEY": BRAVE_KEY,
            "BRAVE_BASE_URL": brave.url,
            "WEBREACH_SEARCH_PROVIDER": "auto",
            "WEBREACH_SEARCH_EXCLUDE": "duckduckgo",
            "WEBREACH_CACHE": "none",
        }
        | extra
    )


def leaks(*outputs: str) -> bool:
    return any(key in output for output in outputs for key in (EXA_KEY, BRAVE_KEY))


def test_auto_moves_past_a_failing_provider(replay: ReplayServer, brave: ReplayServer) -> None:
    replay.route("POST", "/search", EXA_401)
    brave.route("GET", BRAVE_PATH, Reply(json=BRAVE_RESPONSE))
    done = run_cli("search", "python 3.13", env=keys(replay, brave))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith('3 sources for "python 3.13" (brave)')
    assert (len(replay.requests), len(brave.requests)) == (
        1,
        1,
    )  # exa first, as the auto chain orders keyed providers
    as_json = run_cli("search", "python 3.13", "--json", env=keys(replay, brave))
    assert json.loads(as_json.stdout)["provider"] == "brave"
    assert not leaks(done.stdout, done.stderr, as_json.stdout, as_json.stderr)


def test_when_all_fail_one_line_names_each_reason(
    replay: ReplayServer, brave: ReplayServer
) -> None:
    replay.route("POST", "/search", EXA_401)
    brave.route("GET", BRAVE_PATH, Reply(429, json={}, headers={"retry-after": "7"}))
    done = run_cli("search", "q", env=keys(replay, brave))
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        "webreach: WEB_PROVIDER_ERROR: all providers failed: exa: authorization failed "
        "(HTTP 401), check the API key; brave: rate limited (HTTP 429), retry after 7 s",
        "webreach: hint: try another provider with --provider ID, or a list tried in order "
        "(--provider brave,duckduckgo); `webreach config` lists every provider and the key it "
        "needs",
    ]
    as_json = run_cli("search", "q", "--json", env=keys(replay, brave))
    assert as_json.returncode == 1
    error = json.loads(as_json.stdout)["error"]
    assert error["code"] == "WEB_PROVIDER_ERROR"
    assert error["message"].startswith("all providers failed: exa: authorization failed")
    assert not leaks(done.stdout, done.stderr, as_json.stdout, as_json.stderr)


def test_an_empty_answer_moves_on_to_the_last_provider(
    tmp_path: Path, replay: ReplayServer, brave: ReplayServer
) -> None:
    """exa finds nothing, brave fails, the keyless duckduckgo (offline stand-in) answers."""
    replay.route("POST", "/search", Reply(json={"requestId": "r1", "results": []}))
    brave.route("GET", BRAVE_PATH, Reply(503, json={}))
    rows = {"q": [{"title": "Found", "href": "https://found.example/", "body": "it"}]}
    env = keys(replay, brave, fake_ddgs_env(tmp_path, rows), WEBREACH_SEARCH_EXCLUDE="")
    done = run_cli("search", "q", "--json", env=env)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert (data["provider"], [s["url"] for s in data["sources"]]) == (
        "duckduckgo",
        ["https://found.example/"],
    )
    assert (len(replay.requests), len(brave.requests), len(ddgs_calls(tmp_path))) == (1, 1, 1)


def test_the_last_providers_empty_answer_is_no_results(
    replay: ReplayServer, brave: ReplayServer
) -> None:
    replay.route("POST", "/search", EXA_401)
    brave.route("GET", BRAVE_PATH, Reply(json={"type": "search", "web": {"results": []}}))
    done = run_cli("search", "q", env=keys(replay, brave))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith('No results for "q"')


def test_an_explicit_list_loses_its_excluded_ids(replay: ReplayServer, brave: ReplayServer) -> None:
    brave.route("GET", BRAVE_PATH, Reply(json=BRAVE_RESPONSE))
    env = keys(replay, brave, WEBREACH_SEARCH_PROVIDER="exa,brave", WEBREACH_SEARCH_EXCLUDE="exa")
    done = run_cli("search", "q", env=env)
    assert done.returncode == 0, done.stderr
    assert "(brave)" in done.stdout.splitlines()[0]
    assert replay.requests == []


def test_the_provider_flag_takes_auto(replay: ReplayServer, brave: ReplayServer) -> None:
    replay.route("POST", "/search", Reply(json=EXA_RESPONSE))
    env = keys(replay, brave, WEBREACH_SEARCH_PROVIDER="brave")
    done = run_cli("search", "q", "--provider", "auto", "--json", env=env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["provider"] == "exa"
    assert brave.requests == []


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (
            {"WEBREACH_SEARCH_EXCLUDE": "bravo"},
            "WEBREACH_SEARCH_EXCLUDE=bravo: there is no search provider 'bravo' "
            "(did you mean 'brave'?) (valid: anthropic, brave, deepseek, duckduckgo, exa, "
            "gemini, jina, kagi, kimi, openai, parallel, perplexity, searxng, synthetic, tavily, "
            "zai)",
        ),
        (
            {"WEBREACH_SEARCH_PROVIDER": "exa,auto"},
            "WEBREACH_SEARCH_PROVIDER=exa,auto: 'auto' stands alone (every available provider "
            "in order); to leave providers out of it, set WEBREACH_SEARCH_EXCLUDE",
        ),
        (
            {"WEBREACH_SEARCH_PROVIDER": "exa,brave", "WEBREACH_SEARCH_EXCLUDE": "brave,exa"},
            "WEBREACH_SEARCH_EXCLUDE=brave,exa excludes every provider of "
            "WEBREACH_SEARCH_PROVIDER=exa,brave",
        ),
        (
            {"WEBREACH_SEARCH_EXCLUDE": "exa,exa"},
            "WEBREACH_SEARCH_EXCLUDE 'exa,exa' names a provider twice",
        ),
    ],
    ids=["unknown-exclusion", "auto-in-a-list", "all-excluded", "twice"],
)
def test_a_selection_that_cannot_be_stops_at_startup(
    replay: ReplayServer, brave: ReplayServer, settings: dict[str, str], message: str
) -> None:
    env = keys(replay, brave, **settings)
    for command in (["search", "q"], ["fetch", "https://example.com/"], ["config"]):
        done = run_cli(*command, env=env)
        assert done.returncode == 2, (command, done.stderr)
        assert done.stderr.splitlines() == [f"webreach: INVALID_SETTING: {message}"], command
    as_json = run_cli("search", "q", "--json", env=env)
    assert json.loads(as_json.stdout)["error"] == {"code": "INVALID_SETTING", "message": message}
    assert replay.requests == [] and brave.requests == []


def test_auto_with_everything_excluded_is_unavailable(
    replay: ReplayServer, brave: ReplayServer
) -> None:
    env = keys(replay, brave, WEBREACH_SEARCH_EXCLUDE="exa,brave,duckduckgo")
    done = run_cli("search", "q", env=env)
    assert done.returncode == 1
    line, hint = done.stderr.splitlines()
    assert hint.startswith("webreach: hint: ")
    assert line.startswith(
        "webreach: WEB_PROVIDER_UNAVAILABLE: no search provider is available for "
        "WEBREACH_SEARCH_PROVIDER=auto ("
    )
    assert "excluded by WEBREACH_SEARCH_EXCLUDE: exa, brave, duckduckgo" in line


# webreach config


def config(env: dict[str, str]) -> dict[str, Any]:
    done = run_cli("config", "--json", env=env)
    assert done.returncode == 0, done.stderr
    search: dict[str, Any] = json.loads(done.stdout)["capabilities"]["search"]
    return search


def test_config_shows_the_auto_chain(replay: ReplayServer, brave: ReplayServer) -> None:
    env = keys(replay, brave, SEARXNG_BASE_URL=replay.url, WEBREACH_SEARCH_EXCLUDE="")
    assert config(env) == {
        "variable": "WEBREACH_SEARCH_PROVIDER",
        "configured": ["auto"],
        "exclude": [],
        "uses": ["exa", "brave", "searxng", "duckduckgo"],
        "problem": None,
    }
    env["WEBREACH_SEARCH_EXCLUDE"] = "searxng,duckduckgo"
    assert config(env)["uses"] == ["exa", "brave"]
    done = run_cli("config", env=env)
    assert done.returncode == 0, done.stderr
    line = next(line for line in done.stdout.splitlines() if line.split()[:1] == ["search"])
    assert " ".join(line.split()) == (
        "search exa → brave every available provider in order, chosen by "
        "WEBREACH_SEARCH_PROVIDER; excluded: searxng, duckduckgo"
    )
    assert replay.requests == [] and brave.requests == []  # describing never searches


def test_config_shows_a_list_and_a_bare_choice_minus_exclusions(
    replay: ReplayServer, brave: ReplayServer
) -> None:
    env = keys(replay, brave, WEBREACH_SEARCH_PROVIDER="exa,brave", WEBREACH_SEARCH_EXCLUDE="exa")
    shown = config(env)
    assert (shown["uses"], shown["exclude"], shown["problem"]) == (["brave"], ["exa"], None)
    env = clean_env(EXA_API_KEY=EXA_KEY)
    assert config(env)["problem"] == (
        "several search providers are available (duckduckgo, exa); "
        "choose one with WEBREACH_SEARCH_PROVIDER"
    )
    shown = config(env | {"WEBREACH_SEARCH_EXCLUDE": "duckduckgo"})
    assert (shown["uses"], shown["problem"]) == (["exa"], None)
    everything = config(
        env | {"WEBREACH_SEARCH_PROVIDER": "auto", "WEBREACH_SEARCH_EXCLUDE": "exa,duckduckgo"}
    )
    assert (everything["uses"], everything["problem"]) == (
        [],
        "WEBREACH_SEARCH_PROVIDER=auto: no search provider is available "
        "(excluded: exa, duckduckgo)",
    )
