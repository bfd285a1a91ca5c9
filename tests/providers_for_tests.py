"""Small in-process providers that implement the seam's protocols, for tests and benchmarks.

They ship with the package as :mod:`webreach.testing`; this module keeps the tests' imports.
"""

from __future__ import annotations

from webreach.testing import ScriptedFetch, ScriptedImageSearch, ScriptedSearch, sources

__all__ = ["ScriptedFetch", "ScriptedImageSearch", "ScriptedSearch", "sources"]
