"""``webreach search --recency/--site/--exclude-site/--country/--language``: the filters reach
the provider's search, the output says which applied and who applied them, and a bad value is
one line with exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import ddgs_calls, fake_ddgs_env, run_cli
from replay_server import ReplayServer, Reply
from test_cli_search import ROWS, exa_env
from test_provider_exa import EXA_RESPONSE

SITE_ROWS = {**ROWS, "python 3.13 site:python.org": ROWS["python 3.13"]}
"""DuckDuckGo gets the site as a ``site:`` operator, a hint its engines may ignore; these rows
ignore it, so the seam's own check must drop the other site."""

FILTERS = (
    "--recency", "week",
    "--site", "python.org", "--site", "realpython.com",
    "--exclude-site", "docs.python.org",
    "--country", "DE", "--language", "de",
)  # fmt: skip


def test_json_output_carries_the_filter_fates(replay: ReplayServer) -> None:
    replay.route("POST", "/search", Reply(json=EXA_RESPONSE))
    done = run_cli("search", "python 3.13", "--json", *FILTERS, env=exa_env(replay))
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    applied = data["filtered_by_provider"] + data["filtered_after"] + data["unfiltered"]
    assert sorted(applied) == sorted(
        ["recency", "include_domains", "exclude_domains", "country", "language"]
    )
    # Exa takes the domains, the date and the country in its request; it has no language filter
    assert sorted(data["filtered_by_provider"]) == sorted(
        ["recency", "include_domains", "exclude_domains", "country"]
    )
    assert data["unfiltered"] == ["language"]
    (request,) = replay.requests
    sent = request.json()
    assert sent["includeDomains"] == ["python.org", "realpython.com"]
    assert sent["excludeDomains"] == ["docs.python.org"]


def test_text_output_says_which_filters_applied(tmp_path: Path) -> None:
    done = run_cli(
        "search", "python 3.13", "--site", "python.org", env=fake_ddgs_env(tmp_path, SITE_ROWS)
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith('1 source for "python 3.13"')
    assert lines[1].startswith("Filtered: site python.org (")
    assert "realpython.com" not in done.stdout
    assert len(ddgs_calls(tmp_path)) == 1


def test_without_filters_the_text_has_no_filter_line(tmp_path: Path) -> None:
    done = run_cli("search", "python 3.13", env=fake_ddgs_env(tmp_path, ROWS))
    assert done.returncode == 0, done.stderr
    assert "Filtered" not in done.stdout


def test_the_tool_format_shows_the_filter_line(tmp_path: Path) -> None:
    done = run_cli(
        "search",
        "python 3.13",
        "--format",
        "tool",
        "--exclude-site",
        "realpython.com",
        env=fake_ddgs_env(tmp_path, ROWS),
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1].startswith("Filtered: not site realpython.com (")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (("--recency", "hour"), "--recency: must be one of day, week, month, year, not 'hour'"),
        (("--site", "not a site"), "--site: 'not a site' is not a domain name"),
        (("--exclude-site", ""), "--exclude-site: must hold non-empty domain names"),
        (("--country", "Germany"), "--country: must be an ISO 3166-1 alpha-2 code like DE"),
        (("--language", "deu"), "--language: must be an ISO 639-1 code like de, not 'deu'"),
    ],
)
def test_a_bad_filter_is_one_line_and_exit_2(
    tmp_path: Path, options: tuple[str, ...], message: str
) -> None:
    done = run_cli("search", "python", *options, env=fake_ddgs_env(tmp_path, ROWS))
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith(f"webreach: USAGE: {message}")
    assert done.stderr.count("\n") == 1
    assert ddgs_calls(tmp_path) == []


def test_a_bad_filter_with_json_is_the_json_error(tmp_path: Path) -> None:
    done = run_cli(
        "search", "python", "--json", "--country", "xx1", env=fake_ddgs_env(tmp_path, ROWS)
    )
    assert done.returncode == 2
    error = json.loads(done.stdout)["error"]
    assert error["code"] == "USAGE" and error["message"].startswith("--country: must be")


def test_help_lists_the_filter_options(tmp_path: Path) -> None:
    done = run_cli("search", "--help", env=fake_ddgs_env(tmp_path, ROWS))
    assert done.returncode == 0
    for option in (
        "--recency day|week|month|year",
        "--site DOMAIN",
        "--exclude-site DOMAIN",
        "--country CODE",
        "--language CODE",
    ):
        assert option in done.stdout
