"""The usage errors of the command line, as typer raises them.

typer 0.29 carries its own copy of click (``typer._click``) and exports only some of its errors
(``typer.Abort``, ``typer.BadParameter``); the ones :func:`webreach.cli.main` words itself come
from that copy, so this is the one module that reaches inside typer. pyproject pins
``typer<0.30``, and tests/cli/test_cli_click_errors.py checks these are the classes typer raises.
"""

from __future__ import annotations

from typer._click.exceptions import ClickException, NoArgsIsHelpError, UsageError

__all__ = ["ClickException", "NoArgsIsHelpError", "UsageError"]
