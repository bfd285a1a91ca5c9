"""webreach: give any language model the web.

The stable public surface: :mod:`webreach.seam` (the provider-neutral contract),
:mod:`webreach.tools` (model-facing tools) and
:mod:`webreach.config` (settings and a ready runtime).
"""

__version__ = "0.1.0"
