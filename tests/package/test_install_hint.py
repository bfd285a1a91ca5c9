"""The missing-extra hint names the pip command that works for this installation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from webreach.install_hint import command_for

CHECKOUT = Path("/home/me/webreach")


def recorded(url: str, *, editable: bool) -> str:
    return json.dumps({"url": url, "dir_info": {"editable": editable}})


@pytest.mark.parametrize(
    ("direct_url", "cwd", "expected"),
    [
        (None, Path("/tmp"), 'pip install "webreach[server]"'),
        (
            json.dumps({"url": "https://files.example/webreach-0.1.whl", "archive_info": {}}),
            Path("/tmp"),
            'pip install "webreach[server]"',
        ),
        (
            recorded("file:///home/me/webreach", editable=True),
            CHECKOUT,
            "pip install -e '.[server]'",
        ),
        (
            recorded("file:///home/me/webreach", editable=True),
            Path("/tmp"),
            "pip install -e '/home/me/webreach[server]'",
        ),
        (recorded("file:///home/me/webreach", editable=False), CHECKOUT, "pip install '.[server]'"),
        (
            recorded("file:///home/me/my%20repo", editable=False),
            Path("/tmp"),
            "pip install '/home/me/my repo[server]'",
        ),
        ("not json", Path("/tmp"), 'pip install "webreach[server]"'),
    ],
)
def test_the_command_fits_how_webreach_was_installed(
    direct_url: str | None, cwd: Path, expected: str
) -> None:
    assert command_for("server", direct_url, source=None, cwd=cwd) == expected


def test_code_run_from_a_checkout_without_an_install_points_at_the_checkout() -> None:
    hint = command_for("mcp", None, source=CHECKOUT, cwd=CHECKOUT)
    assert hint == "pip install -e '.[mcp]'"


def test_an_index_install_ignores_the_source_tree() -> None:
    index = json.dumps({"url": "https://files.example/webreach.whl", "archive_info": {}})
    assert command_for("mcp", index, source=CHECKOUT, cwd=CHECKOUT) == 'pip install "webreach[mcp]"'
