"""The pip command that adds an extra the way webreach itself was installed.

``pip install "webreach[server]"`` only works once the package is on an index; installed from a
checkout (``pip install -e .``) the same extra is ``pip install -e ".[server]"`` there. pip records
which in the distribution's ``direct_url.json`` (PEP 610).
"""

from __future__ import annotations

import json
import os
import shlex
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlsplit

__all__ = ["install_command"]


def install_command(extra: str) -> str:
    """The command for this installation, run from the current directory."""
    try:
        recorded = metadata.distribution("webreach").read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        recorded = None
    return command_for(extra, recorded, source=_source_checkout(), cwd=Path.cwd())


def command_for(extra: str, direct_url: str | None, *, source: Path | None, cwd: Path) -> str:
    """From the index when pip recorded no local directory; else from that directory
    (``-e`` when it was editable); else from the checkout the code runs from, if any."""
    checkout, editable = _recorded_directory(direct_url)
    if checkout is None and direct_url is None and source is not None:
        checkout, editable = source, True
    if checkout is None:
        return f'pip install "webreach[{extra}]"'
    where = "." if checkout == cwd else os.fspath(checkout)
    flag = "-e " if editable else ""
    return f"pip install {flag}{shlex.quote(f'{where}[{extra}]')}"


def _recorded_directory(direct_url: str | None) -> tuple[Path | None, bool]:
    if not direct_url:
        return None, False
    try:
        data = json.loads(direct_url)
    except ValueError:
        return None, False
    url = data.get("url") if isinstance(data, dict) else None
    info = data.get("dir_info") if isinstance(data, dict) else None
    if not isinstance(url, str) or not isinstance(info, dict):
        return None, False
    parts = urlsplit(url)
    if parts.scheme != "file":
        return None, False
    return Path(unquote(parts.path)), bool(info.get("editable"))


def _source_checkout() -> Path | None:
    """The checkout whose ``src/`` this code runs from (``PYTHONPATH=src``), if it is one."""
    root = Path(__file__).resolve().parents[2]
    return (
        root
        if (root / "pyproject.toml").is_file() and (root / "src" / "webreach").is_dir()
        else None
    )
