"""The ``webreach`` command line.

Each command lives in its own module and adds itself to :data:`app`; heavy modules load inside
the commands, so ``webreach --help`` answers at once.
"""

from __future__ import annotations

from . import servers, show_config, web
from .app import app

__all__ = ["app", "main"]

_COMMANDS = (web, show_config, servers)  # imported for the commands they add to the app


def main() -> None:
    app(prog_name="webreach")
