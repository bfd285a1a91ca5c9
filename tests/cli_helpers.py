"""Run the real ``webreach`` command in a subprocess with a clean, offline environment."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

FAKE_DDGS = Path(__file__).parent / "fake_ddgs"
OWN_PREFIXES = (
    # every variable webreach reads, cleared so tests never see the machine's real keys
    "WEBREACH_",
    "FAKE_DDGS_",
    "DUCKDUCKGO_",
    "EXA_",
    "PERPLEXITY_",
    "DEEPSEEK_",
    "BRAVE_",
    "TAVILY_",
    "SEARXNG_",
    "JINA_",
    "KAGI_",
    "SERPAPI_",
    "GOOGLE_VISION_",
    "ANTHROPIC_",
    "OPENAI_",
    "GEMINI_",
    "GOOGLE_API_KEY",
    "ZAI_",
    "KIMI_",
    "MOONSHOT_",
    "PARALLEL_",
    "SYNTHETIC_",
)


def only_settings(monkeypatch: pytest.MonkeyPatch, settings: dict[str, str]) -> None:
    """This process's environment with none of webreach's own variables but ``settings``, for a
    test that builds a runtime from the environment."""
    for name in list(os.environ):
        if name.startswith("WEBREACH_"):
            monkeypatch.delenv(name)
    for name, value in settings.items():
        monkeypatch.setenv(name, value)


def clean_env(*, snippets_only: bool = True, **extra: str) -> dict[str, str]:
    """The environment of a command under test: none of the machine's own settings, and (unless
    ``snippets_only`` is off) searches that read snippets only, so no command reaches for a
    replayed source's real page (a test that wants passages says so, or serves the pages)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(OWN_PREFIXES)}
    if snippets_only:
        env["WEBREACH_SEARCH_CONTEXT_SIZE"] = "low"
    env.update(extra)
    return env


def run_cli(*args: str, env: dict[str, str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "webreach", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        **kwargs,
    )


def fake_ddgs_env(tmp_path: Path, rows: dict[str, Any], **extra: str) -> dict[str, str]:
    """An environment in which ``ddgs`` is the offline stand-in serving ``rows``."""
    table = tmp_path / "ddgs_rows.json"
    table.write_text(json.dumps(rows))
    return clean_env(
        PYTHONPATH=os.pathsep.join([str(FAKE_DDGS), os.environ.get("PYTHONPATH", "")]),
        FAKE_DDGS_ROWS=str(table),
        FAKE_DDGS_LOG=str(tmp_path / "ddgs_calls.jsonl"),
        **extra,
    )


def ddgs_calls(tmp_path: Path) -> list[dict[str, Any]]:
    log = tmp_path / "ddgs_calls.jsonl"
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]
