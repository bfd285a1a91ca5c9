"""The manual in docs/ builds without a warning (``mkdocs build --strict``: every link and anchor
found, every page in the nav), and its generated reference pages name every setting and every
error code the code declares, so they cannot fall behind it."""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from repo_paths import ROOT
from webreach.config import all_settings
from webreach.seam import WebErrorCode

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("mkdocs", reason="the docs extra: pip install -e '.[docs]'")
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert done.returncode == 0, done.stderr
    return out


def page_text(site: Path, page: str) -> str:
    """A built page's text, tags removed, so a table cell reads as its words."""
    return html.unescape(re.sub(r"<[^>]+>", "", (site / page / "index.html").read_text()))


def test_the_settings_page_lists_every_setting(site: Path) -> None:
    text = page_text(site, "reference/settings")
    missing = [s.variable for s in all_settings() if s.variable not in text]
    assert not missing, missing
    assert "WEBREACH_SIGNING_KEY_FILE" in text  # a secret's file variable beside it


def test_the_errors_page_lists_every_code(site: Path) -> None:
    text = page_text(site, "reference/errors")
    missing = [code.value for code in WebErrorCode if code.value not in text]
    assert not missing, missing


def test_the_api_pages_are_rendered_from_the_docstrings(site: Path) -> None:
    assert "WebRuntime" in page_text(site, "reference/api/seam")
    assert "WebToolkit" in page_text(site, "reference/api/tools")
    assert "ScriptedSearch" in page_text(site, "reference/api/testing")
