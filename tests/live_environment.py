"""The environment as the session began: the live smoke tests read real keys from it.

Taken when the test modules are collected, before any test runs, so conftest's per-test
cleaning of webreach's own variables never reaches it.
"""

from __future__ import annotations

import os

LIVE_ENVIRONMENT = dict(os.environ)
