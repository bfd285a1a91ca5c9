"""Where the repository's files are, named once, so a test reads them whatever folder it sits in."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent
"""The tests folder: conftest, the helper modules, fixture files and the npm packages."""

ROOT = TESTS.parent
"""The repository: pyproject.toml, docs, bench, deploy."""
