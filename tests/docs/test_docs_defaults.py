"""The defaults the README and the manual state in prose are the code's: a default changed in
its declaration and not in a page that names it fails here.

The settings reference is generated from the declarations; this reads the other pages, where a
default is written beside its variable: ```WEBREACH_X` (3 s)``, ``(default 8)``,
```WEBREACH_X`, default `info```, ```WEBREACH_X` seconds (60)``.
"""

from __future__ import annotations

import re

import pytest

from repo_paths import ROOT
from webreach.settings import Settings

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
STATED = re.compile(
    r"`WEBREACH_(?P<name>[A-Z0-9_]+)`[^`().;|]{0,30}?"
    r"(?:\(default:? `?(?P<text>[^`),;]*[^`),;\d][^`),;]*)`?"
    r"|\(default:? (?P<number>\d[\d,_]*(?:\.\d+)?)"
    r"|, default `(?P<quoted>[^`]+)`"
    r"|\((?P<leading>\d[\d,_]*(?:\.\d+)?)[ ,)])"
)


def stated_defaults() -> list[tuple[str, str, str]]:
    """``(page, setting, stated)`` for every default a page writes beside a setting that has
    one (a setting whose default is None is worked out at start, and its number is not one)."""
    found = []
    for page in PAGES:
        text = " ".join(page.read_text().split())
        for match in STATED.finditer(text):
            name = match["name"].lower()
            field = Settings.model_fields.get(name)
            if field is None or field.default is None:
                continue
            stated = match["text"] or match["number"] or match["quoted"] or match["leading"]
            stated = stated.rstrip(",")
            found.append((str(page.relative_to(ROOT)), name, stated))
    return found


def test_the_pages_state_defaults_at_all() -> None:
    """The pattern still finds what the pages write (it found 19 when it was written)."""
    assert len(stated_defaults()) >= 15


@pytest.mark.parametrize(("page", "setting", "stated"), stated_defaults())
def test_a_stated_default_is_the_codes(page: str, setting: str, stated: str) -> None:
    default = Settings.model_fields[setting].default
    if isinstance(default, int | float) and not isinstance(default, bool):
        assert float(stated.replace(",", "").replace("_", "")) == default, (page, setting)
    else:
        assert stated == str(default), (page, setting)
